package web_test

import (
	"testing"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/kinds"
)

// TestWideReply: a reply with a wide code block, a right-to-left paragraph
// and a table, at 390 px. What scrolls sideways is reachable by keyboard
// (axe finds nothing serious), each paragraph takes its own direction, as
// does what the person types, and the table scrolls rather than cutting
// its words.
func TestWideReply(t *testing.T) {
	chromium(t)
	src := axeSource(t)
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	reply := "Here is the setup:\n\n```\nkindserver -store postgres://kindkit@db.internal.example.com:5432/kindkit?sslmode=verify-full -model openai -openai-model gpt-4o-mini\n```\n\n" +
		"שלום, זו פסקה בעברית.\n\n" +
		"| Plan | Seats | Single sign-on | Enterprise support |\n|---|---|---|---|\n| Starter | 5 | Unavailable | Community |\n| Enterprise | Unlimited | Included | Dedicated |\n"
	browser := startBrowser(t)
	p := newPage(t, browser)
	p.setLook(390, 844, true, "light")
	p.open(startServer(t, catalog, []agent.ScriptEntry{{Kind: "text", Text: reply}}))
	p.say("how do I set it up?", true)
	p.waitFor("the table", `document.querySelector('.msg.assistant .md table')`)
	checks := map[string]string{
		"the code block is focusable":   `document.querySelector('.msg.assistant .md pre').tabIndex === 0`,
		"the table scrolls":             `(() => { const w = document.querySelector('.msg.assistant .md .table-scroll'); return !!w && w.tabIndex === 0 && w.scrollWidth > w.clientWidth })()`,
		"no word is cut in the table":   `[...document.querySelectorAll('.msg.assistant .md td, .msg.assistant .md th')].every(c => { const r = document.createRange(); r.selectNodeContents(c); return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size <= c.innerText.trim().split(/\s+/).length })`,
		"Hebrew reads right to left":    `(() => { const p = [...document.querySelectorAll('.msg.assistant .md p')].find(p => p.innerText.includes("שלום")); return !!p && getComputedStyle(p).direction === "rtl" })()`,
		"English reads left to right":   `(() => { const p = [...document.querySelectorAll('.msg.assistant .md p')].find(p => p.innerText.includes("Here is")); return !!p && getComputedStyle(p).direction === "ltr" })()`,
		"the composer takes its text's": `document.querySelector('#message').getAttribute("dir") === "auto"`,
	}
	for name, js := range checks {
		if !eval[bool](p, js) {
			t.Errorf("%s: %s is false; the bubble's HTML:\n%s", name, js, eval[string](p, `document.querySelector('.msg.assistant').innerHTML`))
		}
	}
	p.axe(src, "a wide reply at 390 px")
}
