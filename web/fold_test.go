package web_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/kinds"
)

// TestLongMessageFolds: an 80-line paste is shown folded to its first
// lines, with a button that unfolds it and says so to a screen reader; a
// short message is not folded. axe finds nothing serious, in dark mode on
// a phone.
func TestLongMessageFolds(t *testing.T) {
	chromium(t)
	src := axeSource(t)
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	p := newPage(t, startBrowser(t))
	p.setLook(390, 844, true, "dark")
	p.open(startServer(t, catalog, []agent.ScriptEntry{{Kind: "text", Text: "Got it."}, {Kind: "text", Text: "Sure."}}))
	eval[bool](p, `(() => { document.querySelector('#message').value = Array.from({length: 80}, (_, i) => "log line " + i).join("\n"); return true })()`)
	p.do("send the paste", chromedp.Click(chromedp.CSS("#send"), chromedp.NodeEnabled))
	p.waitFor("the reply", `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes("Got it."))`)
	p.say("short", true)
	p.waitFor("the second reply", `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes("Sure."))`)

	folded := eval[float64](p, `document.querySelector('.msg.user').getBoundingClientRect().height`)
	if folded > 400 {
		t.Errorf("the folded paste is %.0f px tall", folded)
	}
	if n := eval[int](p, `document.querySelectorAll('.msg.user .unfold').length`); n != 1 {
		t.Errorf("%d unfold buttons, want one, on the long message only", n)
	}
	p.axe(src, "a folded paste at 390 px, dark")
	p.do("unfold", chromedp.Click(chromedp.CSS(".msg.user .unfold"), chromedp.NodeVisible))
	if got := eval[string](p, `document.querySelector('.msg.user .unfold').getAttribute("aria-expanded")`); got != "true" {
		t.Errorf("aria-expanded %q after unfolding", got)
	}
	if unfolded := eval[float64](p, `document.querySelector('.msg.user').getBoundingClientRect().height`); unfolded < 3*folded {
		t.Errorf("unfolded %.0f px, folded %.0f px: the whole paste is not shown", unfolded, folded)
	}
}
