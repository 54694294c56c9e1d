package web_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/store"
)

// deleteModel asks to delete record 42, then says "Done.", keeping what
// it read of the decision: the last tool result of its history.
type deleteModel struct {
	mu   sync.Mutex
	read *store.Message
}

func (m *deleteModel) Respond(_ context.Context, req agent.ModelRequest, onText func(string)) (agent.ModelResponse, error) {
	if req.Position == 0 {
		return agent.ModelResponse{Position: 1, ToolCalls: []store.ToolCall{{ID: "call-1", Name: "delete_record", Arguments: `{"id":"42"}`}}}, nil
	}
	m.mu.Lock()
	for _, msg := range req.History {
		if msg.Role == store.RoleTool {
			m.read = msg
		}
	}
	m.mu.Unlock()
	onText("Done.")
	return agent.ModelResponse{Position: req.Position + 1, Text: "Done."}, nil
}

func (m *deleteModel) lastRead() store.Message {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.read == nil {
		return store.Message{}
	}
	return *m.read
}

// TestToolDecisionsInPage: the page offers what a tool's policy allows on
// a call that waits. Edited arguments the server finds wrong get their
// field's error; fixed, the tool runs with them. A rejection's reason
// reaches the model.
func TestToolDecisionsInPage(t *testing.T) {
	chromium(t)
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var ran []string
	// A pattern the page does not check: the server's check answers.
	del := agent.HostTool{Tool: agent.Tool{Name: "delete_record", Description: "Delete a record.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","pattern":"^[0-9]+$"}},"required":["id"]}`)},
		Run: func(_ context.Context, args json.RawMessage) (agent.Result, error) {
			var a struct{ ID string }
			if err := json.Unmarshal(args, &a); err != nil {
				return agent.Result{}, err
			}
			mu.Lock()
			ran = append(ran, a.ID)
			mu.Unlock()
			return agent.Result{Text: "deleted " + a.ID}, nil
		}}
	browser := startBrowser(t)
	card := `.card[data-kind="confirmation"]`

	t.Run("edit", func(t *testing.T) {
		p := newPage(t, browser)
		p.open(startServerConfig(t, servertest.Config{Catalog: catalog, Model: &deleteModel{}, Tools: []agent.HostTool{del},
			Confirm: agent.ConfirmMatching(agent.Approve|agent.Reject|agent.Edit|agent.Respond, "delete")}))
		p.say("delete record 42", true)
		p.do("the confirmation", chromedp.WaitVisible(chromedp.CSS(card+` button.primary`)))
		edit := `[...document.querySelectorAll('` + card + ` button')].find(b => b.innerText === "Edit")`
		p.waitFor("Edit offered", edit)
		p.do("edit", chromedp.Evaluate[chromedp.Void](edit+`.click()`))
		field := card + ` .confirm-edit input[name="id"]`
		p.do("the id field", chromedp.WaitVisible(chromedp.CSS(field)))
		if got := eval[string](p, `document.querySelector('`+field+`').value`); got != "42" {
			t.Errorf("the id field starts at %q, want the model's 42", got)
		}
		run := card + ` .confirm-edit button.primary`
		p.do("a bad id", chromedp.SetValue(chromedp.CSS(field), "forty-three"), chromedp.Click(chromedp.CSS(run)))
		p.waitFor("the field's error", `document.querySelector('`+field+`').getAttribute("aria-invalid") === "true" && document.querySelector('`+card+` .confirm-edit .field-error:not([hidden])')`)
		if n := len(ranSnapshot(&mu, &ran)); n != 0 {
			t.Fatalf("the tool ran %d times with a bad id", n)
		}
		p.do("fixed", chromedp.SetValue(chromedp.CSS(field), "43"), chromedp.Click(chromedp.CSS(run)))
		p.waitFor("the approval", `document.querySelector('`+card+` .card-status').innerText.includes("Approved with your changes")`)
		p.waitFor("the reply", `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes("Done."))`)
		if got := ranSnapshot(&mu, &ran); len(got) != 1 || got[0] != "43" {
			t.Errorf("the tool ran with %v, want the edited 43 once", got)
		}
	})

	t.Run("reject with a reason", func(t *testing.T) {
		m := &deleteModel{}
		p := newPage(t, browser)
		p.open(startServerConfig(t, servertest.Config{Catalog: catalog, Model: m, Tools: []agent.HostTool{del},
			Confirm: agent.ConfirmMatching(agent.Approve|agent.Reject, "delete")}))
		p.say("delete record 42", true)
		p.do("the confirmation", chromedp.WaitVisible(chromedp.CSS(card+` button.primary`)))
		if eval[bool](p, `[...document.querySelectorAll('`+card+` button')].some(b => b.innerText === "Edit" || b.innerText === "Answer instead")`) {
			t.Error("the card offers a decision the policy does not allow")
		}
		reject := `[...document.querySelectorAll('` + card + ` button')].find(b => b.innerText === "Reject")`
		p.do("a reason", chromedp.SendKeys(chromedp.CSS(card+` textarea`), "no, record 43"), chromedp.Evaluate[chromedp.Void](reject+`.click()`))
		p.waitFor("the rejection", `document.querySelector('`+card+` .card-status').innerText.includes("Rejected")`)
		p.waitFor("the reply", `[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes("Done."))`)
		if read := m.lastRead(); !strings.Contains(read.Text, "no, record 43") || !read.IsError {
			t.Errorf("the model read %q (error %v), want the person's reason", read.Text, read.IsError)
		}
	})
}

func ranSnapshot(mu *sync.Mutex, ran *[]string) []string {
	mu.Lock()
	defer mu.Unlock()
	return append([]string(nil), *ran...)
}
