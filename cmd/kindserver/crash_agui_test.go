package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/kindkit/kindkit/store/storetest"
)

// An AG-UI interrupt is a park: it survives kill -9 of the process that
// raised it. On SQLite the restarted process takes the resume; on
// PostgreSQL the resume goes to the other processes, two of them at once,
// and the turn resumes once. Either way the thread then holds one reply
// and one result of the card's call.
func TestCrashAGUI(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		dsn := stores(t)["sqlite"](t)
		a := start(t, dsn)
		thread, id := aguiInterrupt(t, aguiURL(a))
		a.kill9(t)
		b := start(t, dsn)
		evs := aguiRun(t, aguiURL(b), aguiInput(thread, "", aguiResume(id)))
		if aguiEnd(evs) != "success" || aguiCount(evs, "TOOL_CALL_RESULT") != 1 {
			t.Fatalf("the resume after kill -9: %v", aguiTypes(evs))
		}
		aguiOnce(t, aguiURL(b), thread)
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := limitPool(storetest.PostgresDB(t))
		a, b, c := start(t, dsn), start(t, dsn), start(t, dsn)
		// The first round kills the process that raised the interrupt;
		// the later ones raise it on a process that lives on, whose
		// events of the raise reach the resuming processes late, through
		// the relay: a run that took them for its own ended with the
		// interrupt it had just answered (1 run in 3 under load).
		const rounds = 3
		for round := range rounds {
			thread, id := aguiInterrupt(t, aguiURL(a))
			if round == 0 {
				a.kill9(t) // the later rounds raise on a process that lives on
				a = start(t, dsn)
			}
			var wg sync.WaitGroup
			runs := make([][]map[string]any, 2)
			for i, p := range []*proc{b, c} {
				wg.Go(func() { runs[i] = aguiRun(t, aguiURL(p), aguiInput(thread, "", aguiResume(id))) })
			}
			wg.Wait()
			resumed := 0
			for _, evs := range runs {
				if aguiEnd(evs) != "success" {
					t.Fatalf("round %d: a resume ended %v", round, aguiTypes(evs))
				}
				resumed += aguiCount(evs, "TOOL_CALL_RESULT")
			}
			if resumed != 1 {
				t.Fatalf("round %d: the turn resumed %d times, want once", round, resumed)
			}
			aguiOnce(t, aguiURL(a), thread)
		}
	})
}

// aguiInterrupt runs a new thread's first message up to its interrupt.
func aguiInterrupt(t *testing.T, url string) (thread, interruptID string) {
	t.Helper()
	thread = uuid.NewString()
	evs := aguiRun(t, url, aguiInput(thread, "Compare your plans"))
	last := evs[len(evs)-1]
	o, _ := last["outcome"].(map[string]any)
	list, _ := o["interrupts"].([]any)
	if last["type"] != "RUN_FINISHED" || len(list) != 1 {
		t.Fatalf("the first run ended %v", last)
	}
	return thread, list[0].(map[string]any)["id"].(string)
}

// aguiOnce checks the thread as stored, through a run that sends
// nothing: one result of the card's call, one reply.
func aguiOnce(t *testing.T, url, thread string) {
	t.Helper()
	evs := aguiRun(t, url, aguiInput(thread, ""))
	var snap []any
	for _, e := range evs {
		if e["type"] == "MESSAGES_SNAPSHOT" {
			snap, _ = e["messages"].([]any)
		}
	}
	results, replies := 0, 0
	for _, m := range snap {
		m := m.(map[string]any)
		switch {
		case m["role"] == "tool" && m["toolCallId"] == raiseCallID:
			results++
		case m["role"] == "assistant" && m["content"] == replyText:
			replies++
		}
	}
	if results != 1 || replies != 1 || aguiEnd(evs) != "success" {
		b, _ := json.Marshal(snap)
		t.Fatalf("the thread holds %d results of the card's call and %d replies, want one each: %s", results, replies, b)
	}
}

func aguiInput(thread, text string, resume ...map[string]any) string {
	in := map[string]any{"threadId": thread, "runId": uuid.NewString(), "messages": []any{}}
	if text != "" {
		in["messages"] = []any{map[string]any{"id": uuid.NewString(), "role": "user", "content": text}}
	}
	if len(resume) > 0 {
		in["resume"] = resume
	}
	b, _ := json.Marshal(in)
	return string(b)
}

func aguiResume(id string) map[string]any {
	return map[string]any{"interruptId": id, "status": "resolved", "payload": map[string]any{"answers": []any{map[string]any{"header": "Plan", "options": []any{"Pro"}}}}}
}

// aguiRun POSTs a RunAgentInput and reads the run's events to its end.
func aguiRun(t *testing.T, url, input string) []map[string]any {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(input))
	if err != nil {
		t.Error(err)
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("POST %s: %s", url, resp.Status)
		return nil
	}
	var evs []map[string]any
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var ev map[string]any
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				t.Errorf("event %q: %v", data, err)
			}
			evs = append(evs, ev)
		}
	}
	return evs
}

func aguiTypes(evs []map[string]any) []any {
	out := make([]any, len(evs))
	for i, e := range evs {
		out[i] = e["type"]
	}
	return out
}

func aguiCount(evs []map[string]any, typ string) int {
	n := 0
	for _, e := range evs {
		if e["type"] == typ {
			n++
		}
	}
	return n
}

// aguiEnd is how a run ended: its outcome's type, or RUN_ERROR's code.
func aguiEnd(evs []map[string]any) string {
	if len(evs) == 0 {
		return "no events"
	}
	last := evs[len(evs)-1]
	if o, ok := last["outcome"].(map[string]any); ok && last["type"] == "RUN_FINISHED" {
		return o["type"].(string)
	}
	code, _ := last["code"].(string)
	return "RUN_ERROR " + code
}
