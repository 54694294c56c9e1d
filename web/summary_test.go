package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/kinds"
)

// TestCardSummaries: a card that ended collapses to its heading and one
// line saying what came of it (the picks by their names, "Declined",
// "Answered in words."), on a phone too, and the same lines come back
// after a reload, drawn from the history the server sends.
func TestCardSummaries(t *testing.T) {
	chromium(t)
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	withSignup := catalogWith(t, catalog, signupKind(t))
	browser := startBrowser(t)
	p := newPage(t, browser)
	p.do("390×844", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	p.open(startServer(t, withSignup, []agent.ScriptEntry{
		{Kind: "toolCall", Name: "request_choices", Arguments: `{"questions":[{"question":"Which plan?","header":"Plan","options":["Basic","Team"]},{"question":"Which topics?","header":"Topics","options":["Pricing","Security"],"multiSelect":true}],"reason":"to quote"}`},
		{Kind: "text", Text: "Team it is."},
		{Kind: "toolCall", Name: "request_rating", Arguments: `{"question":"How did we do?","scale":{"min":1,"max":5}}`},
		{Kind: "text", Text: "No worries."},
		{Kind: "toolCall", Name: "request_signup", Arguments: `{"prompt":"Join the beta?","reason":"to sign you up"}`},
		{Kind: "text", Text: "Welcome aboard."},
		{Kind: "toolCall", Name: "request_choices", Arguments: `{"questions":[{"question":"Which plan?","header":"Plan","options":["Basic","Team"]}],"reason":"to check"}`},
		{Kind: "text", Text: "Basic, noted."},
	}))
	reply := func(text string) {
		t.Helper()
		p.waitFor("the reply "+text, `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes(`+"`"+text+"`"+`))`)
		p.do("the turn's end", chromedp.WaitEnabled(chromedp.CSS("#send")))
	}
	open := func(kind string) string {
		t.Helper()
		sel := `.card[data-kind="` + kind + `"][data-state="open"]`
		p.do("the "+kind+" card", chromedp.WaitVisible(chromedp.CSS(sel+` button[type="submit"]`)))
		return sel
	}

	p.say("quote me", true)
	card := open("choices")
	p.do("answer the choices",
		chromedp.Click(chromedp.CSS(card+` .question[data-header="Plan"] .chip[data-label="Team"]`)),
		chromedp.Click(chromedp.CSS(card+` .question[data-header="Topics"] .chip[data-label="Pricing"]`)),
		chromedp.SendKeys(chromedp.CSS(card+` .question[data-header="Topics"] input.other`), "SSO"),
		chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
	reply("Team it is.")

	p.say("rate", true)
	card = open("rating")
	p.do("decline the rating", chromedp.Click(chromedp.CSS(card+` .card-actions button.quiet`)))
	reply("No worries.")

	p.say("sign me up", true)
	card = open("signup")
	p.do("answer the signup",
		chromedp.Click(chromedp.CSS(card+` [data-field="plan"] .chip[data-value="team"]`)),
		chromedp.SendKeys(chromedp.CSS(card+` input[name="email"]`), "ada@example.com"),
		chromedp.Click(chromedp.CSS(card+` [data-field="newsletter"] input`)),
		chromedp.Click(chromedp.CSS(card+` [data-field="topics"] .chip[data-value="sso"]`)),
		chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
	reply("Welcome aboard.")

	p.say("check", true)
	open("choices")
	p.say("Basic, please", true)
	reply("Basic, noted.")

	want := []string{
		"A few questions|Plan: Team · Topics: Pricing, SSO",
		"A quick rating|Declined",
		"Signup|Which plan?: Team plan · Newsletter: Yes · Email: ada@example.com · Topics: sso",
		"A quick question|Answered in words.",
	}
	summaries := func() []string {
		return eval[[]string](p, `[...document.querySelectorAll('.card')].map(c => c.querySelector('.card-title').innerText + "|" + c.querySelector('.card-status').innerText)`)
	}
	check := func(when string) {
		t.Helper()
		if got := summaries(); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: cards\n%s\nwant\n%s", when, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		// A line each (a long one wraps on a phone), nothing of the form
		// left: an open card is several times this tall.
		if tall := eval[[]string](p, `[...document.querySelectorAll('.card')].filter(c => c.getBoundingClientRect().height > 100).map(c => c.innerText + ": " + c.getBoundingClientRect().height)`); len(tall) > 0 {
			t.Errorf("%s: cards taller than a summary: %q", when, tall)
		}
		if n := eval[int](p, `[...document.querySelectorAll('.card button, .card input, .card textarea')].filter(x => x.offsetParent !== null).length`); n != 0 {
			t.Errorf("%s: %d controls of ended cards still shown", when, n)
		}
	}
	check("live")
	p.do("reload", chromedp.Reload())
	p.waitFor("the session", `document.querySelector("#status").dataset.state === "online"`)
	p.waitFor("the history", `document.querySelectorAll('.history .card').length === 4`)
	check("after a reload")
	if got := p.text(`.history`); !strings.Contains(got, "Welcome aboard.") || !strings.Contains(got, "quote me") {
		t.Errorf("the history lost its messages:\n%s", got)
	}
}

// TestEveryCardSummary: the cards that are not a kind's raise end as a
// one-line summary too, and the same lines come back after a reload: a
// host tool's Ask, and a write confirmation approved and one rejected.
func TestEveryCardSummary(t *testing.T) {
	chromium(t)
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	model, err := agent.NewScripted(servertest.EveryCardTurns())
	if err != nil {
		t.Fatal(err)
	}
	browser := startBrowser(t)
	p := newPage(t, browser)
	p.open(startServerConfig(t, servertest.Config{Catalog: catalog, Model: model, Tools: servertest.EveryCardTools(t), ConfirmTools: []string{"delete"}}))
	reply := func(text string) {
		t.Helper()
		p.waitFor("the reply "+text, `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes(`+"`"+text+"`"+`))`)
		p.do("the turn's end", chromedp.WaitEnabled(chromedp.CSS("#send")))
	}
	confirm := `.card[data-kind="confirmation"][data-state="open"]`

	p.say("book", true)
	card := `.card[data-kind="choices"][data-state="open"]`
	p.do("answer the Ask", chromedp.WaitVisible(chromedp.CSS(card+` button[type="submit"]`)),
		chromedp.Click(chromedp.CSS(card+` .chip[data-label="Wed 14:30"]`)),
		chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
	reply("Booked.")
	p.say("delete 42", true)
	p.do("approve", chromedp.WaitVisible(chromedp.CSS(confirm+` button.primary`)), chromedp.Click(chromedp.CSS(confirm+` button.primary`)))
	reply("Deleted.")
	p.say("delete 43", true)
	p.do("reject", chromedp.WaitVisible(chromedp.CSS(confirm+` button.quiet`)), chromedp.Click(chromedp.CSS(confirm+` button.quiet`)))
	reply("Kept.")

	want := []string{
		"A quick question|Slot: Wed 14:30",
		"Allow this action?|Approved: delete_record",
		"Allow this action?|Rejected: delete_record",
	}
	check := func(when string) {
		t.Helper()
		got := eval[[]string](p, `[...document.querySelectorAll('.card')].map(c => c.querySelector('.card-title').innerText + "|" + c.querySelector('.card-status').innerText)`)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: cards\n%s\nwant\n%s", when, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	check("live")
	p.do("reload", chromedp.Reload())
	p.waitFor("the session", `document.querySelector("#status").dataset.state === "online"`)
	p.waitFor("the history", `document.querySelectorAll('.history .card').length === 3`)
	check("after a reload")
}
