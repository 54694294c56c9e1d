package web_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/mcptest"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/kinds"
)

// countFrames makes the page keep the action of every frame it sends, in
// window.__sent.
const countFrames = `(() => {
	window.__sent = [];
	const send = WebSocket.prototype.send;
	WebSocket.prototype.send = function (d) { try { window.__sent.push(JSON.parse(d).action) } catch (e) {} return send.call(this, d) };
})()`

// TestPageFixes: the smaller things of issue 40, each as a person meets it.
func TestPageFixes(t *testing.T) {
	chromium(t)
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	browser := startBrowser(t)
	const identity = `.card[data-kind="identity_intake"]`

	// Enter in a contact field moves on to the next field and, from the
	// last, to Submit: the card is never sent half filled by a stray Enter.
	t.Run("IdentityEnterMovesOn", func(t *testing.T) {
		p := newPage(t, browser)
		p.open(startServer(t, catalog, []agent.ScriptEntry{
			{Kind: "toolCall", Name: "request_identity_intake", Arguments: `{"fields":["name","email",{"key":"phone","required":false,"label":"Mobile"}],"reason":"to send you the quote"}`},
			{Kind: "text", Text: "Thanks, Ada."},
		}))
		p.say("send me a quote", true)
		p.do("the identity form", chromedp.WaitVisible(chromedp.CSS(identity+` input[name="name"]`)))
		focused := func(sel string) bool {
			return eval[bool](p, `document.activeElement === document.querySelector('`+identity+` `+sel+`')`)
		}
		for _, step := range []struct{ field, text, next string }{
			{"name", "Ada", `input[name="email"]`},
			{"email", "ada@example.com", `input[name="phone"]`},
			{"phone", "", `button[type="submit"]`},
		} {
			p.do("Enter in "+step.field, chromedp.Focus(chromedp.CSS(identity+` input[name="`+step.field+`"]`)),
				chromedp.SendKeys(chromedp.CSS(identity+` input[name="`+step.field+`"]`), step.text), chromedp.KeyEvent("\r"))
			if got := eval[string](p, `document.querySelector('`+identity+`').dataset.state`); got != "open" {
				t.Fatalf("Enter in %s sent the card (state %s)", step.field, got)
			}
			if !focused(step.next) {
				t.Errorf("Enter in %s moved focus to %s, want %s", step.field, eval[string](p, `document.activeElement.outerHTML.slice(0, 80)`), step.next)
			}
		}
		p.do("Enter on Submit", chromedp.KeyEvent("\r"))
		p.waitFor("the answered card", `document.querySelector('`+identity+`').dataset.state === "answered"`)
		if got := p.text(identity + ` .card-status`); got != "Name: Ada · Email: ada@example.com" {
			t.Errorf("card status %q", got)
		}
	})

	// An empty contact card is not sent: each required field says it is
	// required, flagged for assistive technology, and focus goes to the
	// first; a card of optional fields asks for one by the fields' names.
	t.Run("IdentityRequiredChecked", func(t *testing.T) {
		p := newPage(t, browser)
		p.open(startServer(t, catalog, []agent.ScriptEntry{
			{Kind: "toolCall", Name: "request_identity_intake", Arguments: `{"fields":["name","email",{"key":"phone","required":false,"label":"Mobile"}],"reason":"to send you the quote"}`},
			{Kind: "text", Text: "Thanks."},
		}))
		p.say("send me a quote", true)
		p.do("the identity form", chromedp.WaitVisible(chromedp.CSS(identity+` input[name="email"]`)))
		p.do("count frames", chromedp.Evaluate[chromedp.Void](countFrames))
		p.do("submit it empty", chromedp.Click(chromedp.CSS(identity+` button[type="submit"]`)))
		for _, f := range []string{"name", "email"} {
			sel := identity + ` .field[data-field="` + f + `"]`
			p.do("the "+f+" error", chromedp.WaitVisible(chromedp.CSS(sel+` .field-error`)))
			if got := p.text(sel + ` .field-error`); got != "This is required." {
				t.Errorf("%s error %q", f, got)
			}
			if got := eval[string](p, `document.querySelector('`+sel+` input').getAttribute("aria-invalid")`); got != "true" {
				t.Errorf("%s aria-invalid=%q", f, got)
			}
			if !eval[bool](p, `document.querySelector('`+sel+` input').getAttribute("aria-describedby").split(" ").includes(document.querySelector('`+sel+` .field-error').id)`) {
				t.Errorf("%s is not described by its error", f)
			}
		}
		if got := p.text(identity + ` .field[data-field="phone"] .field-error`); got != "" {
			t.Errorf("the optional phone has an error: %q", got)
		}
		if got := p.text(identity + ` .card-error`); strings.Contains(got, "name/email") {
			t.Errorf("the card's error names raw keys: %q", got)
		}
		if !eval[bool](p, `document.activeElement === document.querySelector('`+identity+` input[name="name"]')`) {
			t.Errorf("focus on %s, want the first field in error", eval[string](p, `document.activeElement.outerHTML.slice(0, 80)`))
		}
		if sent := eval[[]string](p, `window.__sent`); strings.Contains(strings.Join(sent, " "), "submit_interaction") {
			t.Errorf("the empty card was sent: %q", sent)
		}
		p.do("fill it in", chromedp.SendKeys(chromedp.CSS(identity+` input[name="name"]`), "Ada"),
			chromedp.SendKeys(chromedp.CSS(identity+` input[name="email"]`), "ada@example.com"),
			chromedp.Click(chromedp.CSS(identity+` button[type="submit"]`)))
		p.waitFor("the answered card", `document.querySelector('`+identity+`').dataset.state === "answered"`)
	})

	t.Run("IdentityAllOptional", func(t *testing.T) {
		p := newPage(t, browser)
		p.open(startServer(t, catalog, []agent.ScriptEntry{
			{Kind: "toolCall", Name: "request_identity_intake", Arguments: `{"fields":[{"key":"name","required":false},{"key":"phone","required":false,"label":"Mobile"}],"reason":"to call you back"}`},
			{Kind: "text", Text: "Thanks."},
		}))
		p.say("call me", true)
		p.do("the identity form", chromedp.WaitVisible(chromedp.CSS(identity+` input[name="phone"]`)))
		p.do("submit it empty", chromedp.Click(chromedp.CSS(identity+` button[type="submit"]`)))
		p.do("the card's error", chromedp.WaitVisible(chromedp.CSS(identity+` .card-error`)))
		if got := p.text(identity + ` .card-error`); !strings.Contains(got, "Name") || !strings.Contains(got, "Mobile") || strings.Contains(got, "name/") {
			t.Errorf("the card's error %q, want the fields named as the card names them", got)
		}
	})

	// A reply that fails live offers to ask again, as it does after a
	// reload.
	t.Run("RetryAfterLiveFailure", func(t *testing.T) {
		p := newPage(t, browser)
		p.open(startServerConfig(t, servertest.Config{Catalog: catalog, Model: failingModel{}}))
		p.say("hello", true)
		p.waitFor("the error", `document.querySelector('.msg.assistant .turn-error')`)
		p.do("try again", chromedp.Click(chromedp.CSS(`.msg.assistant button.retry`), chromedp.NodeVisible))
		p.waitFor("the message sent again", `[...document.querySelectorAll('.msg.user')].filter(m => m.innerText.includes("hello")).length === 2`)
		p.waitFor("its reply fails too", `document.querySelectorAll('.msg.assistant .turn-error').length === 2`)
	})

	// Copy of a reply that had a card between its words keeps them apart
	// with a blank line, live and after a reload.
	t.Run("CopyAroundCard", func(t *testing.T) {
		p := newPage(t, browser)
		p.open(startServerConfig(t, servertest.Config{Catalog: catalog, Model: &stepsModel{}}))
		p.say("compare the plans", true)
		card := `.card[data-kind="choices"][data-state="open"]`
		p.do("the card", chromedp.WaitVisible(chromedp.CSS(card+` button[type="submit"]`)))
		p.do("answer", chromedp.Click(chromedp.CSS(card+` .chip[data-label="Pro"]`)), chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
		const want = "Let me ask you something first.\n\n## Comparison\n\nPro has SSO."
		for _, where := range []string{"live", "history"} {
			if where == "history" {
				p.do("reload", chromedp.Reload())
				p.waitFor("the history", `document.querySelector('.history .msg.assistant h2')`)
			}
			p.do("copy the reply ("+where+")", chromedp.WaitVisible(chromedp.CSS(`.msg.assistant > button.copy`)),
				chromedp.Evaluate[chromedp.Void](`window.__copied = null; navigator.clipboard.writeText = async (s) => { window.__copied = s }`),
				chromedp.Click(chromedp.CSS(`.msg.assistant > button.copy`)))
			p.waitFor("the copied text", `window.__copied !== null`)
			if got := eval[string](p, `window.__copied`); got != want {
				t.Errorf("%s: Copy put %q on the clipboard, want %q", where, got, want)
			}
		}
	})

	// A draft belongs to its tab: a second tab opens with an empty
	// composer, while the first keeps its draft through a reload.
	t.Run("DraftPerTab", func(t *testing.T) {
		url := startServer(t, catalog, []agent.ScriptEntry{{Kind: "text", Text: "Noted."}})
		a := newPage(t, browser)
		a.open(url)
		a.do("type a draft", chromedp.SendKeys(chromedp.CSS("#message"), "only for this tab"))
		b := newPage(t, browser)
		b.open(url)
		if got := eval[string](b, `document.querySelector("#message").value`); got != "" {
			t.Errorf("a second tab opens with %q in its composer", got)
		}
		a.do("reload the first tab", chromedp.Reload())
		a.waitFor("its draft after the reload", `document.querySelector("#message").value === "only for this tab"`)
	})

	// A code block that scrolls is a named region: aria-label on a pre of
	// no role is prohibited.
	t.Run("CodeBlockRegion", func(t *testing.T) {
		p := newPage(t, browser)
		p.open(startServer(t, catalog, []agent.ScriptEntry{{Kind: "text", Text: "Run:\n\n```\ngo run ./cmd/kindserver\n```\n"}}))
		p.say("how?", true)
		p.waitFor("the code block", `document.querySelector('.msg.assistant .md pre')`)
		if got := eval[string](p, `(() => { const pre = document.querySelector('.msg.assistant .md pre'); return [pre.getAttribute("role"), pre.getAttribute("aria-label"), pre.tabIndex].join(" ") })()`); got != "region Code 0" {
			t.Errorf("the code block's role, name and tab index: %q, want region Code 0", got)
		}
		if os.Getenv("KINDKIT_TEST_AXE") != "" {
			p.do("load axe-core", chromedp.Evaluate[chromedp.Void](axeSource(t)))
			ctx, cancel := context.WithTimeout(p.ctx, stepTimeout)
			defer cancel()
			found, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`axe.run(document.querySelector('.msg.assistant .md pre'), {runOnly: ["aria-prohibited-attr"]}).then(r => [...r.violations, ...r.incomplete].map(v => v.id))`, chromedp.EvalAwaitPromise))
			if err != nil {
				t.Fatalf("run axe: %v", err)
			}
			if len(found) > 0 {
				t.Errorf("axe on the code block: %q", found)
			}
		}
	})

	// A write confirmation that waits can be stopped: the person may
	// rather say what to do instead.
	t.Run("StopWhileConfirmationWaits", func(t *testing.T) {
		var ran atomic.Int32
		model, err := agent.NewScripted([]agent.ScriptEntry{
			{Kind: "toolCall", Name: "delete_record", Arguments: `{"id":"42"}`},
			{Kind: "text", Text: "Record 43, then."},
		})
		if err != nil {
			t.Fatal(err)
		}
		p := newPage(t, browser)
		p.open(startServerConfig(t, servertest.Config{Catalog: catalog, Model: model, ConfirmTools: []string{"delete"},
			Tools: []agent.HostTool{{Tool: agent.Tool{Name: "delete_record", Parameters: []byte(`{"type":"object"}`)},
				Run: func(context.Context, json.RawMessage) (agent.Result, error) {
					ran.Add(1)
					return agent.Result{Text: "deleted"}, nil
				}}}}))
		p.say("delete record 42", true)
		card := `.card[data-kind="confirmation"]`
		p.do("the confirmation", chromedp.WaitVisible(chromedp.CSS(card+` button.primary`)))
		p.do("stop", chromedp.Click(chromedp.CSS("#stop"), chromedp.NodeVisible, chromedp.NodeEnabled))
		p.waitFor("the stopped turn", `[...document.querySelectorAll('.msg.assistant .turn-note')].some(n => n.innerText.includes("Stopped."))`)
		if got := eval[string](p, `document.querySelector('`+card+`').dataset.state`); got == "open" {
			t.Error("the confirmation is still open after Stop")
		}
		if !eval[bool](p, `[...document.querySelectorAll('`+card+` button')].every(b => b.disabled)`) {
			t.Error("the confirmation can still be answered after Stop")
		}
		p.do("the composer again", chromedp.WaitEnabled(chromedp.CSS("#send")), chromedp.WaitNotVisible(chromedp.CSS("#stop")))
		p.say("no, record 43", true)
		p.waitFor("the reply", `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes("Record 43, then."))`)
		if n := ran.Load(); n != 0 {
			t.Errorf("the stopped tool ran %d times", n)
		}
	})

	// At a phone's width a table keeps its words on a line or two and
	// scrolls sideways, with a shadow at the edge that hides more.
	t.Run("TableAtPhoneWidth", func(t *testing.T) {
		p := newPage(t, browser)
		p.setLook(375, 740, true, "light")
		p.open(startServer(t, catalog, []agent.ScriptEntry{{Kind: "text", Text: "| Plan | Seats | Single sign-on | Support |\n|---|---|---|---|\n" +
			"| Starter | Up to 5 people | Not included in this plan | Community forum answers |\n| Enterprise | Unlimited | Included | Dedicated account manager |\n"}}))
		p.say("compare", true)
		p.waitFor("the table", `document.querySelector('.msg.assistant .md table')`)
		lines := eval[[]int](p, `[...document.querySelectorAll('.msg.assistant .md tr > :last-child')].map(c => Math.round(c.querySelector("*") ? 0 : (() => { const r = document.createRange(); r.selectNodeContents(c); return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size })()))`)
		for i, n := range lines {
			if n > 2 {
				t.Errorf("row %d's last cell takes %d lines", i, n)
			}
		}
		if !eval[bool](p, `(() => { const w = document.querySelector('.msg.assistant .md .table-scroll'); return w.scrollWidth > w.clientWidth })()`) {
			t.Error("the table does not scroll sideways")
		}
		if !eval[bool](p, `getComputedStyle(document.querySelector('.msg.assistant .md .table-scroll')).backgroundImage.includes("gradient")`) {
			t.Error("nothing hints that the table scrolls")
		}
		if w := eval[int](p, `document.documentElement.scrollWidth`); w > 375 {
			t.Errorf("the page is %d px wide at 375 px", w)
		}
		png, err := chromedp.Run(p.ctx, chromedp.ScreenshotScale(chromedp.CSS(`.msg.assistant`), 2))
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		saveScreenshot(t, "table-375.png", png)
	})

	// Scrolled up while a reply comes in, the person is offered a way back
	// to its end, which goes when used or when they scroll there.
	t.Run("JumpToLatest", func(t *testing.T) {
		m := &dripModel{release: make(chan struct{})}
		p := newPage(t, browser)
		p.open(startServerConfig(t, servertest.Config{Catalog: catalog, Model: m}))
		jump := `#jump`
		if eval[bool](p, `!document.querySelector("`+jump+`").hidden`) {
			t.Error("Jump to latest shows with nothing to jump to")
		}
		p.say("tell me everything", true)
		p.waitFor("a log that scrolls", `document.querySelector("#log").scrollHeight > document.querySelector("#log").clientHeight * 3`)
		p.do("scroll up", chromedp.Evaluate[chromedp.Void](`document.querySelector("#log").scrollTop = 0`))
		close(m.release)
		p.waitFor("more of the reply", `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes("The end."))`)
		p.do("Jump to latest", chromedp.WaitVisible(chromedp.CSS(jump)))
		if got := eval[string](p, `document.querySelector("`+jump+`").tagName + " " + document.querySelector("`+jump+`").innerText`); got != "BUTTON Jump to latest" {
			t.Errorf("the jump control: %q", got)
		}
		if eval[int](p, `document.querySelector("#log").scrollTop`) != 0 {
			t.Error("the log moved while the person read above")
		}
		png, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		saveScreenshot(t, "jump-to-latest.png", png)
		p.do("jump", chromedp.Click(chromedp.CSS(jump)))
		p.waitFor("the end in view", `(() => { const l = document.querySelector("#log"); return l.scrollHeight - l.scrollTop - l.clientHeight < 2 })()`)
		p.do("the button goes", chromedp.WaitNotVisible(chromedp.CSS(jump)))

		// Scrolled up again, the next words bring it back; scrolling to the
		// end by hand takes it away.
		p.do("scroll up again", chromedp.Evaluate[chromedp.Void](`document.querySelector("#log").scrollTop = 0`))
		p.say("more", true)
		p.do("scroll up once more", chromedp.Evaluate[chromedp.Void](`document.querySelector("#log").scrollTop = 0`))
		p.do("Jump to latest again", chromedp.WaitVisible(chromedp.CSS(jump)))
		p.do("scroll to the end by hand", chromedp.Evaluate[chromedp.Void](`document.querySelector("#log").scrollTop = document.querySelector("#log").scrollHeight`))
		p.do("the button goes again", chromedp.WaitNotVisible(chromedp.CSS(jump)))
	})
}

// dripModel writes a long reply, then, once released, its end; a second
// message gets a long reply at once.
type dripModel struct {
	calls   atomic.Int32
	release chan struct{}
}

func (m *dripModel) Respond(ctx context.Context, req agent.ModelRequest, onText func(string)) (agent.ModelResponse, error) {
	long := strings.Repeat("A line of a long answer.\n\n", 60)
	if m.calls.Add(1) > 1 {
		for range 60 {
			onText("More words.\n\n")
			select {
			case <-time.After(30 * time.Millisecond):
			case <-ctx.Done():
				return agent.ModelResponse{}, ctx.Err()
			}
		}
		return agent.ModelResponse{Text: strings.Repeat("More words.\n\n", 60), Position: req.Position + 1}, nil
	}
	onText(long)
	select {
	case <-m.release:
	case <-ctx.Done():
		return agent.ModelResponse{}, ctx.Err()
	}
	onText("The end.")
	return agent.ModelResponse{Text: long + "The end.", Position: req.Position + 1}, nil
}

// TestLinkCardWaits: while a link card (an MCP server's URL-mode
// elicitation) waits, its tool reads as waiting for the person, the card
// shows no reason worded for the model, and the composer does not offer
// to answer a link in words.
func TestLinkCardWaits(t *testing.T) {
	chromium(t)
	everything := mcptest.Everything(t)
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	src, model := everythingAsks(t, everything, "everything__trigger-url-elicitation", urlArgs("https://accounts.example.com/connect"))
	p := newPage(t, startBrowser(t))
	p.open(startServerConfig(t, servertest.Config{Catalog: catalog, Model: model, ToolSets: []agent.ToolSet{src}, ParkTimeout: time.Hour}))
	p.say("connect my account", true)
	card := `.card[data-kind="elicitation"]`
	p.do("the link card", chromedp.WaitVisible(chromedp.CSS(card+` a.link-url`)))
	if got := p.text(card + ` .card-reason`); strings.Contains(got, "asks, for its tool") || strings.Contains(got, "Asked everything") {
		t.Errorf("the card's reason reads %q", got)
	}
	tool := `.tool[data-tool="everything__trigger-url-elicitation"]`
	p.waitFor("the tool line", `document.querySelector('`+tool+`')`)
	if got := p.text(tool + ` .tool-state`); got != "waiting for your answer" {
		t.Errorf("the tool line says %q while the link card waits", got)
	}
	if ph := eval[string](p, `document.querySelector("#message").placeholder`); strings.Contains(ph, "in words") {
		t.Errorf("the composer offers %q for a link card", ph)
	}
	p.do("Done", chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
	p.waitFor("the reply", `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes("Thanks."))`)
	p.waitFor("the tool done", `document.querySelector('`+tool+`').dataset.state === "done"`)
	if ph := eval[string](p, `document.querySelector("#message").placeholder`); ph != "Write a message…" {
		t.Errorf("the composer's placeholder after the card: %q", ph)
	}
}
