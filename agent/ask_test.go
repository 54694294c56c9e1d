package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/gen/choicesgen"
	"github.com/kindkit/kindkit/store"
)

// question is a one-question choices spec.
func question(header string, options ...string) *choicesgen.Spec {
	q := choicesgen.Question{Question: "Which " + strings.ToLower(header) + "?", Header: header}
	for _, o := range options {
		q.Options = append(q.Options, choicesgen.Option{Label: o})
	}
	return &choicesgen.Spec{Questions: []choicesgen.Question{q}}
}

func pick(v *choicesgen.Values) string { return v.Answers[0].Options[0] }

// bookDemo is a host tool that asks for a slot, then (when confirm is
// set) whether to send an invite, and books. runs counts its runs.
func bookDemo(runs *atomic.Int32, confirm bool) agent.HostTool {
	tool, err := agent.NewTool("book_demo", "Book a demo.", func(ctx context.Context, _ struct{}) (any, error) {
		runs.Add(1)
		slot, err := choicesgen.Ask(ctx, question("Slot", "Tue 10:00", "Wed 14:30"), "to book your demo")
		switch {
		case errors.Is(err, kindkit.ErrDeclined):
			return "not booked: declined", nil
		case errors.Is(err, kindkit.ErrNoResponse):
			return "not booked: no answer", nil
		case err != nil:
			return nil, err
		}
		if !confirm {
			return "booked " + pick(slot), nil
		}
		invite, err := choicesgen.Ask(ctx, question("Invite", "Yes", "No"), "to send the invite")
		if err != nil {
			return nil, err
		}
		return fmt.Sprintf("booked %s, invite %s", pick(slot), pick(invite)), nil
	})
	if err != nil {
		panic(err)
	}
	return tool
}

type askSetup struct {
	st    store.Store
	e     *agent.Engine
	f     *follower
	sess  *store.Session
	clock *clockwork.FakeClock
}

// askTurn starts a turn whose model calls tool, then answers "done".
func askTurn(t *testing.T, st store.Store, tool agent.HostTool, supports []string) *askSetup {
	t.Helper()
	clock := clockwork.NewFakeClock()
	e := newEngine(t, agent.Config{Store: st, Tools: []agent.HostTool{tool}, Clock: clock,
		Model: scripted(t, agent.ScriptEntry{Kind: "toolCall", Name: tool.Name, Arguments: `{}`, ID: "call-b"}, agent.ScriptEntry{Kind: "text", Text: "done"})})
	sess := conversation(t, st, "", supports...)
	f := newFollower()
	f.start(e, sess, "book a demo")
	return &askSetup{st, e, f, sess, clock}
}

// answer submits values (or declines) to the pending card.
func (s *askSetup) answer(t *testing.T, values string) {
	t.Helper()
	s.f.next(t, agent.EventPrompt)
	p, err := s.st.PendingPark(context.Background(), "c1")
	if err != nil {
		t.Fatal(err)
	}
	a := agent.Answer{Declined: true}
	if values != "" {
		a = agent.Answer{Values: []byte(values)}
	}
	if ok, err := s.e.Submit(context.Background(), s.sess, p.ID, a, nil); err != nil || !ok {
		t.Fatalf("Submit = %v, %v", ok, err)
	}
}

// result waits for the tool's result and the reply, and checks that the
// history answers the call exactly once.
func (s *askSetup) result(t *testing.T) string {
	t.Helper()
	r := s.f.next(t, agent.EventToolResult)
	s.f.next(t, agent.EventReply)
	s.e.Wait()
	msgs, _, err := s.st.Messages(context.Background(), "c1", []store.Role{store.RoleTool}, "", 10)
	if err != nil || len(msgs) != 1 || msgs[0].ToolCallID != "call-b" || msgs[0].Text != r.Text {
		t.Errorf("stored tool results: %d (%v), want the one result %q", len(msgs), err, r.Text)
	}
	return r.Text
}

func TestAsk(t *testing.T) {
	slot := `{"answers":[{"header":"Slot","options":["Wed 14:30"]}]}`
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			var runs atomic.Int32
			s := askTurn(t, open(t), bookDemo(&runs, false), []string{"choice_chips"})
			if call := s.f.next(t, agent.EventToolCall); call.Call.Name != "book_demo" {
				t.Fatalf("first event %+v", call)
			}
			s.answer(t, slot)
			if got := s.result(t); got != "booked Wed 14:30" {
				t.Errorf("result = %q", got)
			}
			if runs.Load() != 2 {
				t.Errorf("the tool ran %d times, want 2 (once to ask, once with the answer)", runs.Load())
			}
		})
	}
}

func TestAskTwice(t *testing.T) {
	var runs atomic.Int32
	s := askTurn(t, stores(t)["sqlite"](t), bookDemo(&runs, true), []string{"choice_chips"})
	s.answer(t, `{"answers":[{"header":"Slot","options":["Tue 10:00"]}]}`)
	s.answer(t, `{"answers":[{"header":"Invite","options":["No"]}]}`)
	if got := s.result(t); got != "booked Tue 10:00, invite No" {
		t.Errorf("result = %q", got)
	}
	if runs.Load() != 3 {
		t.Errorf("runs = %d, want 3", runs.Load())
	}
}

func TestAskDeclined(t *testing.T) {
	var runs atomic.Int32
	s := askTurn(t, stores(t)["memory"](t), bookDemo(&runs, false), []string{"choice_chips"})
	s.answer(t, "")
	if got := s.result(t); got != "not booked: declined" {
		t.Errorf("result = %q", got)
	}
}

func TestAskDeadline(t *testing.T) {
	var runs atomic.Int32
	s := askTurn(t, stores(t)["memory"](t), bookDemo(&runs, false), []string{"choice_chips"})
	s.f.next(t, agent.EventPrompt)
	s.clock.BlockUntilContext(context.Background(), 1)
	s.clock.Advance(time.Hour + time.Second)
	if got := s.result(t); got != "not booked: no answer" {
		t.Errorf("result = %q", got)
	}
}

// TestAskSwallowed: a tool that ignores ErrParked and returns a result of
// its own still parks; that result is thrown away.
func TestAskSwallowed(t *testing.T) {
	tool, _ := agent.NewTool("book_demo", "", func(ctx context.Context, _ struct{}) (any, error) {
		v, err := choicesgen.Ask(ctx, question("Slot", "A", "B"), "to book")
		if err != nil {
			return "something went wrong, never mind", nil
		}
		return "booked " + pick(v), nil
	})
	s := askTurn(t, stores(t)["memory"](t), tool, []string{"choice_chips"})
	s.answer(t, `{"answers":[{"header":"Slot","options":["B"]}]}`)
	if got := s.result(t); got != "booked B" {
		t.Errorf("result = %q", got)
	}
}

// TestAskBadSpec: a spec the kind's rules reject is an error for the tool,
// not a card; the turn goes on.
func TestAskBadSpec(t *testing.T) {
	tool, _ := agent.NewTool("book_demo", "", func(ctx context.Context, _ struct{}) (any, error) {
		_, err := choicesgen.Ask(ctx, question("Slot", "only one"), "to book")
		return nil, err
	})
	s := askTurn(t, stores(t)["memory"](t), tool, []string{"choice_chips"})
	r := s.f.next(t, agent.EventToolResult)
	if !r.IsError || !strings.Contains(r.Text, "ask choices") {
		t.Errorf("result = %q (error %v), want the rules' complaint", r.Text, r.IsError)
	}
	s.f.next(t, agent.EventReply)
}

// TestAskConversational: without the card's capability the same Ask takes
// the conversational path: the tool's result is the directive, the model
// asks in words and submits through submit_interaction, which runs the
// tool again; its result is submit_interaction's.
func TestAskConversational(t *testing.T) {
	var runs atomic.Int32
	st := stores(t)["memory"](t)
	e := newEngine(t, agent.Config{Store: st, Tools: []agent.HostTool{bookDemo(&runs, false)}, Model: scripted(t,
		agent.ScriptEntry{Kind: "toolCall", Name: "book_demo", Arguments: `{}`, ID: "call-b"},
		agent.ScriptEntry{Kind: "toolCall", Name: "submit_interaction", Arguments: `{"kind":"choices","values":{"answers":[{"header":"Slot","options":["Tue 10:00"]}]}}`, ID: "call-s"},
		agent.ScriptEntry{Kind: "text", Text: "done"})})
	sess := conversation(t, st, "")
	f := newFollower()
	f.start(e, sess, "book")
	directive := f.next(t, agent.EventToolResult)
	if directive.Call.Name != "book_demo" || !strings.Contains(directive.Text, "conversational") {
		t.Fatalf("book_demo's result = %q, want the fallback directive", directive.Text)
	}
	submitted := f.next(t, agent.EventToolResult)
	if submitted.Call.Name != "submit_interaction" || submitted.Text != "booked Tue 10:00" {
		t.Errorf("submit_interaction's result = %q, want the tool's", submitted.Text)
	}
	f.next(t, agent.EventReply)
	e.Wait()
}

// quoteAndBook is a host tool whose work between its questions must not
// run twice: it gets a quote before it asks for a slot, and books the slot
// before it asks about the invite, each time one call of remote. It keeps
// what it did with agent.Checkpoint and starts from agent.Memo.
func quoteAndBook(remote *atomic.Int32) agent.HostTool {
	tool, err := agent.NewTool("book_demo", "Book a demo.", func(ctx context.Context, _ struct{}) (any, error) {
		var done struct {
			Quote  int32  `json:"quote"`
			Booked string `json:"booked"`
		}
		if memo := agent.Memo(ctx); memo != nil {
			if err := json.Unmarshal(memo, &done); err != nil {
				return nil, err
			}
		} else {
			done.Quote = remote.Add(1)
			if err := agent.Checkpoint(ctx, mustJSON(done)); err != nil {
				return nil, err
			}
		}
		if done.Booked == "" {
			slot, err := choicesgen.Ask(ctx, question("Slot", "Tue 10:00", "Wed 14:30"), "to book your demo")
			if err != nil {
				return nil, err
			}
			remote.Add(1)
			done.Booked = pick(slot)
			if err := agent.Checkpoint(ctx, mustJSON(done)); err != nil {
				return nil, err
			}
		}
		invite, err := choicesgen.Ask(ctx, question("Invite", "Yes", "No"), "to send the invite")
		if err != nil {
			return nil, err
		}
		return fmt.Sprintf("quote %d, booked %s, invite %s", done.Quote, done.Booked, pick(invite)), nil
	})
	if err != nil {
		panic(err)
	}
	return tool
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// TestAskCheckpoint: a memo kept with agent.Checkpoint comes back in the
// call's later runs, through the store, and stands in for the answers
// before it: the work it records runs once, and an Ask after it returns
// the answer given after it, not the first one.
func TestAskCheckpoint(t *testing.T) {
	var remote atomic.Int32
	s := askTurn(t, stores(t)["sqlite"](t), quoteAndBook(&remote), []string{"choice_chips"})
	s.answer(t, `{"answers":[{"header":"Slot","options":["Tue 10:00"]}]}`)
	s.answer(t, `{"answers":[{"header":"Invite","options":["No"]}]}`)
	if got := s.result(t); got != "quote 1, booked Tue 10:00, invite No" {
		t.Errorf("result = %q", got)
	}
	if remote.Load() != 2 {
		t.Errorf("the remote was called %d times, want 2 (the quote, the booking)", remote.Load())
	}
}

func TestCheckpointOutsideATool(t *testing.T) {
	if err := agent.Checkpoint(context.Background(), json.RawMessage(`{}`)); err == nil {
		t.Error("Checkpoint outside a host tool call: no error")
	}
	if agent.Memo(context.Background()) != nil {
		t.Error("Memo outside a host tool call: not nil")
	}
}
