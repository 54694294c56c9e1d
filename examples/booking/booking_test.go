package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"go.uber.org/goleak"

	"github.com/kindkit/kindkit/internal/readmetest"
	"github.com/kindkit/kindkit/internal/wstest"
	"github.com/kindkit/kindkit/store/storetest"
)

// The example end to end, with real processes: the scripted model calls
// book_demo, whose Ask parks the turn on a choices card; an invalid submit
// is refused and the card stays; the valid one resumes the turn, the tool
// runs again and its result carries the typed answer. Also across a kill -9
// between park and submit, and with the submit on a second process.

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "booking")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

type proc struct {
	cmd *exec.Cmd
	url string
}

func start(t *testing.T, bin, dsn string) *proc {
	t.Helper()
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-store", dsn, "-script", "script.json", "-lease-timeout", "1s")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("booking did not start: %v", err)
	}
	rest, ok := strings.CutPrefix(line, "booking listening on ")
	if !ok {
		t.Fatalf("booking said %q", line)
	}
	u, _, _ := strings.Cut(rest, " ")
	return &proc{cmd: cmd, url: u}
}

func (p *proc) kill9(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.cmd.Wait()
}

// park opens a conversation with the card capability, sends a message and
// reads up to the card: the tool's call, then the card.
func park(t *testing.T, url string) (conv, interaction string) {
	t.Helper()
	c := wstest.Dial(t, url)
	defer c.WS.CloseNow()
	c.Send(`{"action":"create_conversation_session","requestId":"r","agentId":"a","supports":["choice_chips"]}`)
	ack := c.Expect("immediate_response")[0]
	sid := wstest.Path(ack, "data", "sessionId").(string)
	c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"I want a demo"}`)
	evs := c.Expect("immediate_response", "stream_chunk", "interaction_required")
	if wstest.Path(evs[1], "data", "state", "rawResponse", "toolCall", "name") != "book_demo" {
		t.Fatalf("before the card: %v", evs[1])
	}
	return wstest.Path(ack, "data", "conversationId").(string), wstest.Path(evs[2], "data", "data", "interactionId").(string)
}

// answer resumes the conversation on url, gets the same card, submits a
// slot that was not offered (refused, the card stays) and then Wed 14:30.
func answer(t *testing.T, url, conv, interaction string) {
	t.Helper()
	c := wstest.Dial(t, url)
	defer c.WS.CloseNow()
	c.Send(`{"action":"create_conversation_session","requestId":"r2","agentId":"a","conversationId":"` + conv + `"}`)
	sid := wstest.Path(c.Expect("immediate_response")[0], "data", "sessionId").(string)
	if got := wstest.Path(c.Expect("interaction_required")[0], "data", "data", "interactionId"); got != interaction {
		t.Fatalf("card after reconnecting: %v, want %s", got, interaction)
	}
	submit := `{"action":"submit_interaction","requestId":"S","sessionId":"` + sid + `","interactionId":"` + interaction + `","kind":"choices","values":{"answers":[{"header":"Slot","options":["%s"]}]}}`
	c.Send(strings.Replace(submit, "%s", "Sat 09:00", 1))
	if ev := c.Expect("interaction_invalid")[0]; wstest.Path(ev, "data", "data", "interactionId") != interaction {
		t.Fatalf("invalid submit: %v", ev)
	}
	c.Send(strings.Replace(submit, "%s", "Wed 14:30", 1))
	c.Expect("immediate_response")
	result := c.Expect("stream_chunk")[0]
	if r := wstest.Path(result, "data", "state", "rawResponse", "toolResult", "result"); r != "Booked a demo of the reporting features on Wed 14:30." {
		t.Errorf("book_demo's result = %v", r)
	}
	if text, end := c.Turn(); end["type"] != "eventual_response" || text != "You are all set." {
		t.Fatalf("the turn ended with %v and %q", end, text)
	}
	c.Send(`{"action":"get_conversation_messages","requestId":"h","sessionId":"` + sid + `"}`)
	msgs := wstest.Path(c.Expect("immediate_response")[0], "data", "messages").([]any)
	if len(msgs) != 2 { // the message and exactly one reply
		t.Errorf("history has %d messages, want 2: %v", len(msgs), msgs)
	}
}

func TestBooking(t *testing.T) {
	bin := build(t)
	stores := map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "booking.db") },
		"postgres": func(t *testing.T) string { return storetest.PostgresDB(t) },
	}
	for name, store := range stores {
		t.Run(name, func(t *testing.T) {
			t.Run("one process", func(t *testing.T) {
				p := start(t, bin, store(t))
				conv, iid := park(t, p.url)
				answer(t, p.url, conv, iid)
			})
			t.Run("kill -9 between park and submit", func(t *testing.T) {
				dsn := store(t)
				p := start(t, bin, dsn)
				conv, iid := park(t, p.url)
				p.kill9(t)
				answer(t, start(t, bin, dsn).url, conv, iid)
			})
		})
	}
	t.Run("postgres/submit on a second process", func(t *testing.T) {
		dsn := storetest.PostgresDB(t)
		a, b := start(t, bin, dsn), start(t, bin, dsn)
		conv, iid := park(t, a.url)
		answer(t, b.url, conv, iid)
	})
}

// The snippet of the README's example, and of docs/library.md, is this
// example's code, so it compiles.
func TestREADMESnippet(t *testing.T) {
	readmetest.HasFunc(t, "../../README.md", "main.go", "func bookDemo(")
	readmetest.HasFunc(t, "../../docs/library.md", "main.go", "func bookDemo(")
}
