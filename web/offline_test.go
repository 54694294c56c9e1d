package web_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/server"
	"github.com/kindkit/kindkit/store/memstore"
	"github.com/kindkit/kindkit/web"
)

// restartable is a kindserver on a real port that the test stops (its
// listener and every socket closed) and starts again on the same port, on
// the same store and model, as a redeploy does.
type restartable struct {
	t    *testing.T
	cfg  servertest.Config
	addr string
	srv  *server.Server
	eng  *agent.Engine
	hs   *http.Server
	done chan error
}

func startRestartable(t *testing.T, cfg servertest.Config) *restartable {
	t.Helper()
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if cfg.Store == nil {
		cfg.Store = memstore.New()
	}
	cfg.KeepParksOnDrain = true // the store outlives the process
	r := &restartable{t: t, cfg: cfg, addr: "127.0.0.1:0"}
	r.start()
	t.Cleanup(func() {
		if r.srv != nil {
			r.stop()
		}
	})
	return r
}

func (r *restartable) url() string { return "http://" + r.addr + "/" }

func (r *restartable) start() {
	r.t.Helper()
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		r.t.Fatalf("listen on %s again: %v", r.addr, err)
	}
	r.addr = ln.Addr().String()
	eng, err := agent.NewEngine(r.cfg.Engine())
	if err != nil {
		r.t.Fatal(err)
	}
	srv := server.New(eng, r.cfg.Options())
	r.eng = eng
	mux := http.NewServeMux()
	mux.Handle("/ws", srv)
	mux.Handle("/healthz", srv)
	mux.Handle("/", web.Handler(r.cfg.Catalog))
	r.srv, r.hs, r.done = srv, &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}, make(chan error, 1)
	go func(hs *http.Server, done chan<- error) { done <- hs.Serve(ln) }(r.hs, r.done)
}

// stop closes the listener, then drains and closes every socket.
func (r *restartable) stop() {
	r.t.Helper()
	if err := r.hs.Close(); err != nil {
		r.t.Errorf("close the listener: %v", err)
	}
	if err := <-r.done; !errors.Is(err, http.ErrServerClosed) {
		r.t.Errorf("serve: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.srv.Shutdown(ctx); err != nil {
		r.t.Errorf("shutdown: %v", err)
	}
	if err := r.eng.Shutdown(ctx); err != nil {
		r.t.Errorf("engine shutdown: %v", err)
	}
	r.eng.Close()
	r.srv = nil
}

// countSockets makes the page count the sockets it opens, in
// window.__sockets.
const countSockets = `(() => {
	const W = window.WebSocket;
	window.__sockets = 0;
	window.WebSocket = function (...a) { window.__sockets++; return new W(...a); };
	window.WebSocket.prototype = W.prototype;
	for (const k of ["CONNECTING", "OPEN", "CLOSING", "CLOSED"]) window.WebSocket[k] = W[k];
})()`

// TestOffline: when the server goes away the page says so in a banner with
// a Retry button that tries at once; what failed for want of a connection
// ("Not connected") is cleared when the page is back, and the waiting
// card, kept by the server, is answered as if nothing happened.
func TestOffline(t *testing.T) {
	chromium(t)
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	model, err := agent.NewScripted(choicesScript)
	if err != nil {
		t.Fatal(err)
	}
	r := startRestartable(t, servertest.Config{Catalog: catalog, Model: model})
	browser := startBrowser(t)
	p := newPage(t, browser)
	p.open(r.url())
	if eval[bool](p, `!document.querySelector("#offline").hidden`) {
		t.Error("the offline banner shows while online")
	}
	p.say("quote please", true)
	card := `.card[data-kind="choices"]`
	p.do("the card, and a pick", chromedp.WaitVisible(chromedp.CSS(card+` .chip[data-label="Pro"]`)),
		chromedp.Click(chromedp.CSS(card+` .chip[data-label="Pro"]`)))
	p.do("count sockets", chromedp.Evaluate[chromedp.Void](countSockets))

	r.stop()
	p.do("the offline banner", chromedp.WaitVisible(chromedp.CSS("#offline")))
	p.waitFor("the offline status", `document.querySelector("#status").dataset.state === "offline"`)
	if got := p.text("#offline"); !strings.Contains(got, "You are offline.") || !strings.Contains(got, "Retry now") {
		t.Errorf("banner %q", got)
	}
	if got := eval[string](p, `document.querySelector("#offline").getAttribute("role")`); got != "status" {
		t.Errorf("banner role %q: a screen reader is told", got)
	}
	if !eval[bool](p, `document.querySelector("#send").disabled`) {
		t.Error("Send is enabled while offline")
	}
	p.do("submit while offline", chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
	p.do("the card's error", chromedp.WaitVisible(chromedp.CSS(card+` .card-error`)))
	if got := p.text(card + ` .card-error`); !strings.Contains(got, "Not connected") {
		t.Errorf("card error %q", got)
	}
	if n := eval[int](p, `(() => { const n = window.__sockets; document.querySelector("#retry").click(); return window.__sockets - n })()`); n != 1 {
		t.Errorf("Retry now opened %d sockets at once, want 1", n)
	}
	p.waitFor("the failed retry", `document.querySelector("#status").dataset.state === "offline"`)
	if eval[bool](p, `document.querySelector("#offline").hidden`) {
		t.Error("the banner went away, but the server is still down")
	}

	r.start()
	p.do("retry", chromedp.Click(chromedp.CSS("#retry")))
	p.waitFor("online again", `document.querySelector("#status").dataset.state === "online"`)
	p.do("the banner goes", chromedp.WaitNotVisible(chromedp.CSS("#offline")))
	p.waitFor("the card, open", `document.querySelector('`+card+`').dataset.state === "open"`)
	if got := p.text(card + ` .card-error`); got != "" {
		t.Errorf("stale error %q after reconnecting", got)
	}
	if got := p.text("#notice"); got != "" {
		t.Errorf("stale notice %q after reconnecting", got)
	}
	if got := eval[string](p, `document.querySelector('`+card+` .chip[data-label="Pro"]').getAttribute("aria-pressed")`); got != "true" {
		t.Errorf("the pick was lost: aria-pressed=%s", got)
	}
	p.do("submit", chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
	p.waitFor("the reply", `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes("Pro it is — thanks!"))`)
	if got := p.text(card + ` .card-status`); got != "Plan: Pro" {
		t.Errorf("card status %q", got)
	}
}

// TestOfflineReload: what the person typed and picked while the server was
// away outlives the reload they make when it is back (a page cannot load
// while its server is away): the card comes again with its pick, and the
// composer with its draft.
func TestOfflineReload(t *testing.T) {
	chromium(t)
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	model, err := agent.NewScripted(choicesScript)
	if err != nil {
		t.Fatal(err)
	}
	r := startRestartable(t, servertest.Config{Catalog: catalog, Model: model})
	p := newPage(t, startBrowser(t))
	p.open(r.url())
	p.say("quote please", true)
	card := `.card[data-kind="choices"]`
	p.do("the card", chromedp.WaitVisible(chromedp.CSS(card+` .chip[data-label="Pro"]`)))

	r.stop()
	p.do("the offline banner", chromedp.WaitVisible(chromedp.CSS("#offline")))
	p.do("pick and type while offline", chromedp.Click(chromedp.CSS(card+` .chip[data-label="Pro"]`)),
		chromedp.SendKeys(chromedp.CSS("#message"), "written while offline"))
	r.start()
	p.do("reload", chromedp.Reload())
	p.waitFor("online again", `document.querySelector("#status").dataset.state === "online"`)
	p.do("the card again", chromedp.WaitVisible(chromedp.CSS(card+` .chip[data-label="Pro"]`)))
	if got := eval[string](p, `document.querySelector('`+card+` .chip[data-label="Pro"]').getAttribute("aria-pressed")`); got != "true" {
		t.Errorf("the pick made offline was lost: aria-pressed=%s", got)
	}
	// Trimmed: CDP's Enter of the first message also types its "char" event.
	if got := strings.TrimSpace(eval[string](p, `document.querySelector("#message").value`)); got != "written while offline" {
		t.Errorf("the draft made offline: %q", got)
	}
}
