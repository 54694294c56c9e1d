package web_test

import (
	"context"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/store"
)

// twoQuestions raises two choices cards in one step (Plan, Term), then
// replies with the answers it was given, in the calls' order.
type twoQuestions struct {
	mu    sync.Mutex
	steps int
}

func (m *twoQuestions) Respond(_ context.Context, req agent.ModelRequest, onText func(string)) (agent.ModelResponse, error) {
	m.mu.Lock()
	m.steps++
	m.mu.Unlock()
	if req.History[len(req.History)-1].Role == store.RoleUser {
		raise := func(header, a, b string) string {
			return `{"questions":[{"question":"Which ` + strings.ToLower(header) + `?","header":"` + header + `","options":["` + a + `","` + b + `"]}],"reason":"to quote"}`
		}
		return agent.ModelResponse{Position: req.Position + 1, ToolCalls: []store.ToolCall{
			{ID: "call-plan", Name: "request_choices", Arguments: raise("Plan", "Basic", "Pro")},
			{ID: "call-term", Name: "request_choices", Arguments: raise("Term", "Monthly", "Yearly")},
		}}, nil
	}
	var got []string
	for _, h := range req.History {
		if h.Role == store.RoleTool {
			got = append(got, h.ToolCallID+": "+h.Text)
		}
	}
	sort.Strings(got)
	text := "Noted " + strings.Join(got, " | ")
	onText(text)
	return agent.ModelResponse{Position: req.Position + 1, Text: text}, nil
}

func (m *twoQuestions) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.steps
}

// TestParallelAsksInPage: the page names kindkit.parallel_asks, so a step
// that asks two questions shows both cards at once, each with its own
// state, and says how many are left; answered in either order, the turn
// replies once with both answers.
func TestParallelAsksInPage(t *testing.T) {
	chromium(t)
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	browser := startBrowser(t)
	plan := `.card[data-kind="choices"]:has(.chip[data-label="Pro"])`
	term := `.card[data-kind="choices"]:has(.chip[data-label="Yearly"])`
	for _, order := range [][2]string{{"Pro", "Yearly"}, {"Yearly", "Pro"}} {
		t.Run(order[0]+"-first", func(t *testing.T) {
			m := &twoQuestions{}
			p := newPage(t, browser)
			p.open(startServerConfig(t, servertest.Config{Catalog: catalog, Model: m}))
			p.say("I'd like a quote", true)
			p.do("both cards", chromedp.WaitVisible(chromedp.CSS(plan+` .chip[data-label="Pro"]`)), chromedp.WaitVisible(chromedp.CSS(term+` .chip[data-label="Yearly"]`)))
			p.waitFor("two left", `document.querySelector('.cards-left').innerText === "2 of 2 questions left to answer"`)
			cards := map[string]string{"Pro": plan, "Yearly": term}
			first, second := cards[order[0]], cards[order[1]]
			p.do("answer one", chromedp.Click(chromedp.CSS(first+` .chip[data-label="`+order[0]+`"]`)), chromedp.Click(chromedp.CSS(first+` button[type="submit"]`)))
			p.waitFor("its own state", `document.querySelector('`+first+`').dataset.state === "answered" && document.querySelector('`+second+`').dataset.state === "open"`)
			p.waitFor("one left", `document.querySelector('.cards-left').innerText === "1 of 2 questions left to answer"`)
			if n := m.count(); n != 1 {
				t.Fatalf("model steps after one answer = %d, want 1: the turn waits for the other card", n)
			}
			p.do("answer the other", chromedp.Click(chromedp.CSS(second+` .chip[data-label="`+order[1]+`"]`)), chromedp.Click(chromedp.CSS(second+` button[type="submit"]`)))
			p.waitFor("the reply", `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes("Noted") && m.innerText.includes("Pro") && m.innerText.includes("Yearly"))`)
			p.waitFor("none left", `document.querySelector('.cards-left').hidden`)
			p.do("the composer", chromedp.WaitEnabled(chromedp.CSS("#send")))
			if n := m.count(); n != 2 {
				t.Errorf("model steps = %d, want 2: one resume", n)
			}
			p.checkErrors()
		})
	}
}
