package web_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/gen/choicesgen"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/internal/syncbuf"
	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/link"
	"github.com/kindkit/kindkit/server"
	"github.com/kindkit/kindkit/store/storetest"
	"github.com/kindkit/kindkit/web"
)

// hooks is a webhook receiver: it verifies each request's signature with
// the Standard Webhooks library and hands on its body.
type hooks struct {
	*httptest.Server
	bodies chan []byte
}

func newHooks(t *testing.T, secret string) *hooks {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	h := &hooks{bodies: make(chan []byte, 16)}
	var mu sync.Mutex
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if err := wh.Verify(b, r.Header); err != nil {
			mu.Lock()
			defer mu.Unlock()
			t.Errorf("webhook signature: %v", err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		h.bodies <- b
	}))
	t.Cleanup(h.Close)
	return h
}

// next is the next event of type typ; events of other types before it
// are passed over.
func (h *hooks) next(t *testing.T, typ string) map[string]any {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case b := <-h.bodies:
			var e struct {
				Type string
				Data map[string]any
			}
			if err := json.Unmarshal(b, &e); err != nil {
				t.Fatalf("webhook body %s: %v", b, err)
			}
			if e.Type == typ {
				return e.Data
			}
		case <-timeout:
			t.Fatalf("no %s webhook came", typ)
		}
	}
}

// freeAddr is a loopback address nothing listens on yet.
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestAnswerLinkInBrowser: a person's tab on one kindserver process waits
// on a card; the ask.parked webhook, from a real receiver, carries an
// answer link to the other process (both on one PostgreSQL). An approver
// opens it in another tab and answers; the person's tab sees the turn
// resume live, and the link then shows the ask answered, by whom, how
// and when. Auth is on: the approver's page carries a bearer token for
// the conversation's owner, as a link answers for no one else.
func TestAnswerLinkInBrowser(t *testing.T) {
	chromium(t)
	const hookSecret = "whsec_bGluay1icm93c2VyLXRlc3QtMDEyMzQ1Njc4OQ=="
	authSecret := "browser-link-test-auth-secret-0123456789"
	t.Setenv("KINDKIT_WEBHOOK_SECRET", hookSecret)
	t.Setenv("KINDKIT_LINK_SECRET", "browser-link-test-secret-0123456789abcdef")
	dsn := storetest.PostgresDB(t)
	recv := newHooks(t, hookSecret)
	dir := t.TempDir()
	scriptFile := filepath.Join(dir, "script.json")
	script := `[{"kind":"toolCall","text":"I need a manager's choice.","name":"request_choices",
		"arguments":"{\"questions\":[{\"question\":\"Which plan?\",\"header\":\"Plan\",\"options\":[\"Basic\",\"Pro\"]}],\"reason\":\"to quote\"}"},
		{"kind":"text","text":"Pro it is."}]`
	if err := os.WriteFile(scriptFile, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	chatAddr, linkAddr := freeAddr(t), freeAddr(t)
	run := func(addr string) *kindserver {
		k := &kindserver{t: t, addr: addr, log: &syncbuf.Buffer{}, args: []string{"-addr", addr, "-store", dsn, "-script", scriptFile,
			"-auth-secret", authSecret, "-webhook-url", recv.URL + "/hooks", "-public-url", "http://" + linkAddr}}
		k.start()
		t.Cleanup(func() {
			if k.cmd != nil {
				k.cmd.Process.Kill()
				k.cmd.Wait()
			}
			if t.Failed() {
				t.Logf("kindserver %s log:\n%s", addr, k.log.String())
			}
		})
		return k
	}
	chat, other := run(chatAddr), run(linkAddr)
	token := server.SignToken([]byte(authSecret), server.Principal{Sub: "ada"}, time.Now().Add(time.Hour))

	browser := startBrowser(t)
	person := newPage(t, browser)
	person.open(chat.url() + "?token=" + token)
	person.say("quote", true)
	card := `.card[data-kind="choices"]`
	person.do("the card", chromedp.WaitVisible(chromedp.CSS(card+`[data-state="open"] button[type="submit"]`)))

	parked := recv.next(t, "ask.parked")
	answerURL, _ := parked["answerUrl"].(string)
	base, fragment, found := strings.Cut(answerURL, "#")
	if !found || base != other.url()+"answer" || fragment == "" {
		t.Fatalf("ask.parked's answerUrl %q, want one to %sanswer", answerURL, other.url())
	}
	// The token is the fragment: the server never sees it in a URL.
	if strings.Contains(other.log.String(), fragment) || strings.Contains(chat.log.String(), fragment) {
		t.Error("a log holds the link's token")
	}

	approver := newPage(t, browser)
	withBearer := base + "?token=" + token + "#" + fragment
	approver.do("open the link", chromedp.Navigate(withBearer))
	linkCard := `#answer ` + card + `[data-state="open"]`
	approver.do("the linked card", chromedp.WaitVisible(chromedp.CSS(linkCard+` button[type="submit"]`)))
	if got := approver.text("#answer"); !strings.Contains(got, "Which plan?") || strings.Contains(got, "I need a manager") {
		t.Errorf("the linked card shows %q: want its question, and nothing of the conversation", got)
	}
	approver.do("answer by link", chromedp.Click(chromedp.CSS(linkCard+` .chip[data-label="Pro"]`)),
		chromedp.Click(chromedp.CSS(linkCard+` button[type="submit"]`)))
	approver.waitFor("the ask answered", `document.querySelector("#ended[data-status=submitted]") !== null`)

	person.waitFor("the turn resumed live", `[...document.querySelectorAll(".msg.assistant")].some(m => m.innerText.includes("Pro it is."))`)
	person.waitFor("the card closed", `!document.querySelector('`+card+`[data-state="open"]')`)
	if resolved := recv.next(t, "ask.resolved"); resolved["status"] != "submitted" || resolved["interactionId"] != parked["interactionId"] {
		t.Errorf("ask.resolved: %v", resolved)
	}

	// Opened again, the link shows the ask answered: by whom, how, when.
	approver.do("open the link again", chromedp.Reload())
	approver.waitFor("the ended ask", `document.querySelector("#ended") !== null`)
	ended := approver.text("#ended")
	for _, want := range []string{"Answered by ada through an answer link.", "At "} {
		if !strings.Contains(ended, want) {
			t.Errorf("the link after the answer shows %q, want %q", ended, want)
		}
	}
	if eval[string](approver, `document.querySelector("#ended time").getAttribute("datetime")`) == "" {
		t.Error("no time of the answer")
	}
	// Without the bearer, the link is refused as if there were no ask.
	stranger := newPage(t, startBrowser(t))
	stranger.do("open the link without a token", chromedp.Navigate(answerURL))
	stranger.waitFor("the refusal", `document.querySelector("#problem") !== null`)
	if got := stranger.text("#problem"); !strings.Contains(got, "no such ask") {
		t.Errorf("the link without the owner's token: %q", got)
	}
}

// TestAddressedCardReadOnly: a card addressed to someone else is drawn
// read-only in the conversation's own page, waiting for them: no control
// answers it.
func TestAddressedCardReadOnly(t *testing.T) {
	chromium(t)
	secret := []byte("addressed-card-test-secret-0123456789")
	tool, err := agent.NewTool("approve_refund", "Ask a manager.", func(ctx context.Context, _ struct{}) (any, error) {
		q := &choicesgen.Spec{Questions: []choicesgen.Question{{Question: "Which plan?", Header: "Plan",
			Options: []choicesgen.Option{{Label: "Basic"}, {Label: "Pro"}}}}}
		if _, err := choicesgen.Ask(ctx, q, "to quote", kindkit.AddressedTo("group:managers")); err != nil {
			return nil, err
		}
		return "done", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	model, err := agent.NewScripted([]agent.ScriptEntry{{Kind: "toolCall", Name: "approve_refund", Arguments: `{}`}, {Kind: "text", Text: "Done."}})
	if err != nil {
		t.Fatal(err)
	}
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	url := startServerConfig(t, servertest.Config{Catalog: catalog, Model: model, Tools: []agent.HostTool{tool}, AuthSecret: secret})
	p := newPage(t, startBrowser(t))
	p.open(url + "?token=" + server.SignToken(secret, server.Principal{Sub: "ada"}, time.Now().Add(time.Hour)))
	p.say("refund", true)
	card := `.card[data-kind="choices"]`
	p.waitFor("the card", `document.querySelector('`+card+`') !== null`)
	p.waitFor("it waits", `document.querySelector('`+card+`').dataset.state === "waiting"`)
	if got := p.text(card + " .card-status"); got != "Waiting for group:managers" {
		t.Errorf("the card's status %q", got)
	}
	enabled := eval[int](p, `[...document.querySelectorAll('`+card+` button, `+card+` input')].filter(c => !c.disabled && c.offsetParent !== null).length`)
	if enabled != 0 {
		t.Errorf("%d controls of the waiting card can be used", enabled)
	}
}

// TestAnswerPageAccessible runs axe-core on the answer page: with its card
// open, then showing how the ask ended.
func TestAnswerPageAccessible(t *testing.T) {
	src := axeSource(t)
	chromium(t)
	model, err := agent.NewScripted([]agent.ScriptEntry{{Kind: "toolCall", Name: "request_choices",
		Arguments: `{"questions":[{"question":"Which plan?","header":"Plan","options":["Basic","Pro"]}],"reason":"to quote"}`}, {Kind: "text", Text: "Pro it is."}})
	if err != nil {
		t.Fatal(err)
	}
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	srv := servertest.Start(t, servertest.Config{Catalog: catalog, Model: model, Logger: slog.New(slog.DiscardHandler)}, mux)
	signer, err := link.NewSigner([]byte("answer-page-a11y-test-secret-0123456789"))
	if err != nil {
		t.Fatal(err)
	}
	answers := link.NewHandler(srv.Engine, link.Options{Signer: signer})
	mux.Handle("/answer/ask", answers)
	mux.Handle("/answer/submit", answers)
	mux.Handle("/", web.Handler(catalog))

	ctx := context.Background()
	conv, sess, err := srv.Engine.NewConversation(ctx, "", []string{"choice_chips"}, agent.Opening{})
	if err != nil {
		t.Fatal(err)
	}
	prompted := make(chan struct{}, 1)
	stop := srv.Engine.Subscribe(ctx, conv.ID, agent.Position{}, func(ev agent.Event) {
		if ev.Kind == agent.EventPrompt {
			prompted <- struct{}{}
		}
	})
	defer stop()
	if err := srv.Engine.Send(ctx, sess, agent.Message{RequestID: "r1", Text: "quote"}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-prompted:
	case <-time.After(stepTimeout):
		t.Fatal("the turn never parked")
	}
	p, err := srv.Engine.PendingAsk(ctx, conv.ID)
	if err != nil || p == nil {
		t.Fatalf("PendingAsk = %v, %v", p, err)
	}
	token := signer.Mint(link.Claims{ConversationID: conv.ID, AskID: p.ID, Expires: time.Now().Add(time.Hour)})

	pg := newPage(t, startBrowser(t))
	pg.do("open the link", chromedp.Navigate(link.URL(srv.URL, token)))
	card := `#answer .card[data-kind="choices"][data-state="open"]`
	pg.do("the card", chromedp.WaitVisible(chromedp.CSS(card+` button[type="submit"]`)))
	pg.axe(src, "the answer page, its card open")
	pg.do("answer", chromedp.Click(chromedp.CSS(card+` .chip[data-label="Pro"]`)), chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
	pg.waitFor("the ask answered", `document.querySelector("#ended[data-status=submitted]") !== null`)
	pg.axe(src, "the answer page, the ask answered")
	srv.Engine.Wait()
}
