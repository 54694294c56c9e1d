package agent_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/jonboulle/clockwork"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
)

// deleteModel asks to delete record 42, then answers "done", keeping the
// history of its second call: what the model reads of the decision.
type deleteModel struct {
	mu   sync.Mutex
	read []*store.Message
}

func (m *deleteModel) Respond(_ context.Context, req agent.ModelRequest, _ func(string)) (agent.ModelResponse, error) {
	if req.Position == 0 {
		return agent.ModelResponse{Position: 1, ToolCalls: []store.ToolCall{{ID: "call-1", Name: "delete_record", Arguments: `{"id":42}`}}}, nil
	}
	m.mu.Lock()
	m.read = req.History
	m.mu.Unlock()
	return agent.ModelResponse{Position: req.Position + 1, Text: "done"}, nil
}

// lastToolResult is the last tool message the model read.
func (m *deleteModel) lastToolResult(t *testing.T) *store.Message {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.read) - 1; i >= 0; i-- {
		if m.read[i].Role == store.RoleTool {
			return m.read[i]
		}
	}
	t.Fatal("the model read no tool result")
	return nil
}

// TestDecide: each decision a tool's policy allows on its waiting call,
// what runs, what the model reads, and what the record keeps.
func TestDecide(t *testing.T) {
	ctx := context.Background()
	type setup struct {
		e      *agent.Engine
		st     store.Store
		m      *deleteModel
		sess   *store.Session
		f      *follower
		park   *store.Park
		ran    func() []int
		record func() *agent.Record
	}
	start := func(t *testing.T, allowed agent.Decision) setup {
		var mu sync.Mutex
		var ran []int
		del, err := agent.NewTool("delete_record", "Delete a record.", func(ctx context.Context, a struct {
			ID int `json:"id"`
		}) (any, error) {
			mu.Lock()
			ran = append(ran, a.ID)
			mu.Unlock()
			return "deleted", nil
		})
		if err != nil {
			t.Fatal(err)
		}
		st, m := memstore.New(), &deleteModel{}
		e := newEngine(t, agent.Config{Store: st, Tools: []agent.HostTool{del}, Confirm: agent.ConfirmMatching(allowed, "delete"),
			Clock: clockwork.NewFakeClock(), Model: m})
		sess := conversation(t, st, "")
		f := newFollower()
		f.start(e, sess, "delete record 42")
		prompt := f.next(t, agent.EventPrompt)
		s := setup{e: e, st: st, m: m, sess: sess, f: f, park: prompt.Park}
		s.ran = func() []int { mu.Lock(); defer mu.Unlock(); return append([]int(nil), ran...) }
		s.record = func() *agent.Record {
			t.Helper()
			rs, err := e.Records(ctx, "c1", s.park.CreatedAt.Add(-1), "", 10)
			if err != nil || len(rs) != 1 || rs[0].Record == nil {
				t.Fatalf("Records = %+v, %v", rs, err)
			}
			return rs[0].Record
		}
		if got := e.Allowed(prompt.Park); got != allowed|agent.Approve|agent.Reject {
			t.Errorf("Allowed = %v, want %v", got, allowed|agent.Approve|agent.Reject)
		}
		return s
	}
	decide := func(s setup, d agent.Decided) error {
		ok, err := s.e.Decide(ctx, s.sess, s.park.ID, d, nil)
		if err == nil && !ok {
			return errors.New("not taken")
		}
		return err
	}
	finish := func(t *testing.T, s setup) {
		t.Helper()
		s.f.next(t, agent.EventReply)
		s.e.Wait()
	}

	t.Run("not allowed", func(t *testing.T) {
		s := start(t, agent.Approve|agent.Reject)
		for _, d := range []agent.Decided{{Decision: agent.Edit, Arguments: []byte(`{"id":43}`)}, {Decision: agent.Respond, Message: "no"},
			{Decision: agent.Approve | agent.Reject}, {}} {
			if err := decide(s, d); !errors.Is(err, agent.ErrDecisionNotAllowed) {
				t.Errorf("Decide(%v) = %v, want ErrDecisionNotAllowed", d.Decision, err)
			}
		}
		if _, err := s.st.PendingPark(ctx, "c1"); err != nil {
			t.Errorf("the confirmation after refused decisions: %v, want it pending", err)
		}
	})

	t.Run("edit", func(t *testing.T) {
		s := start(t, agent.Edit)
		for _, bad := range []string{`{"id":"forty-three"}`, `[43]`, `not json`} {
			var invalid *agent.InvalidAnswerError
			if err := decide(s, agent.Decided{Decision: agent.Edit, Arguments: []byte(bad)}); !errors.As(err, &invalid) || len(invalid.Errors) == 0 {
				t.Fatalf("Decide(Edit %s) = %v, want field errors", bad, err)
			}
			if bad == `{"id":"forty-three"}` && invalid.Errors[0].Field != "id" {
				t.Errorf("the field error of %s: %+v, want it on id", bad, invalid.Errors)
			}
		}
		if err := decide(s, agent.Decided{Decision: agent.Edit, Arguments: []byte(`{"id": 43}`)}); err != nil {
			t.Fatal(err)
		}
		finish(t, s)
		if ran := s.ran(); len(ran) != 1 || ran[0] != 43 {
			t.Errorf("the tool ran with %v, want the edited id 43 once", ran)
		}
		if r := s.m.lastToolResult(t); !strings.Contains(r.Text, `edited this call's arguments; it ran with {"id":43}`) || !strings.HasSuffix(r.Text, "deleted") || r.IsError {
			t.Errorf("the model read %q (error %v)", r.Text, r.IsError)
		}
		if r := s.record(); r.Decision != "edited" || string(r.Arguments) != `{"id":42}` || string(r.EditedArguments) != `{"id":43}` {
			t.Errorf("the record: %+v, want edited with both sets of arguments", r)
		}
	})

	t.Run("reject with a message", func(t *testing.T) {
		s := start(t, agent.Approve|agent.Reject)
		if err := decide(s, agent.Decided{Decision: agent.Reject, Message: "no, record 43"}); err != nil {
			t.Fatal(err)
		}
		finish(t, s)
		if ran := s.ran(); len(ran) != 0 {
			t.Errorf("the tool ran: %v", ran)
		}
		if r := s.m.lastToolResult(t); !strings.Contains(r.Text, "no, record 43") || !r.IsError {
			t.Errorf("the model read %q (error %v), want the person's message as an error", r.Text, r.IsError)
		}
		if r := s.record(); r.Decision != "rejected" || r.EditedArguments != nil {
			t.Errorf("the record: %+v", r)
		}
	})

	t.Run("respond", func(t *testing.T) {
		s := start(t, agent.Respond)
		var invalid *agent.InvalidAnswerError
		if err := decide(s, agent.Decided{Decision: agent.Respond, Message: "  "}); !errors.As(err, &invalid) {
			t.Fatalf("Respond with no words = %v, want a field error", err)
		}
		if err := decide(s, agent.Decided{Decision: agent.Respond, Message: "It was deleted yesterday."}); err != nil {
			t.Fatal(err)
		}
		finish(t, s)
		if ran := s.ran(); len(ran) != 0 {
			t.Errorf("the tool ran: %v", ran)
		}
		if r := s.m.lastToolResult(t); !strings.HasSuffix(r.Text, "It was deleted yesterday.") || r.IsError {
			t.Errorf("the model read %q (error %v), want the person's words as the result", r.Text, r.IsError)
		}
		if r := s.record(); r.Decision != "responded" {
			t.Errorf("the record: %+v", r)
		}
		p, err := s.st.EndedPark(ctx, "c1", s.park.ID)
		if err != nil || string(p.Outcome) != `{"status":"responded"}` {
			t.Errorf("the outcome: %v, %v", p, err)
		}
	})
}
