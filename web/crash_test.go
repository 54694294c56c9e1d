package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/internal/syncbuf"
	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
)

// The tests here run kindserver itself, on a SQLite file, and kill -9 it
// in the middle of a turn: what the page shows of a turn that outlived its
// process (issue 40).

// kindserver is a kindserver process that is killed and started again on
// the same address and store, as a crashed server restarted by its
// supervisor is.
type kindserver struct {
	t    *testing.T
	addr string
	args []string
	cmd  *exec.Cmd
	log  *syncbuf.Buffer
}

// startKindserver runs kindserver with the scripted model of script (a
// mockLlmScript array) on a SQLite file, on a free port.
func startKindserver(t *testing.T, script string) *kindserver {
	t.Helper()
	dir := t.TempDir()
	scriptFile := filepath.Join(dir, "script.json")
	if err := os.WriteFile(scriptFile, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	k := &kindserver{t: t, addr: addr, log: &syncbuf.Buffer{},
		args: []string{"-addr", addr, "-store", "sqlite:" + filepath.Join(dir, "kindkit.db"), "-script", scriptFile, "-lease-timeout", "1s"}}
	k.start()
	t.Cleanup(func() {
		if k.cmd != nil {
			k.cmd.Process.Kill()
			k.cmd.Wait()
		}
		if t.Failed() {
			t.Logf("kindserver log:\n%s", k.log.String())
		}
	})
	return k
}

func (k *kindserver) url() string { return "http://" + k.addr + "/" }

func (k *kindserver) start() {
	k.t.Helper()
	cmd := exec.Command(servertest.KindserverBinary(k.t, "../cmd/kindserver"), k.args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		k.t.Fatal(err)
	}
	cmd.Stderr = k.log
	if err := cmd.Start(); err != nil {
		k.t.Fatal(err)
	}
	k.cmd = cmd
	listening := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "kindkit listening on ") {
				listening <- true
			}
		}
		close(listening)
	}()
	select {
	case ok := <-listening:
		if !ok {
			k.t.Fatalf("kindserver exited before listening:\n%s", k.log.String())
		}
	case <-time.After(30 * time.Second):
		k.t.Fatalf("kindserver did not start:\n%s", k.log.String())
	}
}

func (k *kindserver) kill9() {
	k.t.Helper()
	if err := k.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		k.t.Fatal(err)
	}
	k.cmd.Wait()
	k.cmd = nil
}

// crashScript answers the first message after 2.5 s, long enough to kill
// the server while the reply is owed, and the second at once.
const crashScript = `[{"kind":"text","text":"The whole reply, after the crash.","delayMs":2500},{"kind":"text","text":"Second reply."}]`

// crashed sends "hi" from a page and kills the server once the message is
// stored (its bubble no longer sending), before the reply, then starts it
// again: the turn is owed, and the restarted server takes it over once the
// dead one's lease has run out.
func crashed(t *testing.T, k *kindserver) *page {
	t.Helper()
	chromium(t)
	p := newPage(t, startBrowser(t))
	p.open(k.url())
	p.say("hi", true)
	p.waitFor("the message stored", `document.querySelector(".msg.user") && !document.querySelector(".msg.user.sending")`)
	k.kill9()
	p.waitFor("the lost connection", `document.querySelector("#status").dataset.state !== "online"`)
	k.start()
	return p
}

// running is true when the page shows a turn running: its typing dots,
// Stop, and Send disabled with the reason.
const running = `document.querySelector(".msg.assistant .typing") !== null && !document.querySelector("#stop").hidden &&
	document.querySelector("#send").disabled && document.querySelector("#send").title.includes("Wait for the reply")`

// TestCrashedTurnInPage: the page shows a turn that outlived its server's
// kill -9 as running, and its reply when the restarted server has written
// it, open the whole time or reloaded; what the person types meanwhile
// stays in the composer, and a waiting card keeps the words before it.
func TestCrashedTurnInPage(t *testing.T) {
	t.Run("open page", func(t *testing.T) {
		k := startKindserver(t, crashScript)
		p := crashed(t, k)
		p.waitFor("the page back online", `document.querySelector("#status").dataset.state === "online"`)
		p.waitFor("the turn shown running again", running+` && !document.body.innerText.includes("may be incomplete")`)
		p.waitFor("the taken-over reply, live", `[...document.querySelectorAll(".msg.assistant")].some(m => m.innerText.includes("The whole reply, after the crash."))`)
		p.waitFor("the turn over", `document.querySelector(".typing") === null && !document.querySelector("#send").disabled`)
		got := eval[[]string](p, `[...document.querySelectorAll(".msg")].map(m => m.className + ": " + m.innerText.replace(/\s+/g, " ").trim())`)
		if len(got) != 2 || !strings.Contains(got[0], "hi") || !strings.Contains(got[1], "The whole reply, after the crash.") ||
			strings.Contains(got[1], "may be incomplete") {
			t.Errorf("the transcript:\n%s", strings.Join(got, "\n"))
		}
	})

	t.Run("reloaded page", func(t *testing.T) {
		k := startKindserver(t, crashScript)
		p := crashed(t, k)
		p.do("reload", chromedp.Reload())
		p.waitFor("the session", `document.querySelector("#status").dataset.state === "online"`)
		p.waitFor("the message and the turn running", `[...document.querySelectorAll(".msg.user")].some(m => m.innerText.includes("hi")) && `+running)
		// Typed while the turn runs: Enter sends nothing, and it stays.
		p.do("type meanwhile", chromedp.SendKeys(chromedp.CSS("#message"), "second"), chromedp.KeyEvent("\r"))
		p.waitFor("the reply", `[...document.querySelectorAll(".msg.assistant")].some(m => m.innerText.includes("The whole reply, after the crash."))`)
		p.waitFor("Send free", `!document.querySelector("#send").disabled`)
		// (CDP's Enter types a line break of its own, past the page's keydown.)
		if got := eval[string](p, `document.querySelector("#message").value`); strings.TrimSpace(got) != "second" {
			t.Fatalf("the composer after the turn: %q, want what was typed meanwhile", got)
		}
		p.do("send it", chromedp.Click(chromedp.CSS("#send"), chromedp.NodeEnabled))
		p.waitFor("its reply", `[...document.querySelectorAll(".msg.assistant")].some(m => m.innerText.includes("Second reply."))`)
		got := eval[[]string](p, `[...document.querySelectorAll(".msg")].map(m => m.innerText.replace(/\s+/g, " ").trim())`)
		want := []string{"hi", "The whole reply, after the crash.", "second", "Second reply."}
		if len(got) != len(want) {
			t.Fatalf("the transcript: %q, want %q", got, want)
		}
		for i := range want {
			if !strings.Contains(got[i], want[i]) {
				t.Errorf("the transcript: %q, want %q", got, want)
				break
			}
		}
	})

	t.Run("words before a waiting card", func(t *testing.T) {
		k := startKindserver(t, `[{"kind":"toolCall","text":"Let me ask you something first.","name":"request_choices",
			"arguments":"{\"questions\":[{\"question\":\"Which plan?\",\"header\":\"Plan\",\"options\":[\"Basic\",\"Pro\"]}],\"reason\":\"to quote\"}"},
			{"kind":"text","text":"Pro it is."}]`)
		chromium(t)
		p := newPage(t, startBrowser(t))
		p.open(k.url())
		p.say("quote", true)
		card := `.card[data-kind="choices"][data-state="open"]`
		order := `[...document.querySelectorAll(".msg.assistant > *")].map(c => c.matches(".card") ? "card" : c.innerText.includes("Let me ask") ? "words" : "").filter(Boolean).join(" ")`
		p.do("the card", chromedp.WaitVisible(chromedp.CSS(card+` button[type="submit"]`)))
		if got := eval[string](p, order); got != "words card" {
			t.Fatalf("live: %q, want the words above the card", got)
		}
		k.kill9()
		k.start()
		p.do("reload", chromedp.Reload())
		p.do("the card again", chromedp.WaitVisible(chromedp.CSS(card+` button[type="submit"]`)))
		if got := eval[string](p, order); got != "words card" {
			t.Errorf("after a crash and a reload: %q, want the words above the card", got)
		}
		p.do("answer", chromedp.Click(chromedp.CSS(card+` .chip[data-label="Pro"]`)), chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
		p.waitFor("the reply", `[...document.querySelectorAll(".msg.assistant")].some(m => m.innerText.includes("Pro it is."))`)
	})
}

// TestRefusedMessageKept: a message the server refuses (here, a turn the
// page could not know of runs: another process started it and its note
// was lost) is never shown as sent; its text goes back to the composer,
// with the reason above it, and sends once the person sends it again.
func TestRefusedMessageKept(t *testing.T) {
	chromium(t)
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	mem := memstore.New()
	model, err := agent.NewScripted([]agent.ScriptEntry{{Kind: "text", Text: "Here I am."}})
	if err != nil {
		t.Fatal(err)
	}
	p := newPage(t, startBrowser(t))
	p.open(startServerConfig(t, servertest.Config{Catalog: catalog, Model: model, Store: mem}))
	conv := eval[string](p, `localStorage.getItem("kindkit.conversationId")`)

	// Behind the page's back, a turn starts, owed its reply elsewhere.
	ctx, now := context.Background(), time.Now()
	record := &store.Park{ID: store.NewID(), Turn: json.RawMessage(`{"requestId":"elsewhere"}`), LeaseOwner: "another process",
		LeaseUntil: now.Add(time.Hour), CreatedAt: now}
	if _, ok, err := mem.StartTurn(ctx, &store.Message{ID: store.NewID(), ConversationID: conv, Role: store.RoleUser, Text: "from elsewhere", CreatedAt: now},
		record, nil, nil); err != nil || !ok {
		t.Fatalf("StartTurn = %v, %v", ok, err)
	}
	p.say("are you there?", true)
	p.waitFor("the refusal", `!document.querySelector("#notice").hidden && document.querySelector("#notice").innerText.includes("still working")`)
	if got := eval[string](p, `document.querySelector("#message").value`); got != "are you there?" {
		t.Errorf("the composer after the refusal: %q, want the refused message", got)
	}
	if shown := eval[int](p, `[...document.querySelectorAll(".msg")].filter(m => m.innerText.includes("are you there?")).length`); shown != 0 {
		t.Errorf("the refused message is shown as sent (%d bubbles)", shown)
	}

	// The turn elsewhere ends; the same text sends.
	if err := mem.SaveStep(ctx, store.Lease{ParkID: record.ID, Owner: "another process", Until: now.Add(time.Hour)}, store.Step{Done: true}); err != nil {
		t.Fatal(err)
	}
	p.do("send again", chromedp.Click(chromedp.CSS("#send"), chromedp.NodeEnabled))
	p.waitFor("the reply", `[...document.querySelectorAll(".msg.assistant")].some(m => m.innerText.includes("Here I am."))`)
	if n := eval[int](p, `[...document.querySelectorAll(".msg.user")].filter(m => m.innerText.includes("are you there?")).length`); n != 1 {
		t.Errorf("the message is shown %d times, want once", n)
	}
}
