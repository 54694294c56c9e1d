package web_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/store"
)

// TestReloadMidReply: the page is reloaded while a reply is being written.
// The reply is not lost with the old socket: the reloaded page shows the
// message, what was written so far with the typing dots, and then the
// whole reply when it lands, once.
func TestReloadMidReply(t *testing.T) {
	p, m := midReply(t)

	p.do("reload", chromedp.Reload())
	p.waitFor("the session", `document.querySelector("#status").dataset.state === "online"`)
	p.waitFor("the message again", `[...document.querySelectorAll(".msg.user")].some(m => m.innerText.includes("hi"))`)
	p.waitFor("the reply so far, still being written", `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes("Hello, there")) && document.querySelector('.typing') !== null`)
	close(m.Release)
	p.waitFor("the whole reply", `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes("Hello, there and goodbye."))`)
	p.waitFor("the typing dots gone", `document.querySelector('.typing') === null`)
	if got := eval[[]string](p, `[...document.querySelectorAll('.msg')].map(m => m.className + ": " + m.innerText.replace(/\s+/g, " ").trim())`); len(got) != 2 ||
		!strings.Contains(got[0], "hi") || !strings.Contains(got[1], "Hello, there and goodbye.") {
		t.Errorf("the transcript after the reload:\n%s", strings.Join(got, "\n"))
	}
}

// midReply is a page whose message "hi" is being answered by a Stall
// model: its first words are out, and the rest waits for m.Release.
func midReply(t *testing.T) (*page, *servertest.Stall) {
	t.Helper()
	chromium(t)
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	m := servertest.NewStall()
	p := newPage(t, startBrowser(t))
	p.open(startServerConfig(t, servertest.Config{Catalog: catalog, Model: m}))
	p.say("hi", true)
	<-m.Said
	p.waitFor("the first words", `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes("Hello, there"))`)
	return p, m
}

// After a reload mid-reply the page knows the reply is still being
// written: Send waits and Stop shows, and Stop stops the turn the page
// sent before the reload; then the next message goes.
func TestReloadMidReplyStop(t *testing.T) {
	p, m := midReply(t)
	defer close(m.Release)

	p.do("reload", chromedp.Reload())
	p.waitFor("the reply so far", `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes("Hello, there"))`)
	p.waitFor("Send waiting and Stop shown", `document.querySelector("#send").disabled && !document.querySelector("#stop").hidden`)
	p.do("stop", chromedp.Click(chromedp.CSS("#stop"), chromedp.NodeVisible))
	p.waitFor("the reply stopped", `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes("Stopped.")) && document.querySelector('.typing') === null`)
	p.waitFor("Stop hidden", `document.querySelector("#stop").hidden`)
	p.say("are you there?", true)
	<-m.Said // a second model call: the stopped one made none after its stop
	p.waitFor("the next reply", `[...document.querySelectorAll('.msg.assistant')].filter(m => m.innerText.includes("Hello, there")).length === 2`)
}

// A reply stopped mid-way stays in the page after a reload as what it
// had said and "Stopped.", with a way to ask again (a failed one's
// history is server's TestHistoryShowsEndedTurns).
func TestStoppedReplyAfterReload(t *testing.T) {
	p, m := midReply(t)
	defer close(m.Release)
	p.do("stop", chromedp.Click(chromedp.CSS("#stop"), chromedp.NodeVisible))
	p.waitFor("stopped, with a retry", `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes("Stopped.") && m.querySelector("button.retry"))`)

	p.do("reload", chromedp.Reload())
	p.waitFor("the stopped reply from the history",
		`[...document.querySelectorAll('.history .msg.assistant')].some(m => m.innerText.includes("Hello, there") && m.innerText.includes("Stopped.") && m.querySelector("button.retry"))`)
	p.do("try again", chromedp.Click(chromedp.CSS(".history button.retry"), chromedp.NodeVisible))
	<-m.Said // asked again
	p.waitFor("the message sent again", `[...document.querySelectorAll('.msg.user')].filter(m => m.innerText.includes("hi")).length === 2`)
}

// What was picked and typed on a card outlives a reload, and is gone once
// the card is answered.
func TestCardDraftAfterReload(t *testing.T) {
	chromium(t)
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	p := newPage(t, startBrowser(t))
	p.open(startServer(t, catalog, []agent.ScriptEntry{
		{Kind: "toolCall", Name: "request_choices", Arguments: `{"questions":[{"question":"Which plan?","header":"Plan","options":["Basic","Team"]},{"question":"Which topics?","header":"Topics","options":["Pricing","Security"],"multiSelect":true}],"reason":"to quote"}`},
		{Kind: "text", Text: "Team it is."},
	}))
	p.say("quote me", true)
	card := `.card[data-kind="choices"][data-state="open"]`
	p.do("the card", chromedp.WaitVisible(chromedp.CSS(card+` button[type="submit"]`)))
	p.do("pick and type",
		chromedp.Click(chromedp.CSS(card+` .question[data-header="Plan"] .chip[data-label="Team"]`)),
		chromedp.Click(chromedp.CSS(card+` .question[data-header="Topics"] .chip[data-label="Security"]`)),
		chromedp.SendKeys(chromedp.CSS(card+` .question[data-header="Topics"] input.other`), "SSO"))

	p.do("reload", chromedp.Reload())
	p.do("the card again", chromedp.WaitVisible(chromedp.CSS(card+` button[type="submit"]`)))
	got := eval[[]string](p, `[...document.querySelectorAll('`+card+` .chip[aria-pressed="true"]')].map(c => c.dataset.label).concat([...document.querySelectorAll('`+card+` input.other')].map(i => i.value))`)
	if want := []string{"Team", "Security", "", "SSO"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("the card after a reload: %q, want %q", got, want)
	}
	p.do("submit", chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
	p.waitFor("the reply", `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes("Team it is."))`)
	if left := eval[string](p, `localStorage.getItem("kindkit.cards")`); left != "{}" {
		t.Errorf("drafts kept after the card was answered: %s", left)
	}
}

// stepsModel says a few words and raises a card in one response, then
// answers with a heading.
type stepsModel struct{ calls atomic.Int32 }

func (m *stepsModel) Respond(ctx context.Context, req agent.ModelRequest, onText func(string)) (agent.ModelResponse, error) {
	if m.calls.Add(1) == 1 {
		onText("Let me ask you something first.")
		return agent.ModelResponse{Text: "Let me ask you something first.", ToolCalls: []store.ToolCall{{ID: "call-1", Name: "request_choices",
			Arguments: `{"questions":[{"question":"Which plan?","header":"Plan","options":["Basic","Pro"]}],"reason":"to compare"}`}}}, nil
	}
	onText("## Comparison\n\nPro has SSO.")
	return agent.ModelResponse{Text: "## Comparison\n\nPro has SSO."}, nil
}

// The words a model says before a card stay above the card, live and
// after a reload (the history says where the card was shown), and the
// answer's heading after it is a heading.
func TestPreCardTextAfterReload(t *testing.T) {
	chromium(t)
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	p := newPage(t, startBrowser(t))
	p.open(startServerConfig(t, servertest.Config{Catalog: catalog, Model: &stepsModel{}}))
	p.say("compare the plans", true)
	card := `.card[data-kind="choices"][data-state="open"]`
	p.do("the card", chromedp.WaitVisible(chromedp.CSS(card+` button[type="submit"]`)))
	p.do("answer", chromedp.Click(chromedp.CSS(card+` .chip[data-label="Pro"]`)), chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
	p.waitFor("the answer", `[...document.querySelectorAll('.msg.assistant h2')].some(h => h.innerText === "Comparison")`)
	order := `[...document.querySelector('%s').children].map(c => c.matches(".card") ? "card" : c.querySelector("h2") ? "heading" : c.innerText.includes("Let me ask") ? "before" : "").filter(Boolean).join(" ")`
	if got := eval[string](p, fmt.Sprintf(order, `.msg.assistant`)); got != "before card heading" {
		t.Errorf("live: %q, want the words before the card above it and the heading after", got)
	}
	p.do("reload", chromedp.Reload())
	p.waitFor("the history", `document.querySelector('.history .msg.assistant h2')`)
	if got := eval[string](p, fmt.Sprintf(order, `.history .msg.assistant`)); got != "before card heading" {
		t.Errorf("after a reload: %q, want the words before the card above it and the heading after", got)
	}
}
