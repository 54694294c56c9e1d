package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kindkit/kindkit/internal/mcptest"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/internal/syncbuf"
	"github.com/kindkit/kindkit/internal/wstest"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/sqlstore"
	"github.com/kindkit/kindkit/store/storetest"
)

// These tests run real kindserver processes on real ports against real
// stores: a park must survive its socket, a kill -9 and a second process.

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func kindserverBinary(t *testing.T) string { return servertest.KindserverBinary(t, ".") }

// script is the scripted model of every test: a choices card, then a reply.
const script = `[
 {"kind":"toolCall","name":"request_choices","arguments":"{\"questions\":[{\"question\":\"Which plan?\",\"header\":\"Plan\",\"options\":[\"Basic\",\"Pro\"]}],\"reason\":\"to quote\"}"},
 {"kind":"text","text":"Pro it is."}
]`

type proc struct {
	cmd *exec.Cmd
	url string
	log *syncbuf.Buffer // its stderr
}

// start runs kindserver with the scripted model on store, on a free port.
func start(t *testing.T, store string, extra ...string) *proc {
	t.Helper()
	scriptFile := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(scriptFile, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-addr", "127.0.0.1:0", "-store", store, "-script", scriptFile}, extra...)
	cmd := exec.Command(kindserverBinary(t), args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, log: &syncbuf.Buffer{}}
	cmd.Stderr = p.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("kindserver %s log:\n%s", store, p.log.String())
		}
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "kindkit listening on "); ok {
				rest, _, _ = strings.Cut(rest, " ")
				lines <- rest
			}
		}
		close(lines)
	}()
	select {
	case u, ok := <-lines:
		if !ok {
			t.Fatalf("kindserver exited before listening:\n%s", p.log.String())
		}
		p.url = u
	case <-time.After(20 * time.Second):
		t.Fatalf("kindserver did not start:\n%s", p.log.String())
	}
	return p
}

func (p *proc) kill9(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.cmd.Wait()
}

// stores are the durable stores every test runs on.
func stores(t *testing.T) map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "kindkit.db") },
		"postgres": func(t *testing.T) string { return storetest.PostgresDB(t) },
	}
}

// parkOn opens a conversation with the choices capability and parks a turn.
func parkOn(t *testing.T, url string) (conversationID, interactionID string) {
	t.Helper()
	c := wstest.Dial(t, url)
	c.Send(`{"action":"create_conversation_session","requestId":"r-create","agentId":"a","supports":["choice_chips"]}`)
	ack := c.Expect("immediate_response")[0]
	sid := wstest.Path(ack, "data", "sessionId").(string)
	conversationID = wstest.Path(ack, "data", "conversationId").(string)
	c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"quote"}`)
	evs := c.Expect("immediate_response", "interaction_required", "stream_chunk")
	interactionID = wstest.Path(evs[1], "data", "data", "interactionId").(string)
	c.WS.CloseNow()
	return conversationID, interactionID
}

// resumeAndSubmit reconnects to the conversation, expects the same card,
// submits it and reads the rest of the turn.
func resumeAndSubmit(t *testing.T, url, conversationID, interactionID string) {
	t.Helper()
	c := wstest.Dial(t, url)
	c.Send(`{"action":"create_conversation_session","requestId":"r-resume","agentId":"a","conversationId":"` + conversationID + `"}`)
	ack := c.Expect("immediate_response")[0]
	if wstest.Path(ack, "data", "conversationId") != conversationID {
		t.Fatalf("the conversation was not resumed: %v", ack)
	}
	sid := wstest.Path(ack, "data", "sessionId").(string)
	card := c.Expect("interaction_required")[0]
	if got := wstest.Path(card, "data", "data", "interactionId"); got != interactionID || card["requestId"] != "T" {
		t.Fatalf("card after reconnect: interactionId %v requestId %v, want %s and T", got, card["requestId"], interactionID)
	}
	c.Send(`{"action":"submit_interaction","requestId":"r-submit","sessionId":"` + sid + `","interactionId":"` + interactionID + `","kind":"choices","values":{"answers":[{"header":"Plan","options":["Pro"]}]}}`)
	c.Expect("immediate_response")
	result := c.Expect("stream_chunk")[0]
	if r, _ := wstest.Path(result, "data", "state", "rawResponse", "toolResult", "result").(string); !strings.Contains(r, `"status":"submitted"`) {
		t.Errorf("tool result %q", r)
	}
	text, end := c.Turn()
	if end["type"] != "eventual_response" || end["requestId"] != "T" || text != "Pro it is." {
		t.Fatalf("turn ended with %v and text %q", end, text)
	}
}

func TestParkSurvivesDisconnect(t *testing.T) {
	for name, store := range stores(t) {
		t.Run(name, func(t *testing.T) {
			p := start(t, store(t))
			conv, iid := parkOn(t, p.url)
			resumeAndSubmit(t, p.url, conv, iid)
		})
	}
}

func TestParkSurvivesKill9(t *testing.T) {
	for name, store := range stores(t) {
		t.Run(name, func(t *testing.T) {
			dsn := store(t)
			first := start(t, dsn)
			conv, iid := parkOn(t, first.url)
			first.kill9(t)
			second := start(t, dsn)
			resumeAndSubmit(t, second.url, conv, iid)
		})
	}
}

// Two processes on one PostgreSQL: park on A, resume and submit on B; and
// two submits racing on A and B resume the park exactly once.
func TestTwoProcessesOnePostgres(t *testing.T) {
	dsn := storetest.PostgresDB(t)
	a, b := start(t, dsn), start(t, dsn)
	conv, iid := parkOn(t, a.url)
	resumeAndSubmit(t, b.url, conv, iid)

	for round := range 10 {
		conv, iid := parkOn(t, a.url)
		var clients []*wstest.Client
		var sessions []string
		for _, p := range []*proc{a, b} {
			c := wstest.Dial(t, p.url)
			c.Send(`{"action":"create_conversation_session","requestId":"r","agentId":"a","conversationId":"` + conv + `"}`)
			sessions = append(sessions, wstest.Path(c.Expect("immediate_response")[0], "data", "sessionId").(string))
			c.Expect("interaction_required")
			clients = append(clients, c)
		}
		var wg sync.WaitGroup
		for i, c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.Send(`{"action":"submit_interaction","requestId":"s","sessionId":"` + sessions[i] + `","interactionId":"` + iid + `","values":{"answers":[{"header":"Plan","options":["Basic"]}]}}`)
			}()
		}
		wg.Wait()
		won := 0
		for _, c := range clients {
			// Both sockets follow the resumed turn, on whichever process
			// runs it; the winner's ack comes before its first event.
			ack, _, streamed := c.AnswerAndEnd("s")
			switch {
			case ack["type"] == "immediate_response" && !streamed:
				won++
			case wstest.ErrorCode(ack) == "NO_PENDING_INTERACTION":
			default:
				t.Fatalf("round %d: ack %v (resumed stream before it: %v)", round, ack, streamed)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d submits won, want exactly 1", round, won)
		}
		history(t, a.url, conv, "Pro it is.")
	}
}

// A park whose deadline passes with nobody connected finishes its turn,
// also when the deadline passes while no process is running.
func TestDeadlineWithNobodyConnected(t *testing.T) {
	for name, store := range stores(t) {
		t.Run(name, func(t *testing.T) {
			dsn := store(t)
			p := start(t, dsn, "-park-timeout", "1s")
			conv, _ := parkOn(t, p.url)
			waitForReply(t, p.url, conv)

			conv, _ = parkOn(t, p.url)
			p.kill9(t)
			time.Sleep(1500 * time.Millisecond)
			again := start(t, dsn, "-park-timeout", "1s")
			waitForReply(t, again.url, conv)
		})
	}
}

func waitForReply(t *testing.T, url, conv string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if msgs := messages(t, url, conv); len(msgs) == 2 {
			if got := wstest.Path(msgs[0], "content", "text"); got != "Pro it is." {
				t.Fatalf("reply after the deadline: %v", got)
			}
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatal("the turn never finished")
}

// history checks the conversation's newest message.
func history(t *testing.T, url, conv, newest string) {
	t.Helper()
	msgs := messages(t, url, conv)
	if len(msgs) == 0 || wstest.Path(msgs[0], "content", "text") != newest {
		b, _ := json.Marshal(msgs)
		t.Fatalf("history %s, want newest %q", b, newest)
	}
}

// messages resumes the conversation without the capability... which would
// answer a pending park through the fallback, so it declares it, and reads
// past a re-sent card and past the events of a turn that the park's
// deadline resumes on this very connection meanwhile.
func messages(t *testing.T, url, conv string) []any {
	t.Helper()
	c := wstest.Dial(t, url)
	defer c.WS.CloseNow()
	c.Send(`{"action":"create_conversation_session","requestId":"r","agentId":"a","conversationId":"` + conv + `","supports":["choice_chips"]}`)
	sid := wstest.Path(c.Expect("immediate_response")[0], "data", "sessionId").(string)
	c.Send(`{"action":"get_conversation_messages","requestId":"h","sessionId":"` + sid + `"}`)
	for {
		ev := c.Next()
		if ev["requestId"] != "h" {
			continue // the card, or the resumed turn's events (requestId T)
		}
		if ev["type"] != "immediate_response" {
			t.Fatalf("history: %v", ev)
		}
		msgs, _ := wstest.Path(ev, "data", "messages").([]any)
		return msgs
	}
}

// TestTakeoverByAnotherProcess: A runs the turn a submit resumed (its
// model takes 2s), and is killed mid-turn; B, on the same PostgreSQL and
// never restarted, takes the turn over once A's lease has run out and
// stores exactly one reply.
func TestTakeoverByAnotherProcess(t *testing.T) {
	dsn := storetest.PostgresDB(t)
	slow := filepath.Join(t.TempDir(), "slow.json")
	if err := os.WriteFile(slow, []byte(`[
 {"kind":"toolCall","name":"request_choices","arguments":"{\"questions\":[{\"question\":\"Which plan?\",\"header\":\"Plan\",\"options\":[\"Basic\",\"Pro\"]}]}"},
 {"kind":"text","text":"Pro it is.","delayMs":2000}
]`), 0o644); err != nil {
		t.Fatal(err)
	}
	flags := []string{"-script", slow, "-lease-timeout", "1s"}
	a, b := start(t, dsn, flags...), start(t, dsn, flags...)
	cv := openConv(t, a.url)
	go cv.submit()
	cv.wait("ack")
	a.kill9(t)
	<-cv.done

	waitForReply(t, b.url, cv.id)
	if !strings.Contains(b.log.String(), "taking over a turn owed a reply") {
		t.Errorf("B did not take the turn over; B's log:\n%s", b.log.String())
	}
	db, err := sqlstore.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h := readHistory(t, db, cv)
	if h.count(store.RoleReply) != 1 || !h.answered() || h.duplicates() > 0 {
		t.Errorf("after the takeover: %d replies, answered %v, %d duplicated steps", h.count(store.RoleReply), h.answered(), h.duplicates())
	}
}

// TestMCPTools: kindserver -mcp starts the reference MCP server; the model
// calls its echo tool as everything__echo and reads the server's answer.
// With confirmTools naming it, the call waits for a person's approval
// first, as any tool does.
func TestMCPTools(t *testing.T) {
	main := mcptest.Everything(t)
	for _, gated := range []bool{false, true} {
		t.Run(map[bool]string{false: "call", true: "confirmed call"}[gated], func(t *testing.T) {
			confirm := `[]`
			if gated {
				confirm = `["echo"]`
			}
			script := filepath.Join(t.TempDir(), "mcp.json")
			os.WriteFile(script, []byte(`{"server":{"confirmTools":`+confirm+`},"mockLlmScript":[
 {"kind":"toolCall","name":"everything__echo","arguments":"{\"message\":\"hi from kindkit\"}"},
 {"kind":"text","text":"Echoed."}]}`), 0o644)
			p := start(t, "memory", "-script", script, "-mcp", "everything=node "+main+" stdio")
			c := wstest.Dial(t, p.url)
			c.Send(`{"action":"create_conversation_session","requestId":"r","agentId":"a"}`)
			sid := wstest.Path(c.Expect("immediate_response")[0], "data", "sessionId").(string)
			c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"echo it"}`)
			c.Expect("immediate_response")
			if gated {
				c.Expect("write_confirmation_required", "stream_chunk")
				c.Send(`{"action":"confirm_tool_action","requestId":"C","sessionId":"` + sid + `","approved":true}`)
				c.Expect("immediate_response")
			} else {
				c.Expect("stream_chunk") // the call
			}
			result := c.Expect("stream_chunk")[0]
			if r, _ := wstest.Path(result, "data", "state", "rawResponse", "toolResult", "result").(string); !strings.Contains(r, "hi from kindkit") {
				t.Errorf("everything__echo's result = %q", r)
			}
			if text, end := c.Turn(); end["type"] != "eventual_response" || text != "Echoed." {
				t.Errorf("turn ended with %v, %q", end, text)
			}
		})
	}
}

// TestMCPElicitation: the reference MCP server's elicitation tool parks
// the turn on an elicitation card. An answer its requested schema refuses
// is interaction_invalid and the card stays; a good one reaches the server
// as accept, a decline as decline, and the deadline as cancel, and each
// time the server's own words come back as the tool's result.
func TestMCPElicitation(t *testing.T) {
	main := mcptest.Everything(t)
	script := filepath.Join(t.TempDir(), "elicit.json")
	os.WriteFile(script, []byte(`{"mockLlmScript":[
 {"kind":"toolCall","name":"everything__trigger-elicitation-request","arguments":"{}"},
 {"kind":"text","text":"Thanks."}]}`), 0o644)
	for _, c := range []struct {
		name, answer, want string
	}{
		{"accept", `"values":{"name":"Ada Lovelace","email":"ada@example.com","integer":7}`, "Name: Ada Lovelace"},
		{"decline", `"declined":true`, "User declined"},
		{"deadline", "", "User cancelled"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := start(t, "memory", "-script", script, "-park-timeout", "2s", "-mcp", "everything=node "+main+" stdio")
			ws := wstest.Dial(t, p.url)
			ws.Send(`{"action":"create_conversation_session","requestId":"r","agentId":"a","supports":["mcp_elicitation"]}`)
			sid := wstest.Path(ws.Expect("immediate_response")[0], "data", "sessionId").(string)
			ws.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"ask me"}`)
			ws.Expect("immediate_response", "stream_chunk") // the call
			card := wstest.Path(ws.Expect("interaction_required")[0], "data", "data").(map[string]any)
			if card["kind"] != "elicitation" || wstest.Path(card, "spec", "requestedSchema", "properties", "email", "format") != "email" {
				t.Fatalf("card %v", card)
			}
			iid := card["interactionId"].(string)
			submit := func(body string) {
				ws.Send(`{"action":"submit_interaction","requestId":"S","sessionId":"` + sid + `","interactionId":"` + iid + `","kind":"elicitation",` + body + `}`)
			}
			if c.answer != "" && c.name == "accept" {
				submit(`"values":{"email":"ada@example.com"}`) // name is required
				if ev := ws.Next(); ev["type"] != "interaction_invalid" || !strings.Contains(fmt.Sprint(ev), "name") {
					t.Fatalf("an answer without the required name: %v, want interaction_invalid", ev)
				}
			}
			if c.answer != "" {
				submit(c.answer)
				ws.Expect("immediate_response")
			}
			result := ws.Expect("stream_chunk")[0]
			if r, _ := wstest.Path(result, "data", "state", "rawResponse", "toolResult", "result").(string); !strings.Contains(r, c.want) {
				t.Errorf("the tool's result = %q, want %q in it", r, c.want)
			}
			if text, end := ws.Turn(); end["type"] != "eventual_response" || text != "Thanks." {
				t.Errorf("turn ended with %v, %q", end, text)
			}
		})
	}
}
