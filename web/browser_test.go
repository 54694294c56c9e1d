package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/cmd/kindgen/testdata/basic/want/gen/pollgen"
	"github.com/kindkit/kindkit/internal/browsertest"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/knowledge"
	"github.com/kindkit/kindkit/web"
)

// stepTimeout bounds each browser step; a CI machine is slow, not stuck.
const stepTimeout = 20 * time.Second

// choicesScript raises one single-select question, then answers.
var choicesScript = []agent.ScriptEntry{
	{Kind: "toolCall", Name: "request_choices", Arguments: `{"questions":[{"question":"Which plan?","header":"Plan","options":["Basic","Pro"]}],"reason":"to quote"}`},
	{Kind: "text", Text: "Pro it is — thanks!"},
}

// chromium returns the browser to drive (browsertest.Path).
func chromium(t *testing.T) string { return browsertest.Path(t) }

// startBrowser starts headless chromium for the test (browsertest.Start).
func startBrowser(t *testing.T) context.Context { return browsertest.Start(t) }

// startServer serves /ws (a scripted model on a memory store) and the web
// handler on a real port, and returns the page's URL.
func startServer(t *testing.T, catalog *kindkit.Catalog, script []agent.ScriptEntry) string {
	t.Helper()
	model, err := agent.NewScripted(script)
	if err != nil {
		t.Fatal(err)
	}
	return startServerConfig(t, servertest.Config{Catalog: catalog, Model: model})
}

// catalogWith is catalog and the test's own kinds.
func catalogWith(t *testing.T, catalog *kindkit.Catalog, extra ...kindkit.Kind) *kindkit.Catalog {
	t.Helper()
	c, err := kindkit.NewCatalog(append(append([]kindkit.Kind(nil), catalog.Kinds()...), extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// startServerConfig is startServer with a whole config; the store defaults
// to memory and the log to nothing.
func startServerConfig(t *testing.T, cfg servertest.Config) string {
	t.Helper()
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	return servertest.Start(t, cfg, web.Handler(cfg.Catalog)).URL + "/"
}

// page is one browser tab.
type page struct {
	t   *testing.T
	ctx context.Context
}

// newPage opens a tab in the browser, closed when the test ends.
func newPage(t *testing.T, browser context.Context) *page {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tgt, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: catchErrors}); err != nil {
			return err
		}
		// The log scrolls smoothly, which can move a control away from
		// under a click in flight (it did, once in CI); the page honours
		// reduced motion, so the tests ask for it.
		_, err := cdp.Call(ctx, tgt, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-reduced-motion", Value: "reduce"}}})
		return err
	}))
	if err != nil {
		t.Fatalf("open tab: %v", err)
	}
	p := &page{t, ctx}
	t.Cleanup(p.checkErrors)
	return p
}

// catchErrors runs before the page's own scripts: it keeps uncaught
// exceptions, rejections and console.error calls in sessionStorage, which
// outlives a reload.
const catchErrors = `(() => {
	const push = (m) => {
		try {
			const a = JSON.parse(sessionStorage.getItem("__jsErrors") || "[]");
			a.push(String(m));
			sessionStorage.setItem("__jsErrors", JSON.stringify(a));
		} catch (e) {}
	};
	addEventListener("error", (e) => push(e.message));
	addEventListener("unhandledrejection", (e) => push("unhandled rejection: " + e.reason));
	const ce = console.error;
	console.error = (...a) => { push(a.map(String).join(" ")); ce.apply(console, a); };
})()`

// checkErrors fails the test for a JavaScript error the page had.
func (p *page) checkErrors() {
	ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
	defer cancel()
	errs, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => { try { return JSON.parse(sessionStorage.getItem("__jsErrors") || "[]") } catch (e) { return [] } })()`))
	if err != nil {
		p.t.Logf("read the page's errors: %v", err)
		return
	}
	for _, e := range errs {
		p.t.Errorf("JavaScript error: %s", e)
	}
}

// do runs steps with a deadline; a failure ends the test with what was
// being done.
func (p *page) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		p.t.Fatalf("%s: %v\n%s", what, err, p.dump())
	}
}

// eval evaluates a JavaScript expression.
func eval[T any](p *page, expr string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		p.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitFor polls a JavaScript predicate until it is truthy.
func (p *page) waitFor(what, predicate string) {
	p.t.Helper()
	p.do("wait for "+what, chromedp.Poll[chromedp.Void](predicate, chromedp.WithPollingInterval(25*time.Millisecond)))
}

// dump is the log's text, for failure messages.
func (p *page) dump() string {
	ctx, cancel := context.WithTimeout(p.ctx, 2*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#log") ? document.querySelector("#log").innerText : document.documentElement.outerHTML`))
	if err != nil {
		return "(page text unavailable: " + err.Error() + ")"
	}
	return "page text:\n" + s
}

func (p *page) text(sel string) string {
	p.t.Helper()
	return eval[string](p, fmt.Sprintf(`(document.querySelector(%q) || {innerText: ""}).innerText`, sel))
}

// open loads the page and waits for its session.
func (p *page) open(url string) {
	p.t.Helper()
	p.do("open "+url, chromedp.Navigate(url))
	p.waitFor("the session", `document.querySelector("#status").dataset.state === "online"`)
}

// say types a message and sends it, with the Send button or the Enter key.
func (p *page) say(msg string, enter bool) {
	p.t.Helper()
	send := chromedp.Click(chromedp.CSS("#send"), chromedp.NodeEnabled)
	if enter {
		send = chromedp.KeyEvent("\r")
	}
	p.do("send "+msg, chromedp.WaitEnabled(chromedp.CSS("#send")), chromedp.SendKeys(chromedp.CSS("#message"), msg), send)
}

// checkLabels fails for a control with no accessible name or that is out of
// the tab order.
func (p *page) checkLabels(scope string) {
	p.t.Helper()
	bad := eval[[]string](p, fmt.Sprintf(`[...document.querySelectorAll(%q)].filter(c => {
		if (c.type === "hidden") return false;
		const named = (c.labels && c.labels.length) || c.getAttribute("aria-label") || c.getAttribute("aria-labelledby") ||
			(c.tagName === "BUTTON" && c.textContent.trim());
		return !named || c.tabIndex < 0;
	}).map(c => c.outerHTML)`, scope+" button, "+scope+" input, "+scope+" select, "+scope+" textarea"))
	if len(bad) > 0 {
		p.t.Errorf("controls without a label or out of the tab order:\n%s", strings.Join(bad, "\n"))
	}
}

// saveScreenshot writes png under the test's temp dir and, when
// KINDKIT_SCREENSHOT_DIR is set, copies it there.
func saveScreenshot(t *testing.T, name string, png []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	if dir := os.Getenv("KINDKIT_SCREENSHOT_DIR"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, name)
		if err := os.WriteFile(out, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot copied to %s", out)
	}
}

func TestBrowser(t *testing.T) {
	chromium(t) // skip before starting anything
	start := time.Now()
	browser := startBrowser(t)
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}

	// A: the choices card; an unanswered submit shows the validator's error
	// beside its question; picking "Pro" finishes the turn in the same bubble.
	t.Run("ChoicesCard", func(t *testing.T) {
		p := newPage(t, browser)
		p.open(startServer(t, catalog, choicesScript))
		p.checkLabels("body")
		p.say("I'd like a quote", false)
		card := `.card[data-kind="choices"]`
		p.do("the choices card", chromedp.WaitVisible(chromedp.CSS(card+` .chip[data-label="Pro"]`)))
		if got := p.text(card + ` .question[data-header="Plan"] legend`); !strings.Contains(got, "Which plan?") {
			t.Errorf("question legend %q", got)
		}
		if got := eval[string](p, `document.activeElement.className`); got != "card-title" {
			t.Errorf("focus after the card appeared is on %q, want the card's heading", got)
		}
		p.checkLabels(card)
		png, err := chromedp.Run(p.ctx, chromedp.ScreenshotScale(chromedp.CSS(card), 2))
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		saveScreenshot(t, "choices-card.png", png)

		// Nothing picked: the error comes back from interaction_invalid.
		p.do("submit nothing", chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
		planErr := card + ` .question[data-header="Plan"] .field-error`
		p.do("the Plan error", chromedp.WaitVisible(chromedp.CSS(planErr)))
		if got := p.text(planErr); !strings.Contains(strings.ToLower(got), "select an option or provide an 'other' answer") {
			t.Errorf("Plan error %q", got)
		}
		if got := p.text(card + ` .card-error`); !strings.Contains(got, "Some fields need attention.") {
			t.Errorf("card error %q", got)
		}

		// Keyboard: Space on a focused chip presses it.
		p.do("press Pro with the keyboard", chromedp.Focus(chromedp.CSS(card+` .chip[data-label="Pro"]`)), chromedp.KeyEvent(" "))
		if got := eval[string](p, `document.querySelector('.chip[data-label="Pro"]').getAttribute("aria-pressed")`); got != "true" {
			t.Fatalf("Pro chip aria-pressed=%s after Space", got)
		}
		p.do("submit Pro", chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
		p.waitFor("the answered card", `document.querySelector('`+card+`').dataset.state === "answered"`)
		p.waitFor("the reply", `document.querySelector('.msg.assistant').innerText.includes("Pro it is — thanks!")`)
		p.do("the turn's end", chromedp.WaitEnabled(chromedp.CSS("#send")))
		if n := eval[int](p, `document.querySelectorAll(".msg.assistant").length`); n != 1 {
			t.Errorf("%d assistant bubbles, want the turn's one", n)
		}
		if got := p.text(planErr); got != "" {
			t.Errorf("stale Plan error %q after the answer", got)
		}
		if got := p.text(card + ` .card-status`); got != "Plan: Pro" {
			t.Errorf("card status %q", got)
		}
		if eval[bool](p, `[...document.querySelectorAll('.tool[data-tool="request_choices"]')].some(x => x.offsetParent !== null)`) {
			t.Error("the raise tool shows in the transcript: the card is what the person sees")
		}
	})

	// B: a kind with no card of its own gets a form drawn from /kinds.
	t.Run("GenericForm", func(t *testing.T) {
		poll, err := pollgen.New(pollgen.Unimplemented{})
		if err != nil {
			t.Fatal(err)
		}
		// The project's own catalog may have a poll kind of its own (the
		// docs/adding-a-kind.md walkthrough adds one): the test's wins.
		var ks []kindkit.Kind
		for _, k := range catalog.Kinds() {
			if k.Descriptor().Name != poll.Descriptor().Name {
				ks = append(ks, k)
			}
		}
		withPoll, err := kindkit.NewCatalog(append(ks, poll)...)
		if err != nil {
			t.Fatal(err)
		}
		p := newPage(t, browser)
		p.open(startServer(t, withPoll, []agent.ScriptEntry{
			{Kind: "toolCall", Name: "request_poll", Arguments: `{"prompt":"Lunch?","choices":[{"id":"a","text":"Pizza"},{"id":"b","text":"Soup"}],"reason":"to order"}`},
			{Kind: "text", Text: "Pizza it is — thanks!"},
		}))
		p.say("lunch?", true)
		card := `.card[data-kind="poll"]`
		input := card + ` input[name="choice"]`
		p.do("the generic form", chromedp.WaitVisible(chromedp.CSS(input)))
		if got := p.text(card); !strings.Contains(got, "Lunch?") || !strings.Contains(got, "Pizza") {
			t.Errorf("the poll card does not show its spec:\n%s", got)
		}
		if got := eval[string](p, `document.querySelector('`+input+`').labels[0].innerText`); !strings.Contains(got, "Choice") || !strings.Contains(got, "*") {
			t.Errorf("choice label %q, want Choice marked required", got)
		}
		p.checkLabels(card)

		p.do("submit empty", chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
		fieldErr := card + ` .field:has(input[name="choice"]) .field-error`
		p.do("the choice error", chromedp.WaitVisible(chromedp.CSS(fieldErr)))
		if got := p.text(fieldErr); !strings.Contains(strings.ToLower(got), "required") {
			t.Errorf("choice error %q", got)
		}
		if got := eval[string](p, `document.querySelector('`+input+`').getAttribute("aria-invalid")`); got != "true" {
			t.Errorf("choice input aria-invalid=%q", got)
		}

		p.do("fill and submit", chromedp.SendKeys(chromedp.CSS(input), "a"), chromedp.KeyEvent("\r"))
		p.waitFor("the answered card", `document.querySelector('`+card+`').dataset.state === "answered"`)
		p.waitFor("the reply", `document.querySelector('.msg.assistant').innerText.includes("Pizza it is — thanks!")`)
	})

	// Every shape the generic form draws (a small integer range as a scale,
	// enum chips, a boolean switch, string list, enum list as chips, nested
	// object through a $ref), errors at nested paths, and the values it
	// submits.
	t.Run("GenericFormShapes", func(t *testing.T) {
		survey := surveyKind(t)
		withSurvey := catalogWith(t, catalog, survey)
		p := newPage(t, browser)
		p.open(startServer(t, withSurvey, []agent.ScriptEntry{
			{Kind: "toolCall", Name: "request_survey", Arguments: `{"question":"How was it?","reason":"to improve"}`},
			{Kind: "text", Text: "Noted."},
		}))
		p.say("survey", true)
		card := `.card[data-kind="survey"]`
		p.do("the survey form", chromedp.WaitVisible(chromedp.CSS(card+` [data-field="score"] .chip`)))
		shape := eval[[]string](p, `[
			'[data-field="score"] .chips.scale .chip[data-value="5"]',
			'[data-field="mood"] .chip[data-value="sad"]',
			'input[name="subscribe"][type="checkbox"][role="switch"]',
			'input[name="tags[0]"]',
			'[data-field="colors"] .chip[data-value="green"][aria-pressed="false"]',
			'fieldset.group input[name="address.city"]',
			'input[name="address.zip"]',
		].filter(s => !document.querySelector('`+card+` ' + s))`)
		if len(shape) > 0 {
			t.Fatalf("the survey form lacks %q", shape)
		}
		p.checkLabels(card)

		p.do("submit missing values",
			chromedp.SendKeys(chromedp.CSS(card+` input[name="address.zip"]`), "75001"),
			chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
		for name, want := range map[string]string{"score": "Pick one", "address.city": "required"} {
			sel := card + ` [data-field="` + name + `"] .field-error`
			p.do("the "+name+" error", chromedp.WaitVisible(chromedp.CSS(sel)))
			if got := p.text(sel); !strings.Contains(got, want) {
				t.Errorf("%s error %q, want %q", name, got, want)
			}
		}

		p.do("fix and submit",
			chromedp.Click(chromedp.CSS(card+` [data-field="score"] .chip[data-value="4"]`)),
			chromedp.Click(chromedp.CSS(card+` [data-field="mood"] .chip[data-value="sad"]`)),
			chromedp.Click(chromedp.CSS(card+` input[name="subscribe"]`)),
			chromedp.SendKeys(chromedp.CSS(card+` input[name="tags[0]"]`), "fast"),
			chromedp.Click(chromedp.CSS(card+` .array-actions button`)),
			chromedp.SendKeys(chromedp.CSS(card+` input[name="tags[1]"]`), "kind"),
			chromedp.Click(chromedp.CSS(card+` [data-field="colors"] .chip[data-value="green"]`)),
			chromedp.SendKeys(chromedp.CSS(card+` input[name="address.city"]`), "Paris"),
			chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
		p.waitFor("the answered card", `document.querySelector('`+card+`').dataset.state === "answered"`)
		p.waitFor("the tool result", `document.querySelector('.tool[data-tool="request_survey"][data-state="done"]')`)
		result := eval[string](p, `[...document.querySelectorAll('.tool[data-tool="request_survey"] pre')].pop().textContent`)
		var got map[string]any
		if err := json.Unmarshal([]byte(result), &got); err != nil {
			t.Fatalf("tool result %q: %v", result, err)
		}
		want := map[string]any{"status": "submitted", "values": map[string]any{
			"score": 4.0, "mood": "sad", "subscribe": true, "tags": []any{"fast", "kind"}, "colors": []any{"green"},
			"address": map[string]any{"city": "Paris", "zip": "75001"}}}
		if !jsonEqual(got, want) {
			t.Errorf("submitted %s\nwant      %v", result, want)
		}
		p.waitFor("the reply", `document.querySelector('.msg.assistant').innerText.includes("Noted.")`)
	})

	// C: a reload while the card is parked resumes the conversation and
	// shows the same card; answering it there finishes the turn.
	// A draft outlives a reload until it is sent.
	t.Run("ReloadKeepsDraft", func(t *testing.T) {
		p := newPage(t, browser)
		p.open(startServer(t, catalog, []agent.ScriptEntry{{Kind: "text", Text: "Noted."}}))
		p.do("type a draft", chromedp.WaitEnabled(chromedp.CSS("#message")), chromedp.SendKeys(chromedp.CSS("#message"), "half a thought, not sent"))
		p.do("reload", chromedp.Reload())
		p.waitFor("the draft after the reload", `document.querySelector("#message").value === "half a thought, not sent"`)
		p.waitFor("the session", `document.querySelector("#status").dataset.state === "online"`)
		p.do("send it", chromedp.Click(chromedp.CSS("#send"), chromedp.NodeEnabled))
		p.waitFor("the reply", `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes("Noted."))`)
		p.do("reload", chromedp.Reload())
		p.waitFor("the history", `[...document.querySelectorAll(".msg.user")].some(m => m.innerText.includes("half a thought"))`)
		if got := eval[string](p, `document.querySelector("#message").value`); got != "" {
			t.Errorf("after sending, the composer holds %q after a reload", got)
		}
		// A reply from the history can be copied, as a live one can.
		p.do("copy the reply from the history", chromedp.Evaluate[chromedp.Void](`window.__copied = null; navigator.clipboard.writeText = async (s) => { window.__copied = s }`),
			chromedp.Click(chromedp.CSS(`.history .msg.assistant > button.copy`)))
		p.waitFor("the copied text", `window.__copied === "Noted."`)
	})

	// A message sent while the person had scrolled up is brought into view.
	t.Run("SendScrollsToTheMessage", func(t *testing.T) {
		long := strings.Repeat("A line of a long answer.\n\n", 80)
		p := newPage(t, browser)
		p.open(startServer(t, catalog, []agent.ScriptEntry{{Kind: "text", Text: long}, {Kind: "text", Text: "Short."}}))
		p.say("tell me everything", true)
		p.do("the long reply", chromedp.WaitEnabled(chromedp.CSS("#send")))
		p.waitFor("a log that scrolls", `document.querySelector("#log").scrollHeight > document.querySelector("#log").clientHeight * 2`)
		p.do("scroll up", chromedp.Evaluate[chromedp.Void](`document.querySelector("#log").scrollTop = 0`))
		p.say("and now?", true)
		p.waitFor("the new message in view", `(() => { const log = document.querySelector("#log"); const m = [...log.querySelectorAll(".msg.user")].pop(); const a = m.getBoundingClientRect(), b = log.getBoundingClientRect(); return m.innerText.includes("and now?") && a.top >= b.top && a.bottom <= b.bottom })()`)
	})

	t.Run("ReloadKeepsCard", func(t *testing.T) {
		p := newPage(t, browser)
		p.open(startServer(t, catalog, choicesScript))
		p.say("quote please", false)
		card := `.card[data-kind="choices"]`
		p.do("the choices card", chromedp.WaitVisible(chromedp.CSS(card)))
		id := eval[string](p, `document.querySelector('`+card+`').dataset.interactionId`)
		conv := eval[string](p, `localStorage.getItem("kindkit.conversationId")`)
		if id == "" || conv == "" {
			t.Fatalf("interactionId %q, stored conversationId %q", id, conv)
		}

		p.do("reload", chromedp.Reload())
		p.waitFor("the session", `document.querySelector("#status").dataset.state === "online"`)
		p.do("the card again", chromedp.WaitVisible(chromedp.CSS(card)))
		if got := eval[string](p, `document.querySelector('`+card+`').dataset.interactionId`); got != id {
			t.Errorf("card after reload has interactionId %q, want %q", got, id)
		}
		if got := eval[string](p, `localStorage.getItem("kindkit.conversationId")`); got != conv {
			t.Errorf("conversation after reload %q, want %q", got, conv)
		}
		p.waitFor("the history", `[...document.querySelectorAll(".msg.user")].some(m => m.innerText.includes("quote please"))`)

		p.do("answer after the reload", chromedp.Click(chromedp.CSS(card+` .chip[data-label="Pro"]`)), chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
		p.waitFor("the reply", `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes("Pro it is — thanks!"))`)
		p.waitFor("the answered card", `document.querySelector('`+card+`').dataset.state === "answered"`)
	})

	// The identity form: per-field errors from interaction_invalid, then a
	// good submit.
	t.Run("IdentityForm", func(t *testing.T) {
		p := newPage(t, browser)
		p.open(startServer(t, catalog, []agent.ScriptEntry{
			{Kind: "toolCall", Name: "request_identity_intake", Arguments: `{"fields":[{"key":"name","required":false},"email",{"key":"phone","required":false,"label":"Mobile"}],"reason":"to send you the quote"}`},
			{Kind: "text", Text: "Thanks, Alice."},
		}))
		p.say("send me a quote", true)
		card := `.card[data-kind="identity_intake"]`
		p.do("the identity form", chromedp.WaitVisible(chromedp.CSS(card+` input[name="email"]`)))
		labels := eval[[]string](p, `[...document.querySelectorAll('`+card+` label')].map(l => l.innerText.replace(/\s+/g, " ").trim())`)
		if strings.Join(labels, "|") != "Name|Email * (required)|Mobile" && strings.Join(labels, "|") != "Name|Email *|Mobile" {
			t.Errorf("labels %q, want Name, Email marked required, Mobile", labels)
		}
		p.checkLabels(card)
		p.do("submit bad values",
			chromedp.SendKeys(chromedp.CSS(card+` input[name="email"]`), "not-an-email"),
			chromedp.SendKeys(chromedp.CSS(card+` input[name="phone"]`), "123"),
			chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
		for field, want := range map[string]string{"email": "valid email", "phone": "country code"} {
			sel := card + ` .field[data-field="` + field + `"] .field-error`
			p.do("the "+field+" error", chromedp.WaitVisible(chromedp.CSS(sel)))
			if got := p.text(sel); !strings.Contains(got, want) {
				t.Errorf("%s error %q, want %q", field, got, want)
			}
		}
		if got := p.text(card + ` .field[data-field="name"] .field-error`); got != "" {
			t.Errorf("name has an error: %q", got)
		}
		p.do("fix and submit",
			chromedp.Evaluate[chromedp.Void](`for (const n of ["email", "phone"]) document.querySelector('`+card+` input[name="' + n + '"]').value = ""`),
			chromedp.SendKeys(chromedp.CSS(card+` input[name="email"]`), "alice@example.com"),
			chromedp.SendKeys(chromedp.CSS(card+` input[name="name"]`), "Alice"),
			chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
		p.waitFor("the answered card", `document.querySelector('`+card+`').dataset.state === "answered"`)
		p.waitFor("the reply", `document.querySelector('.msg.assistant').innerText.includes("Thanks, Alice.")`)
		// After a reload the summary, drawn from the stored values, names
		// the fields in the card's order, not the alphabet's.
		p.do("reload", chromedp.Reload())
		p.waitFor("the summary from the history", `document.querySelector('`+card+` .card-status') && document.querySelector('`+card+` .card-status').innerText === "Name: Alice · Email: alice@example.com"`)
	})

	// A turn that fails after its 202 ends with an error event: the page
	// says so in the bubble and lets the visitor send again.
	t.Run("ServerError", func(t *testing.T) {
		p := newPage(t, browser)
		p.open(startServerConfig(t, servertest.Config{Catalog: catalog, Model: failingModel{}}))
		p.say("hello", true)
		p.waitFor("the error", `document.querySelector('.msg.assistant .turn-error')`)
		if got := p.text(`.msg.assistant`); !strings.Contains(got, "Let me check") || !strings.Contains(got, "Something went wrong on the server") {
			t.Errorf("bubble after a failed turn:\n%s", got)
		}
		p.do("the composer again", chromedp.WaitEnabled(chromedp.CSS("#send")))
	})

	// A tool gated by ConfirmTools asks first; Approve runs it.
	t.Run("ConfirmTool", func(t *testing.T) {
		model, err := agent.NewScripted([]agent.ScriptEntry{
			{Kind: "toolCall", Name: "delete_draft", Arguments: `{"id":"7"}`},
			{Kind: "text", Text: "Draft deleted."},
		})
		if err != nil {
			t.Fatal(err)
		}
		p := newPage(t, browser)
		p.open(startServerConfig(t, servertest.Config{Catalog: catalog, Model: model, ConfirmTools: []string{"delete"},
			Tools: []agent.HostTool{agent.FixedTool(agent.Tool{Name: "delete_draft", Parameters: []byte(`{"type":"object"}`)}, "deleted")}}))
		p.say("delete my draft", true)
		card := `.card[data-kind="confirmation"]`
		p.do("the confirmation", chromedp.WaitVisible(chromedp.CSS(card+` button.primary`)))
		if got := p.text(card); !strings.Contains(got, "delete_draft") {
			t.Errorf("confirmation card %q does not name the tool", got)
		}
		p.waitFor("the arguments on the card", `document.querySelector('`+card+` .confirm-args dd') && document.querySelector('`+card+` .confirm-args dd').innerText === "7"`)
		if eval[bool](p, `getComputedStyle(document.querySelector('.msg.assistant .typing')).display !== "none"`) {
			t.Error("the typing dots run under the confirmation")
		}
		// Reloaded while it waits, the card still shows what is to be
		// approved: the person never approves a delete blind.
		p.do("reload", chromedp.Reload())
		p.do("the confirmation again", chromedp.WaitVisible(chromedp.CSS(card+` button.primary`)))
		p.waitFor("the arguments after the reload", `document.querySelector('`+card+` .confirm-args dd') && document.querySelector('`+card+` .confirm-args dd').innerText === "7"`)
		p.do("approve", chromedp.Click(chromedp.CSS(card+` button.primary`)))
		p.waitFor("the approval", `document.querySelector('`+card+` .card-status').innerText.includes("Approved")`)
		p.waitFor("the reply", `document.querySelector('.msg.assistant').innerText.includes("Draft deleted.")`)
		if got := p.text(`.tool[data-tool="delete_draft"] summary`); !strings.Contains(got, "done") {
			t.Errorf("tool activity %q", got)
		}
	})

	// With knowledge, the reply lists the documents it drew on: linked
	// when the source is a web address, and never one that shares no word
	// with the message.
	t.Run("Sources", func(t *testing.T) {
		model, err := agent.NewScripted([]agent.ScriptEntry{{Kind: "text", Text: "Returns are free for 30 days."}})
		if err != nil {
			t.Fatal(err)
		}
		docs, err := knowledge.New([]knowledge.Doc{
			{Source: "returns.md", Content: "Returns are free within 30 days."},
			{Source: "https://example.com/refunds", Content: "Refunds reach your card in five days."},
			{Source: "hours.md", Content: "Open nine to five."},
		})
		if err != nil {
			t.Fatal(err)
		}
		p := newPage(t, browser)
		p.open(startServerConfig(t, servertest.Config{Catalog: catalog, Model: model, Knowledge: docs}))
		p.say("are returns and refunds free?", true)
		p.waitFor("the sources", `document.querySelector('.msg.assistant .sources')`)
		if got := p.text(`.msg.assistant .sources`); got != "Sources: returns.md, https://example.com/refunds" {
			t.Errorf("sources %q", got)
		}
		if href := eval[string](p, `document.querySelector('.msg.assistant .sources a').href`); href != "https://example.com/refunds" {
			t.Errorf("link %q", href)
		}
		if n := eval[int](p, `document.querySelectorAll('.msg.assistant .sources a').length`); n != 1 {
			t.Errorf("%d links, want only the web address", n)
		}
	})

	// D: a phone-sized screen: nothing is wider than the viewport; Decline
	// closes the card and the turn goes on.
	t.Run("NarrowScreen", func(t *testing.T) {
		p := newPage(t, browser)
		p.do("360px", chromedp.EmulateViewport(360, 740, chromedp.EmulateMobile))
		p.open(startServer(t, catalog, choicesScript))
		p.say("quote", false)
		p.do("the card", chromedp.WaitVisible(chromedp.CSS(`.card[data-kind="choices"]`)))
		if w := eval[int](p, `document.documentElement.scrollWidth`); w > 360 {
			t.Errorf("page is %dpx wide on a 360px screen", w)
		}
		png, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		saveScreenshot(t, "choices-360.png", png)

		p.do("decline", chromedp.Click(chromedp.CSS(`.card[data-kind="choices"] button.quiet`)))
		p.waitFor("the declined card", `document.querySelector('.card[data-kind="choices"]').dataset.state === "declined"`)
		p.waitFor("the reply", `document.querySelector('.msg.assistant').innerText.includes("Pro it is — thanks!")`)
	})
	t.Logf("browser tests took %v", time.Since(start).Round(time.Millisecond))
}

// surveyKind is a kind made for the test, with every shape the generic form
// draws; its rules are the schema alone and name errors by their full path.
func surveyKind(t *testing.T) kindkit.Kind {
	t.Helper()
	k, err := kindkit.NewKind[map[string]any, map[string]any](kindkit.Descriptor{
		Name: "survey", Capability: "survey_form", ToolName: "request_survey", Source: "test/survey.schema.json",
		ToolSchema: `{"type":"object","properties":{"question":{"type":"string"},"reason":{"type":"string"}},"required":["question","reason"]}`,
		Schema: `{"$defs":{
			"Spec":{"type":"object","required":["question"],"additionalProperties":false,"properties":{"question":{"type":"string"}}},
			"Values":{"type":"object","required":["score","address"],"additionalProperties":false,"properties":{
				"score":{"type":"integer","minimum":1,"maximum":5,"description":"From 1 to 5."},
				"mood":{"type":"string","enum":["happy","meh","sad"]},
				"subscribe":{"type":"boolean"},
				"tags":{"type":"array","items":{"type":"string"}},
				"colors":{"type":"array","items":{"type":"string","enum":["red","green","blue"]}},
				"address":{"$ref":"#/$defs/Address"}}},
			"Address":{"type":"object","required":["city"],"additionalProperties":false,"properties":{
				"city":{"type":"string","minLength":1},"zip":{"type":"string"}}}}}`,
		// As kindgen would derive it: Values with the $ref inlined.
		ValuesSchema: `{"type":"object","required":["score","address"],"additionalProperties":false,"properties":{
			"score":{"type":"integer","minimum":1,"maximum":5,"description":"From 1 to 5."},
			"mood":{"type":"string","enum":["happy","meh","sad"]},
			"subscribe":{"type":"boolean"},
			"tags":{"type":"array","items":{"type":"string"}},
			"colors":{"type":"array","items":{"type":"string","enum":["red","green","blue"]}},
			"address":{"type":"object","required":["city"],"additionalProperties":false,"properties":{
				"city":{"type":"string","minLength":1},"zip":{"type":"string"}}}}}`,
	}, surveyRules{})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

type surveyRules struct{}

func (surveyRules) NormalizeRaise(map[string]any)                  {}
func (surveyRules) NormalizeValues(v any) any                      { return v }
func (surveyRules) CheckSpec(*map[string]any) []kindkit.FieldError { return nil }
func (surveyRules) Validate(_ *map[string]any, v *map[string]any) (*map[string]any, []kindkit.FieldError) {
	return v, nil
}
func (surveyRules) Fallback(spec *map[string]any, reason string) string {
	return kindkit.DefaultFallback("survey", spec, reason)
}
func (surveyRules) ErrorField(_ any, loc []string) string { return kindkit.Path(loc) }

// failingModel streams a little text, then fails: the turn's terminal event
// is an INTERNAL_ERROR.
type failingModel struct{}

func (failingModel) Respond(ctx context.Context, _ agent.ModelRequest, onText func(string)) (agent.ModelResponse, error) {
	onText("Let me check… ")
	return agent.ModelResponse{}, errors.New("the model is down")
}

// TestPageUnderPrefix: the server and the page mounted together under a
// path prefix (http.StripPrefix) work as at the root: the page finds its
// files, its kinds and its socket beside it.
func TestPageUnderPrefix(t *testing.T) {
	chromium(t)
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	model, err := agent.NewScripted([]agent.ScriptEntry{{Kind: "text", Text: "Hello from under /chat/."}})
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := servertest.New(t, servertest.Config{Catalog: catalog, Model: model, Logger: slog.New(slog.DiscardHandler)})
	chat := http.NewServeMux()
	chat.Handle("/ws", srv)
	chat.Handle("/", web.Handler(catalog))
	mux := http.NewServeMux()
	mux.Handle("/chat/", http.StripPrefix("/chat", chat))
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	p := newPage(t, startBrowser(t))
	p.open(hs.URL + "/chat/")
	p.say("hi", true)
	p.waitFor("the reply", `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes("Hello from under /chat/."))`)
}
