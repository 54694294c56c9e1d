package aguipage_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/evanw/esbuild/pkg/api"
	"go.uber.org/goleak"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/agui"
	"github.com/kindkit/kindkit/internal/browsertest"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/store/dsn"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// stepTimeout bounds each browser step; a CI machine is slow, not stuck.
const stepTimeout = 20 * time.Second

// bundle bundles page.js with @ag-ui/client, from the folder
// scripts/agui.sh installed it into, for a browser.
func bundle(t *testing.T) []byte {
	t.Helper()
	dir := servertest.AGUIClient(t)
	res := api.Build(api.BuildOptions{
		EntryPoints: []string{"page.js"},
		Bundle:      true,
		Format:      api.FormatESModule,
		Platform:    api.PlatformBrowser,
		Target:      api.ES2020,
		NodePaths:   []string{filepath.Join(dir, "node_modules")},
		Outfile:     "page.bundle.js",
		LogLevel:    api.LogLevelSilent,
	})
	for _, m := range res.Errors {
		t.Errorf("esbuild: %s (%v)", m.Text, m.Location)
	}
	if len(res.OutputFiles) != 1 {
		t.Fatalf("esbuild wrote %d files, want the bundle", len(res.OutputFiles))
	}
	return res.OutputFiles[0].Contents
}

// agentServer runs an engine on SQLite whose scripted model raises a
// choices card and then replies, with AG-UI under /agui on a real port
// that allows the page's origin. threads reports each run's threadId.
func agentServer(t *testing.T, pageOrigin string, threads chan<- string) string {
	t.Helper()
	ctx := context.Background()
	st, closeStore, err := dsn.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "page.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	model, err := agent.NewScripted([]agent.ScriptEntry{
		{Kind: "toolCall", Name: "request_choices", Arguments: `{"questions":[{"question":"Which plan?","header":"Plan","options":["Basic","Pro"]}],"reason":"to quote"}`},
		{Kind: "text", Text: "Pro it is."},
	})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := agent.NewEngine(agent.Config{Catalog: catalog, Store: st, Model: model, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	h := agui.New(eng, agui.Options{AllowedOrigins: []string{strings.TrimPrefix(pageOrigin, "http://")}})
	mux := http.NewServeMux()
	mux.Handle("/agui/", http.StripPrefix("/agui", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			var in struct{ ThreadID string }
			if json.Unmarshal(body, &in) == nil {
				select {
				case threads <- in.ThreadID:
				default:
				}
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	})))
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
	return srv.URL + "/agui/"
}

// TestPageAnswersChoices: the page, built on @ag-ui/client alone and
// served from an origin of its own, sends a message, draws the choices
// interrupt from its metadata, shows the server's field error for an
// empty answer with the card still open, and answers it; the reply streams
// in and the thread holds the answer once.
func TestPageAnswersChoices(t *testing.T) {
	js := bundle(t)
	html, err := os.ReadFile("index.html")
	if err != nil {
		t.Fatal(err)
	}
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write(html)
		case "/page.bundle.js":
			w.Header().Set("Content-Type", "text/javascript")
			w.Write(js)
		default:
			http.NotFound(w, r)
		}
	}))
	defer page.Close()
	threads := make(chan string, 8)
	aguiURL := agentServer(t, page.URL, threads)

	ctx := browsertest.Start(t)
	var errs []string
	var mu sync.Mutex
	if err := chromedp.Listen(ctx, func(ev any) { recordConsole(&mu, &errs, ev) }); err != nil {
		t.Fatal(err)
	}
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, stepTimeout)
		defer cancel()
		if err := chromedp.Do(sctx, steps...); err != nil {
			t.Fatalf("%s: %v\nthe page shows:\n%s", what, err, text(t, ctx, "body"))
		}
	}
	waitFor := func(what, predicate string) {
		t.Helper()
		do("wait for "+what, chromedp.Poll[chromedp.Void](predicate, chromedp.WithPollingInterval(25*time.Millisecond)))
	}
	answer := chromedp.Click(chromedp.CSS(`#card button:not([type="button"])`))

	do("open the page and send a message",
		chromedp.Navigate(page.URL+"/?agui="+aguiURL),
		chromedp.SendKeys(chromedp.CSS("#message"), "Compare your plans"),
		chromedp.Click(chromedp.CSS("#send")),
		chromedp.WaitVisible(chromedp.CSS("#card fieldset legend")))
	if legend, why := text(t, ctx, "#card fieldset legend"), text(t, ctx, "#card form > p"); legend != "Which plan?" || why != "to quote" {
		t.Fatalf("the card shows %q and %q, want the spec's question and the interrupt's message", legend, why)
	}

	do("answer with nothing chosen", answer)
	waitFor("the field error", `document.querySelector("#error").textContent !== ""`)
	if fieldErr := text(t, ctx, "#error"); !strings.HasPrefix(fieldErr, "Plan: ") || text(t, ctx, "#card fieldset legend") != "Which plan?" {
		t.Fatalf("after an empty answer the page shows the error %q and the card %q, want the question's field error and the card open",
			fieldErr, text(t, ctx, "#card"))
	}

	do("choose Pro and answer", chromedp.Click(chromedp.CSS(`#card input[value="Pro"]`)), answer)
	waitFor("the reply", `document.querySelector("#log").textContent.includes("Pro it is.") && !document.querySelector("#card form")`)
	if e := text(t, ctx, "#error"); e != "" {
		t.Errorf("the page still shows an error after the answer: %q", e)
	}
	mu.Lock()
	if len(errs) > 0 {
		t.Errorf("the page's console: %q", errs)
	}
	mu.Unlock()

	// The thread as stored, through a run that sends nothing: the
	// card's call answered once, with Pro, and one reply.
	thread := <-threads
	results, replies := storedThread(t, aguiURL, thread)
	if len(results) != 1 || !strings.Contains(results[0], `"Pro"`) || replies != 1 {
		t.Fatalf("the thread holds results %q and %d replies, want one result with Pro and one reply", results, replies)
	}
}

// text is the text of the first element sel selects, "" when none.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector(`+strconv.Quote(sel)+`) || {textContent: ""}).textContent`))
	if err != nil {
		t.Fatalf("read %s: %v", sel, err)
	}
	return s
}

// storedThread reads thread's MESSAGES_SNAPSHOT and returns its tool
// results and how many assistant messages say the reply.
func storedThread(t *testing.T, url, thread string) (results []string, replies int) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"threadId": thread, "runId": "check", "messages": []any{}})
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type     string
			Messages []struct{ Role, Content string }
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type != "MESSAGES_SNAPSHOT" {
			continue
		}
		for _, m := range ev.Messages {
			switch {
			case m.Role == "tool":
				results = append(results, m.Content)
			case m.Role == "assistant" && m.Content == "Pro it is.":
				replies++
			}
		}
	}
	return results, replies
}
