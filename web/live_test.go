package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/kinds"
)

// TestLivePage: what issue 14 asked of the page. A second tab on the
// conversation sees the card answered in the first and the reply stream
// in; a message while a card waits answers it in words; Stop cancels a
// running turn; replies are Markdown, sanitised; cards behave.
func TestLivePage(t *testing.T) {
	chromium(t)
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	browser := startBrowser(t)
	const card = `.card[data-kind="choices"]`
	// twoTabs opens a tab whose message raises a card, then a second tab on
	// the same conversation (same profile: it resumes the stored one), and
	// waits for the card in both.
	twoTabs := func(t *testing.T) (a, b *page) {
		t.Helper()
		url := startServer(t, catalog, choicesScript)
		a = newPage(t, browser)
		a.open(url)
		a.say("I'd like a quote", true)
		a.do("the card in the first tab", chromedp.WaitVisible(chromedp.CSS(card+` .chip[data-label="Pro"]`)))
		b = newPage(t, browser)
		b.open(url)
		b.do("the card in the second tab", chromedp.WaitVisible(chromedp.CSS(card+` .chip[data-label="Pro"]`)))
		return a, b
	}

	t.Run("SecondTab", func(t *testing.T) {
		a, b := twoTabs(t)
		a.do("answer in the first tab", chromedp.Click(chromedp.CSS(card+` .chip[data-label="Pro"]`)),
			chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
		b.waitFor("the card answered elsewhere", `document.querySelector('`+card+`').dataset.state === "answered"`)
		b.waitFor("the reply, live", `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes("Pro it is — thanks!"))`)
		b.do("the second tab's composer", chromedp.WaitEnabled(chromedp.CSS("#send")))
	})

	// A card answered in words in another tab reads so in this one too:
	// the wire says only that its turn was cancelled, and the page reads
	// how the card ended from the history.
	// The first tab shows what the second sent, once, before the reply.
	t.Run("AnswerInWordsElsewhere", func(t *testing.T) {
		a, b := twoTabs(t)
		b.say("Pro, please", true)
		a.waitFor("the card closed in the first tab", `document.querySelector('`+card+` .card-status').innerText.includes("Answered in words")`)
		a.waitFor("the second tab's message in the first", `[...document.querySelectorAll('.msg.user')].filter(m => m.innerText.includes("Pro, please")).length === 1`)
	})

	t.Run("AnswerInWords", func(t *testing.T) {
		p := newPage(t, browser)
		p.open(startServer(t, catalog, choicesScript))
		p.do("a fresh conversation", chromedp.Click(chromedp.CSS("#new-conversation")))
		p.waitFor("the session", `document.querySelector("#status").dataset.state === "online"`)
		p.say("I'd like a quote", true)
		p.do("the card", chromedp.WaitVisible(chromedp.CSS(card+` .chip[data-label="Pro"]`)))
		if ph := eval[string](p, `document.querySelector("#message").placeholder`); !strings.Contains(ph, "answer in words") {
			t.Errorf("composer placeholder while the card waits: %q", ph)
		}
		// It fits a 320 px phone's composer, not clipped.
		p.setLook(320, 640, true, "light")
		fits := `(() => { const m = document.querySelector("#message"), s = getComputedStyle(m), c = document.createElement("canvas").getContext("2d"); c.font = s.font; return c.measureText(m.placeholder).width <= m.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight) })()`
		if !eval[bool](p, fits) {
			t.Errorf("the placeholder %q is clipped at 320 px", eval[string](p, `document.querySelector("#message").placeholder`))
		}
		p.setLook(1280, 800, false, "light")
		p.say("Pro, please", true)
		p.waitFor("the card closed", `document.querySelector('`+card+` .card-status').innerText.includes("Answered in words")`)
		p.waitFor("the reply to the words", `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes("Pro it is — thanks!"))`)
		if got := p.text(`#log`); strings.Contains(got, "Stopped.") {
			t.Errorf("answering in words reads as a stop:\n%s", got)
		}
		// New conversation asks once more before it clears what is shown.
		p.do("New conversation, once", chromedp.Click(chromedp.CSS("#new-conversation")))
		if n := eval[int](p, `document.querySelectorAll("#log .msg").length`); n == 0 || !strings.Contains(p.text("#new-conversation"), "again") {
			t.Errorf("one click on New conversation: %d messages left, button %q; want them kept and a second click asked for", n, p.text("#new-conversation"))
		}
		p.do("New conversation, again", chromedp.Click(chromedp.CSS("#new-conversation")))
		p.waitFor("the cleared view", `document.querySelectorAll("#log .msg").length === 0`)
	})

	t.Run("Stop", func(t *testing.T) {
		p := newPage(t, browser)
		p.open(startServer(t, catalog, []agent.ScriptEntry{{Kind: "text", Text: "Too late.", DelayMs: 60_000}}))
		p.do("a fresh conversation", chromedp.Click(chromedp.CSS("#new-conversation")))
		p.waitFor("the session", `document.querySelector("#status").dataset.state === "online"`)
		p.say("tell me a long story", true)
		p.do("stop", chromedp.WaitVisible(chromedp.CSS("#stop")), chromedp.Click(chromedp.CSS("#stop")))
		p.waitFor("the stopped turn", `document.querySelector('.msg.assistant .turn-note') && document.querySelector('.msg.assistant .turn-note').innerText.includes("Stopped.")`)
		p.do("the composer again", chromedp.WaitEnabled(chromedp.CSS("#send")), chromedp.WaitNotVisible(chromedp.CSS("#stop")))
	})

	// A reply's Markdown is drawn (headings, bold, code,
	// links that open in a new tab) and nothing in it runs as HTML.
	t.Run("Markdown", func(t *testing.T) {
		reply := "## Plans\n\n**Pro** suits teams; run `kk up`.\n\n```\ngo run ./cmd/kindserver\n```\n\n" +
			"See [the docs](https://example.com/docs) or [this](javascript:window.__pwned=1).\n\n" +
			`<img src="x" onerror="window.__pwned=1"><script>window.__pwned=1</script>`
		p := newPage(t, browser)
		p.open(startServer(t, catalog, []agent.ScriptEntry{{Kind: "text", Text: reply}}))
		p.say("which plan?", true)
		p.waitFor("the reply", `document.querySelector('.msg.assistant .md h2')`)
		checks := map[string]string{
			"heading":               `document.querySelector('.msg.assistant .md h2').innerText === "Plans"`,
			"bold":                  `document.querySelector('.msg.assistant .md strong').innerText === "Pro"`,
			"inline code":           `document.querySelector('.msg.assistant .md p code').innerText === "kk up"`,
			"code block":            `document.querySelector('.msg.assistant .md pre code').innerText.includes("go run ./cmd/kindserver")`,
			"link in a new tab":     `(() => { const a = document.querySelector('.msg.assistant .md a[href="https://example.com/docs"]'); return !!a && a.target === "_blank" && a.rel.includes("noopener") })()`,
			"no javascript: link":   `![...document.querySelectorAll('.msg.assistant a')].some(a => (a.getAttribute("href") || "").startsWith("javascript"))`,
			"no handler, no script": `!document.querySelector('.msg.assistant [onerror], .msg.assistant script') && window.__pwned === undefined`,
		}
		p.do("copy the reply", chromedp.Evaluate[chromedp.Void](`window.__copied = null; navigator.clipboard.writeText = async (s) => { window.__copied = s }`),
			chromedp.Click(chromedp.CSS(`.msg.assistant > button.copy`)))
		p.waitFor("the copied text", `window.__copied !== null`)
		if got := eval[string](p, `window.__copied`); got != reply {
			t.Errorf("Copy put %q on the clipboard, want the reply's Markdown", got)
		}
		p.do("copy the code", chromedp.Evaluate[chromedp.Void](`window.__copied = null`),
			chromedp.Click(chromedp.CSS(`.msg.assistant .md pre + button.copy`)))
		p.waitFor("the copied code", `window.__copied !== null`)
		if got := eval[string](p, `window.__copied`); got != "go run ./cmd/kindserver\n" {
			t.Errorf("Copy code put %q on the clipboard, want the code block's text", got)
		}
		if got := eval[string](p, `document.querySelector('.msg.assistant .md pre + button.copy').getAttribute("aria-label")`); got != "Copy code block" {
			t.Errorf("the code's copy button is labelled %q", got)
		}
		for name, js := range checks {
			if !eval[bool](p, js) {
				t.Errorf("%s: %s is false; the bubble's HTML:\n%s", name, js, eval[string](p, `document.querySelector('.msg.assistant').innerHTML`))
			}
		}
	})

	// A single-select question takes a chip or words, not
	// both; Enter in the words box moves on to Submit without sending the card; an error clears as
	// it is fixed; a long unbroken label wraps instead of widening the page;
	// text people and models write gets dir="auto".
	t.Run("CardDetails", func(t *testing.T) {
		long := strings.Repeat("W", 300)
		p := newPage(t, browser)
		p.open(startServer(t, catalog, []agent.ScriptEntry{
			{Kind: "toolCall", Name: "request_choices", Arguments: `{"questions":[{"question":"Which plan?","header":"Plan","options":["Basic","` + long + `"]}],"reason":"to quote"}`},
			{Kind: "text", Text: "Thanks."},
		}))
		const card = `.card[data-kind="choices"]`
		p.do("a phone-sized window", chromedp.EmulateViewport(390, 844))
		p.say("שלום", true)
		p.do("the card", chromedp.WaitVisible(chromedp.CSS(card+` .chip[data-label="Basic"]`)))
		fits := `(() => {
			const c = document.querySelector('` + card + `').getBoundingClientRect();
			const chip = document.querySelector('` + card + ` .chip:last-child').getBoundingClientRect();
			return chip.right <= c.right + 1 && document.documentElement.scrollWidth <= document.documentElement.clientWidth;
		})()`
		if !eval[bool](p, fits) {
			t.Errorf("a long label overflows: chip right %v, card right %v, page scrollWidth %d, clientWidth %d",
				eval[float64](p, `document.querySelector('`+card+` .chip:last-child').getBoundingClientRect().right`),
				eval[float64](p, `document.querySelector('`+card+`').getBoundingClientRect().right`),
				eval[int](p, `document.documentElement.scrollWidth`), eval[int](p, `document.documentElement.clientWidth`))
		}
		if got := eval[string](p, `document.querySelector('.msg.user .text').getAttribute("dir")`); got != "auto" {
			t.Errorf(`the user's bubble has dir=%q, want "auto"`, got)
		}

		p.do("submit nothing", chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
		planErr := card + ` .question[data-header="Plan"] .field-error`
		p.do("the Plan error", chromedp.WaitVisible(chromedp.CSS(planErr)))
		p.do("pick Basic", chromedp.Click(chromedp.CSS(card+` .chip[data-label="Basic"]`)))
		if !eval[bool](p, `document.querySelector('`+planErr+`').hidden`) {
			t.Error("the Plan error stays after a pick")
		}
		other := card + ` .question[data-header="Plan"] input.other`
		p.do("words instead", chromedp.SendKeys(chromedp.CSS(other), "Enterprise"), chromedp.KeyEvent("\r"))
		if got := eval[string](p, `document.querySelector('`+card+` .chip[data-label="Basic"]').getAttribute("aria-pressed")`); got != "false" {
			t.Errorf("Basic is still picked (aria-pressed=%s) after typing an answer to a single-select question", got)
		}
		if got := eval[string](p, `document.querySelector('`+card+`').dataset.state`); got != "open" {
			t.Errorf("Enter in the words box sent the card (state %s)", got)
		}
		if !eval[bool](p, `document.activeElement === document.querySelector('`+card+` button[type="submit"]')`) {
			t.Errorf("Enter in the last question's words box did not move on to Submit (focus on %s)", eval[string](p, `document.activeElement.outerHTML.slice(0, 80)`))
		}
		p.do("Basic again", chromedp.Click(chromedp.CSS(card+` .chip[data-label="Basic"]`)))
		if got := eval[string](p, `document.querySelector('`+other+`').value`); got != "" {
			t.Errorf("the words %q stay beside a picked chip", got)
		}
		p.do("send the card", chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
		p.waitFor("the answered card", `document.querySelector('`+card+`').dataset.state === "answered"`)
	})
}
