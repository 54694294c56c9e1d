package agui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"
	"go.uber.org/goleak"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/agui"
	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/server"
	"github.com/kindkit/kindkit/store/dsn"
	"github.com/kindkit/kindkit/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	raise  = `{"questions":[{"question":"Which plan?","header":"Plan","options":["Basic","Pro"]}],"reason":"to quote"}`
	answer = `{"answers":[{"header":"Plan","options":["Pro"]}]}`
)

// cardScript raises a choices card, then replies.
func cardScript() []agent.ScriptEntry {
	return []agent.ScriptEntry{{Kind: "toolCall", Name: "request_choices", Arguments: raise}, {Kind: "text", Text: "Pro it is."}}
}

type setup struct {
	catalog *kindkit.Catalog // default kinds.All
	script  []agent.ScriptEntry
	tools   []agent.HostTool
	confirm func(tool string) agent.Decision
	clock   clockwork.Clock
	opts    agui.Options
}

type proc struct {
	url string // the handler's, under /agui
	eng *agent.Engine
}

// start runs an engine on the store dsn names and the handler under
// /agui on a real port.
func start(t *testing.T, storeDSN string, s setup) *proc {
	t.Helper()
	ctx := context.Background()
	st, closeStore, err := dsn.Open(ctx, storeDSN, nil)
	if err != nil {
		t.Fatal(err)
	}
	catalog := s.catalog
	if catalog == nil {
		if catalog, err = kinds.All(); err != nil {
			t.Fatal(err)
		}
	}
	model, err := agent.NewScripted(s.script)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := agent.NewEngine(agent.Config{Catalog: catalog, Store: st, Model: model, Tools: s.tools, Confirm: s.confirm,
		Clock: s.clock, KeepParksOnDrain: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	h := agui.New(eng, s.opts)
	mux := http.NewServeMux()
	mux.Handle("/agui/", http.StripPrefix("/agui", h))
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		h.Shutdown(sctx)
		srv.CloseClientConnections()
		srv.Close()
		eng.Shutdown(sctx)
		eng.Close()
		closeStore()
	})
	return &proc{url: srv.URL + "/agui/", eng: eng}
}

func sqlite(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "agui.db") }

// event is one AG-UI event as it came.
type event map[string]any

func (e event) typ() string { s, _ := e["type"].(string); return s }

// post runs input and returns its events (nil, with the status, when the
// answer is no stream).
func post(t *testing.T, url, input string, header ...string) ([]event, int) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, resp.Body)
		return nil, resp.StatusCode
	}
	var out []event
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev event
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		out = append(out, ev)
	}
	return out, resp.StatusCode
}

// types are the events' types, a run of TEXT_MESSAGE_CONTENT as one.
func types(evs []event) []string {
	var out []string
	for _, e := range evs {
		if e.typ() == "TEXT_MESSAGE_CONTENT" && len(out) > 0 && out[len(out)-1] == "TEXT_MESSAGE_CONTENT" {
			continue
		}
		out = append(out, e.typ())
	}
	return out
}

func last(t *testing.T, evs []event) event {
	t.Helper()
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	return evs[len(evs)-1]
}

// input is a RunAgentInput.
func input(thread string, messages []map[string]any, resume ...map[string]any) string {
	in := map[string]any{"threadId": thread, "runId": uuid.NewString(), "messages": messages, "tools": []any{}, "context": []any{}}
	if len(resume) > 0 {
		in["resume"] = resume
	}
	b, _ := json.Marshal(in)
	return string(b)
}

func user(text string) map[string]any {
	return map[string]any{"id": uuid.NewString(), "role": "user", "content": text}
}

func resolved(id, payload string) map[string]any {
	return map[string]any{"interruptId": id, "status": "resolved", "payload": json.RawMessage(payload)}
}

func cancelled(id string) map[string]any {
	return map[string]any{"interruptId": id, "status": "cancelled"}
}

// interruptOf is the one interrupt a run ended with.
func interruptOf(t *testing.T, evs []event) map[string]any {
	t.Helper()
	end := last(t, evs)
	o, _ := end["outcome"].(map[string]any)
	if end.typ() != "RUN_FINISHED" || o["type"] != "interrupt" {
		t.Fatalf("the run ended with %v, want an interrupt", end)
	}
	list, _ := o["interrupts"].([]any)
	if len(list) != 1 {
		t.Fatalf("interrupts %v, want one", list)
	}
	return list[0].(map[string]any)
}

func wantError(t *testing.T, evs []event, code string) event {
	t.Helper()
	end := last(t, evs)
	if end.typ() != "RUN_ERROR" || end["code"] != code {
		t.Fatalf("the run ended with %v, want RUN_ERROR %s", end, code)
	}
	return end
}

func wantSuccess(t *testing.T, evs []event) {
	t.Helper()
	end := last(t, evs)
	if o, _ := end["outcome"].(map[string]any); end.typ() != "RUN_FINISHED" || o["type"] != "success" {
		t.Fatalf("the run ended with %v, want success", end)
	}
}

// snapshotTexts are the assistant texts of a run's MESSAGES_SNAPSHOT.
func snapshotTexts(evs []event) []string {
	var out []string
	for _, e := range evs {
		if e.typ() != "MESSAGES_SNAPSHOT" {
			continue
		}
		out = nil
		for _, m := range e["messages"].([]any) {
			m := m.(map[string]any)
			if c, _ := m["content"].(string); m["role"] == "assistant" && c != "" {
				out = append(out, c)
			}
		}
	}
	return out
}

// The whole card cycle on both stores: the message, the interrupt (a
// kind's card: input_required, its values schema, its kind and spec), an
// invalid resume that leaves it open, the resume, the reply.
func TestCardCycle(t *testing.T) {
	for name, storeDSN := range map[string]func(*testing.T) string{"sqlite": sqlite, "postgres": func(t *testing.T) string { return storetest.PostgresDB(t) }} {
		t.Run(name, func(t *testing.T) {
			p := start(t, storeDSN(t), setup{script: cardScript()})
			thread := uuid.NewString()
			evs, _ := post(t, p.url, input(thread, []map[string]any{user("Compare your plans")}))
			if got, want := types(evs), []string{"RUN_STARTED", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "MESSAGES_SNAPSHOT", "RUN_FINISHED"}; !slices.Equal(got, want) {
				t.Fatalf("first run %v, want %v", got, want)
			}
			in := interruptOf(t, evs)
			meta, _ := in["metadata"].(map[string]any)
			schema, _ := in["responseSchema"].(map[string]any)
			if in["reason"] != "input_required" || in["message"] != "to quote" || in["toolCallId"] != evs[1]["toolCallId"] ||
				meta["kind"] != "choices" || meta["spec"] == nil || schema["type"] != "object" || in["expiresAt"] == nil {
				t.Fatalf("interrupt %v", in)
			}
			id := in["id"].(string)

			evs, _ = post(t, p.url, input(thread, nil, resolved(id, strings.Replace(answer, "Pro", "Gold", 1))))
			bad := wantError(t, evs, "resume_invalid")
			if errs, _ := bad["metadata"].(map[string]any)["errors"].([]any); len(errs) == 0 {
				t.Fatalf("no field errors: %v", bad)
			}

			evs, _ = post(t, p.url, input(thread, nil, resolved(id, answer)))
			if got, want := types(evs), []string{"RUN_STARTED", "TOOL_CALL_RESULT", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "MESSAGES_SNAPSHOT", "RUN_FINISHED"}; !slices.Equal(got, want) {
				t.Fatalf("resumed run %v, want %v", got, want)
			}
			if evs[1]["toolCallId"] != in["toolCallId"] || !strings.Contains(evs[1]["content"].(string), `"submitted"`) {
				t.Fatalf("tool result %v", evs[1])
			}
			wantSuccess(t, evs)
			if got := snapshotTexts(evs); !slices.Equal(got, []string{"Pro it is."}) {
				t.Fatalf("snapshot texts %v", got)
			}
		})
	}
}

// A new input while the interrupt is open is refused, naming it; the
// interrupt is then still open and answerable.
func TestInputWhileInterruptOpen(t *testing.T) {
	p := start(t, sqlite(t), setup{script: cardScript()})
	thread := uuid.NewString()
	in := interruptOf(t, first(t, p.url, thread))
	evs, _ := post(t, p.url, input(thread, []map[string]any{user("hello?")}))
	e := wantError(t, evs, "interrupt_open")
	open, _ := e["metadata"].(map[string]any)["interrupts"].([]any)
	if len(open) != 1 || open[0].(map[string]any)["id"] != in["id"] {
		t.Fatalf("RUN_ERROR names %v, want %v", open, in["id"])
	}
	evs, _ = post(t, p.url, input(thread, nil))
	wantError(t, evs, "interrupt_open") // no resume at all: the same
	evs, _ = post(t, p.url, input(thread, nil, resolved(in["id"].(string), answer)))
	wantSuccess(t, evs)
}

func first(t *testing.T, url, thread string) []event {
	t.Helper()
	evs, _ := post(t, url, input(thread, []map[string]any{user("Compare your plans")}))
	return evs
}

// A cancelled interrupt declines the card: the turn resumes with the
// decline.
func TestCancelledInterrupt(t *testing.T) {
	p := start(t, sqlite(t), setup{script: cardScript()})
	thread := uuid.NewString()
	in := interruptOf(t, first(t, p.url, thread))
	evs, _ := post(t, p.url, input(thread, nil, cancelled(in["id"].(string))))
	wantSuccess(t, evs)
	if evs[1].typ() != "TOOL_CALL_RESULT" || !strings.Contains(evs[1]["content"].(string), `"declined"`) {
		t.Fatalf("tool result %v", evs[1])
	}
}

// The same resume twice: the turn resumes once; the second run reports
// the thread as stored, with no error. A different answer to the ended
// interrupt is refused.
func TestResumeTwice(t *testing.T) {
	p := start(t, sqlite(t), setup{script: cardScript()})
	thread := uuid.NewString()
	id := interruptOf(t, first(t, p.url, thread))["id"].(string)
	once, _ := post(t, p.url, input(thread, nil, resolved(id, answer)))
	wantSuccess(t, once)
	again, _ := post(t, p.url, input(thread, nil, resolved(id, answer)))
	if got, want := types(again), []string{"RUN_STARTED", "MESSAGES_SNAPSHOT", "RUN_FINISHED"}; !slices.Equal(got, want) {
		t.Fatalf("replay %v, want %v", got, want)
	}
	wantSuccess(t, again)
	if got := snapshotTexts(again); !slices.Equal(got, []string{"Pro it is."}) {
		t.Fatalf("replay's snapshot texts %v: the turn ran twice?", got)
	}
	evs, _ := post(t, p.url, input(thread, nil, resolved(id, strings.Replace(answer, "Pro", "Basic", 1))))
	wantError(t, evs, "interrupt_ended")
	evs, _ = post(t, p.url, input(thread, nil, cancelled(id)))
	wantError(t, evs, "interrupt_ended")
	evs, _ = post(t, p.url, input(thread, nil, cancelled(uuid.NewString())))
	wantError(t, evs, "resume_unknown")
}

// A resume after the interrupt's expiresAt is refused while its
// deadline's sweep has not run; after it, the interrupt ended expired.
func TestExpiredInterrupt(t *testing.T) {
	clock := clockwork.NewFakeClock()
	p := start(t, sqlite(t), setup{script: cardScript(), clock: clock})
	thread := uuid.NewString()
	in := interruptOf(t, first(t, p.url, thread))
	deadline, err := time.Parse(time.RFC3339, in["expiresAt"].(string))
	if err != nil || !deadline.After(clock.Now()) {
		t.Fatalf("expiresAt %v (%v)", in["expiresAt"], err)
	}
	// expiresAt is in milliseconds: a millisecond more is past the
	// deadline. The engine's sweep may or may not have run by the resume:
	// either way the resume comes too late.
	clock.Advance(deadline.Sub(clock.Now()) + time.Millisecond)
	evs, _ := post(t, p.url, input(thread, nil, resolved(in["id"].(string), answer)))
	wantError(t, evs, "interrupt_expired")
}

// A write confirmation is an interrupt bound to its tool call: approved,
// the tool runs; denied, it does not. Edited arguments are refused.
func TestConfirmation(t *testing.T) {
	for _, approved := range []bool{true, false} {
		t.Run(map[bool]string{true: "approve", false: "deny"}[approved], func(t *testing.T) {
			var ran atomic.Bool // set on the engine's goroutine
			tool, err := agent.NewTool("delete_record", "Deletes a record.", func(ctx context.Context, args struct {
				ID int `json:"id"`
			}) (any, error) {
				ran.Store(true)
				return "deleted", nil
			})
			if err != nil {
				t.Fatal(err)
			}
			p := start(t, sqlite(t), setup{script: []agent.ScriptEntry{{Kind: "toolCall", Name: "delete_record", Arguments: `{"id":42}`}, {Kind: "text", Text: "Done."}},
				tools: []agent.HostTool{tool}, confirm: agent.ConfirmMatching(agent.Approve|agent.Reject, "delete")})
			thread := uuid.NewString()
			evs, _ := post(t, p.url, input(thread, []map[string]any{user("delete 42")}))
			in := interruptOf(t, evs)
			if in["reason"] != "tool_call" || in["toolCallId"] == "" || in["metadata"].(map[string]any)["tool"] != "delete_record" {
				t.Fatalf("interrupt %v", in)
			}
			id := in["id"].(string)
			evs, _ = post(t, p.url, input(thread, nil, resolved(id, `{"approved":true,"editedArgs":{"id":43}}`)))
			wantError(t, evs, "resume_invalid")
			payload := `{"approved":false}`
			if approved {
				payload = `{"approved":true}`
			}
			evs, _ = post(t, p.url, input(thread, nil, resolved(id, payload)))
			wantSuccess(t, evs)
			if ran.Load() != approved {
				t.Fatalf("the tool ran: %v, want %v", ran.Load(), approved)
			}
		})
	}
}

// The handler's bounds: a body over MaxBodyBytes, a browser page from
// another origin, a malformed input.
func TestBounds(t *testing.T) {
	p := start(t, sqlite(t), setup{script: cardScript(), opts: agui.Options{MaxBodyBytes: 4096, AllowedOrigins: []string{"allowed.example"}}})
	if _, status := post(t, p.url, input(uuid.NewString(), []map[string]any{user(strings.Repeat("x", 5000))})); status != http.StatusRequestEntityTooLarge {
		t.Errorf("a large body: %d, want 413", status)
	}
	small := input(uuid.NewString(), []map[string]any{user("hi")})
	if _, status := post(t, p.url, small, "Origin", "https://evil.example"); status != http.StatusForbidden {
		t.Errorf("another origin: %d, want 403", status)
	}
	if _, status := post(t, p.url, small, "Origin", "https://allowed.example"); status != http.StatusOK {
		t.Errorf("an allowed origin: %d, want 200", status)
	}
	if _, status := post(t, p.url, `{"threadId":"t","messages":[]}`); status != http.StatusBadRequest {
		t.Errorf("no runId: %d, want 400", status)
	}
}

// With auth, a thread is its principal's: another principal's run on the
// same threadId is a thread of its own, and does not see the interrupt.
func TestThreadsByPrincipal(t *testing.T) {
	secret := []byte("test-secret")
	p := start(t, sqlite(t), setup{script: cardScript(), opts: agui.Options{AuthSecret: secret}})
	token := func(sub string) string {
		return "Bearer " + server.SignToken(secret, server.Principal{Sub: sub}, time.Now().Add(time.Hour))
	}
	thread := uuid.NewString()
	evs, _ := post(t, p.url, input(thread, []map[string]any{user("Compare your plans")}), "Authorization", token("alice"))
	interruptOf(t, evs)
	evs, _ = post(t, p.url, input(thread, nil), "Authorization", token("bob"))
	wantSuccess(t, evs) // bob's thread is empty, with nothing open
	evs, _ = post(t, p.url, input(thread, nil), "Authorization", token("alice"))
	wantError(t, evs, "interrupt_open")
}

// pollKind is a poll kind whose answer is one property, named as in
// values: version 1 names it choice, version 2 pick.
func pollKind(t *testing.T, values string) kindkit.Kind {
	t.Helper()
	spec := `{"type":"object","required":["question"],"properties":{"question":{"type":"string"}}}`
	vals := `{"type":"object","required":["` + values + `"],"additionalProperties":false,"properties":{"` + values + `":{"type":"string"}}}`
	k, err := kindkit.NewKind[map[string]any, map[string]any](kindkit.Descriptor{Name: "poll", Capability: "poll_card", ToolName: "request_poll",
		Schema: `{"$defs":{"Spec":` + spec + `,"Values":` + vals + `}}`, ValuesSchema: vals}, kindkit.Unimplemented[map[string]any, map[string]any]{})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// An interrupt raised before a deploy that changed its kind is shown by
// the next deploy with the response schema it was asked with, when that
// deploy keeps the version that asked it, and answered as asked.
func TestInterruptAcrossADeploy(t *testing.T) {
	script := []agent.ScriptEntry{{Kind: "toolCall", Name: "request_poll", Arguments: `{"question":"Lunch?"}`}, {Kind: "text", Text: "Noted."}}
	v1 := pollKind(t, "choice")
	first, err := kindkit.NewCatalog(v1)
	if err != nil {
		t.Fatal(err)
	}
	next, err := kindkit.NewCatalog(pollKind(t, "pick"))
	if err == nil {
		next, err = next.KeepEarlier(v1)
	}
	if err != nil {
		t.Fatal(err)
	}
	db := sqlite(t)
	before := start(t, db, setup{catalog: first, script: script})
	thread := uuid.NewString()
	in := interruptOf(t, post1(t, before.url, thread))
	after := start(t, db, setup{catalog: next, script: script})
	evs, _ := post(t, after.url, input(thread, []map[string]any{user("hello?")}))
	open, _ := wantError(t, evs, "interrupt_open")["metadata"].(map[string]any)["interrupts"].([]any)
	if len(open) != 1 || open[0].(map[string]any)["id"] != in["id"] {
		t.Fatalf("open interrupts %v, want %v", open, in["id"])
	}
	schema, _ := open[0].(map[string]any)["responseSchema"].(map[string]any)
	if req, _ := schema["required"].([]any); len(req) != 1 || req[0] != "choice" {
		t.Errorf("the next deploy shows the response schema %v, want version 1's, which asked it", schema)
	}
	evs, _ = post(t, after.url, input(thread, nil, resolved(in["id"].(string), `{"choice":"soup"}`)))
	wantSuccess(t, evs)
}

func post1(t *testing.T, url, thread string) []event {
	t.Helper()
	evs, _ := post(t, url, input(thread, []map[string]any{user("lunch")}))
	return evs
}
