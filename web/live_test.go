package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/kinds"
)

// TestLivePage: the page with the server's fan-out and withdrawal. A
// second tab on the conversation sees the card answered in the first and
// the reply stream in; a message while a card waits answers it in words;
// Stop cancels a running turn.
func TestLivePage(t *testing.T) {
	chromium(t)
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	browser := startBrowser(t)
	const card = `.card[data-kind="choices"]`

	t.Run("SecondTab", func(t *testing.T) {
		url := startServer(t, catalog, choicesScript)
		a := newPage(t, browser)
		a.open(url)
		a.say("I'd like a quote", true)
		a.do("the card in the first tab", chromedp.WaitVisible(chromedp.CSS(card+` .chip[data-label="Pro"]`)))
		b := newPage(t, browser) // same profile: it resumes the stored conversation
		b.open(url)
		b.do("the card in the second tab", chromedp.WaitVisible(chromedp.CSS(card+` .chip[data-label="Pro"]`)))
		a.do("answer in the first tab", chromedp.Click(chromedp.CSS(card+` .chip[data-label="Pro"]`)),
			chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
		b.waitFor("the card answered elsewhere", `document.querySelector('`+card+`').dataset.state === "answered"`)
		b.waitFor("the reply, live", `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes("Pro it is — thanks!"))`)
		b.do("the second tab's composer", chromedp.WaitEnabled(chromedp.CSS("#send")))
	})

	t.Run("AnswerInWords", func(t *testing.T) {
		p := newPage(t, browser)
		p.open(startServer(t, catalog, choicesScript))
		p.do("a fresh conversation", chromedp.Click(chromedp.CSS("#new-conversation")))
		p.waitFor("the session", `document.querySelector("#status").dataset.state === "online"`)
		p.say("I'd like a quote", true)
		p.do("the card", chromedp.WaitVisible(chromedp.CSS(card+` .chip[data-label="Pro"]`)))
		if ph := eval[string](p, `document.querySelector("#message").placeholder`); !strings.Contains(ph, "write your answer") {
			t.Errorf("composer placeholder while the card waits: %q", ph)
		}
		p.say("Pro, please", true)
		p.waitFor("the card closed", `document.querySelector('`+card+` .card-status').innerText.includes("Answered in words")`)
		p.waitFor("the reply to the words", `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes("Pro it is — thanks!"))`)
		if got := p.text(`#log`); strings.Contains(got, "Stopped.") {
			t.Errorf("answering in words reads as a stop:\n%s", got)
		}
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
}
