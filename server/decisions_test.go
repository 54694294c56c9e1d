package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/server"
)

// TestToolDecisions: a connection that asked for kindkit.tool_decisions
// is told what it may decide on a waiting call, with its arguments and
// the tool's schema; edited arguments that break it get
// confirmation_invalid, field by field, and the card stays; fixed, the tool
// runs with them. A reference client sees the reference frame and answers
// with approved, as ever.
func TestToolDecisions(t *testing.T) {
	var mu sync.Mutex
	var ran []string
	del, err := agent.NewTool("delete_record", "Delete a record.", func(ctx context.Context, a struct {
		ID string `json:"id"`
	}) (any, error) {
		mu.Lock()
		ran = append(ran, a.ID)
		mu.Unlock()
		return "deleted " + a.ID, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	script, err := agent.NewScripted(servertest.EveryCardTurns()[2:])
	if err != nil {
		t.Fatal(err)
	}
	_, url := startServer(t, servertest.Config{Model: script, Tools: []agent.HostTool{del},
		Confirm: agent.ConfirmMatching(agent.Approve|agent.Reject|agent.Edit, "delete")})

	c := dial(t, url)
	sid := create(c, `["`+server.ExtToolDecisions+`"]`)
	c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"delete 42"}`)
	ev := c.Expect("immediate_response", "write_confirmation_required")[1]
	data, _ := path(ev, "data", "data").(map[string]any)
	if got, _ := json.Marshal(data["decisions"]); string(got) != `["approve","edit","reject"]` ||
		path(data, "arguments", "id") != "42" || path(data, "parameters", "type") != "object" {
		t.Fatalf("the confirmation: %v", data)
	}
	c.Expect("stream_chunk")
	c.Send(`{"action":"confirm_tool_action","requestId":"T","sessionId":"` + sid + `","decision":"edit","arguments":{"id":43}}`)
	bad := c.Expect("confirmation_invalid")[0]
	if errs, _ := path(bad, "data", "data", "errors").([]any); len(errs) != 1 || path(errs[0], "field") != "id" {
		t.Fatalf("edited arguments of the wrong type: %v", bad)
	}
	c.Send(`{"action":"confirm_tool_action","requestId":"T","sessionId":"` + sid + `","decision":"respond","message":"no"}`)
	if code := errorCode(c.Expect("error")[0]); code != "VALIDATION_ERROR" {
		t.Errorf("a decision the policy does not allow: %s", code)
	}
	c.Send(`{"action":"confirm_tool_action","requestId":"T","sessionId":"` + sid + `","decision":"edit","arguments":{"id":"43"}}`)
	if ack := c.Expect("immediate_response")[0]; path(ack, "data", "approved") != true {
		t.Errorf("the edit's ack: %v", ack)
	}
	if text, end := c.Turn(); end["type"] != "eventual_response" || !strings.Contains(text, "Deleted.") {
		t.Fatalf("after the edit: %q, %v", text, end)
	}
	mu.Lock()
	if len(ran) != 1 || ran[0] != "43" {
		t.Errorf("the tool ran with %v, want the edited id once", ran)
	}
	mu.Unlock()

	// A reference client: the reference frame, and approved.
	ref := dial(t, url)
	rsid := create(ref, `[]`)
	ref.Send(`{"action":"send_message","requestId":"U","sessionId":"` + rsid + `","message":"delete 42"}`)
	ev = ref.Expect("immediate_response", "write_confirmation_required")[1]
	if data, _ := path(ev, "data", "data").(map[string]any); len(data) != 2 {
		t.Errorf("a reference client's confirmation: %v, want toolId and actionDescription alone", data)
	}
	ref.Expect("stream_chunk")
	ref.Send(`{"action":"confirm_tool_action","requestId":"U","sessionId":"` + rsid + `","approved":false,"message":"not that one"}`)
	ref.Expect("immediate_response")
	if _, end := ref.Turn(); end["type"] != "eventual_response" {
		t.Fatalf("after the rejection: %v", end)
	}
}
