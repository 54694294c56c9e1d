package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jonboulle/clockwork"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
)

type bookArgs struct {
	Slot  string `json:"slot" jsonschema:"the slot to book, as offered"`
	Seats int    `json:"seats,omitempty"`
}

func TestNewToolSchema(t *testing.T) {
	tool, err := agent.NewTool("book", "Book a slot.", func(ctx context.Context, a bookArgs) (any, error) { return "ok", nil })
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(tool.Parameters, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Type != "object" || len(schema.Properties) != 2 || len(schema.Required) != 1 || schema.Required[0] != "slot" {
		t.Errorf("schema = %s", tool.Parameters)
	}
	if !strings.Contains(string(schema.Properties["slot"]), "the slot to book") {
		t.Errorf("slot's description missing: %s", schema.Properties["slot"])
	}
}

// toolTurn runs a turn whose scripted model calls tool name with args,
// then answers "done", and returns the tool result event.
func toolTurn(t *testing.T, tools []agent.HostTool, confirm []string, name, args string) (agent.Event, *follower, *agent.Engine, store.Store) {
	t.Helper()
	st := memstore.New()
	e := newEngine(t, agent.Config{Store: st, Tools: tools, Confirm: agent.ConfirmMatching(agent.Approve|agent.Reject, confirm...), Clock: clockwork.NewFakeClock(),
		Model: scripted(t, agent.ScriptEntry{Kind: "toolCall", Name: name, Arguments: args, ID: "call-7"}, agent.ScriptEntry{Kind: "text", Text: "done"})})
	f := newFollower()
	f.start(e, conversation(t, st, "alice"), "book me in")
	if len(confirm) > 0 {
		return agent.Event{}, f, e, st
	}
	return f.next(t, agent.EventToolResult), f, e, st
}

func TestHostTool(t *testing.T) {
	var got bookArgs
	var info agent.CallInfo
	book, err := agent.NewTool("book", "Book a slot.", func(ctx context.Context, a bookArgs) (any, error) {
		got = a
		info, _ = agent.CallFrom(ctx)
		return map[string]any{"booked": a.Slot}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	failing, _ := agent.NewTool("fail", "", func(ctx context.Context, a struct{}) (any, error) { return nil, errors.New("the calendar is down") })
	panicking, _ := agent.NewTool("boom", "", func(ctx context.Context, a struct{}) (any, error) { panic("nil map") })
	tools := []agent.HostTool{book, failing, panicking}

	for _, tc := range []struct {
		name, tool, args string
		want             string
		isError          bool
	}{
		{"valid", "book", `{"slot":"Tue 10:00","seats":2}`, `{"booked":"Tue 10:00"}`, false},
		{"missing required", "book", `{"seats":2}`, "invalid arguments", true},
		{"wrong type", "book", `{"slot":7}`, "invalid arguments", true},
		{"unknown field", "book", `{"slot":"x","color":"red"}`, "invalid arguments", true},
		{"not JSON", "book", `{"slot":`, "invalid arguments: not JSON", true},
		{"returned error", "fail", ``, "tool fail failed: the calendar is down", true},
		{"panic", "boom", `{}`, "tool boom failed: panic: nil map", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, info = bookArgs{}, agent.CallInfo{}
			ev, f, e, _ := toolTurn(t, tools, nil, tc.tool, tc.args)
			if ev.IsError != tc.isError || !strings.Contains(ev.Text, tc.want) {
				t.Errorf("result = %q (error %v), want %q (error %v)", ev.Text, ev.IsError, tc.want, tc.isError)
			}
			if r := f.next(t, agent.EventReply); r.Reply.Text != "done" {
				t.Errorf("the turn did not go on: %+v", r.Reply)
			}
			e.Wait()
		})
	}
	ev, _, e, _ := toolTurn(t, tools, nil, "book", `{"slot":"Tue 10:00"}`)
	e.Wait()
	if ev.IsError || got.Slot != "Tue 10:00" {
		t.Errorf("args = %+v (result %q)", got, ev.Text)
	}
	if info != (agent.CallInfo{ConversationID: "c1", SessionID: "s1", Principal: "alice", CallID: "call-7"}) {
		t.Errorf("CallFrom = %+v", info)
	}
}

// TestHostToolCancel: cancel reaches a running tool through its context.
func TestHostToolCancel(t *testing.T) {
	started := make(chan struct{})
	var stopped atomic.Bool
	wait, _ := agent.NewTool("wait", "", func(ctx context.Context, a struct{}) (any, error) {
		close(started)
		<-ctx.Done()
		stopped.Store(true)
		return nil, ctx.Err()
	})
	st := memstore.New()
	e := newEngine(t, agent.Config{Store: st, Tools: []agent.HostTool{wait},
		Model: scripted(t, agent.ScriptEntry{Kind: "toolCall", Name: "wait", Arguments: `{}`})})
	sess := conversation(t, st, "")
	if err := e.Send(context.Background(), sess, agent.Message{RequestID: "r1", Text: "wait"}, nil); err != nil {
		t.Fatal(err)
	}
	<-started
	e.Cancel(context.Background(), sess.ConversationID, "r1")
	e.Wait()
	if !stopped.Load() {
		t.Error("the tool's context was not cancelled")
	}
}

// TestHostToolConfirmed: the write-confirmation gate applies to a host tool
// by name; it runs only once approved, and not when denied.
func TestHostToolConfirmed(t *testing.T) {
	for _, approve := range []bool{true, false} {
		var runs atomic.Int32
		del, _ := agent.NewTool("delete_record", "", func(ctx context.Context, a struct{}) (any, error) {
			runs.Add(1)
			return "deleted", nil
		})
		_, f, e, st := toolTurn(t, []agent.HostTool{del}, []string{"delete"}, "delete_record", `{}`)
		prompt := f.next(t, agent.EventPrompt)
		if prompt.Park.Type != store.ParkConfirmation || runs.Load() != 0 {
			t.Fatalf("prompt = %+v, runs %d", prompt.Park, runs.Load())
		}
		sess, err := st.Session(context.Background(), prompt.Park.SessionID)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := e.Confirm(context.Background(), sess, prompt.Park.ID, approve, nil); err != nil || !ok {
			t.Fatalf("Confirm = %v, %v", ok, err)
		}
		r := f.next(t, agent.EventToolResult)
		f.next(t, agent.EventReply)
		e.Wait()
		if approve && (r.Text != "deleted" || runs.Load() != 1) {
			t.Errorf("approved: result %q, runs %d", r.Text, runs.Load())
		}
		if !approve && (!r.IsError || runs.Load() != 0) {
			t.Errorf("denied: result %q, runs %d", r.Text, runs.Load())
		}
		if msgs, _, _ := st.Messages(context.Background(), "c1", []store.Role{store.RoleTool}, "", 10); len(msgs) != 1 {
			t.Errorf("tool results stored: %d, want 1", len(msgs))
		}
	}
}
