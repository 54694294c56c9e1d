package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/gen/choicesgen"
	"github.com/kindkit/kindkit/store"
)

// twoRaises is a model whose first step raises two choices cards in one
// response, and whose next step replies with every tool result it was
// given, so a test reads from the reply what the turn resumed with. It
// counts its steps: a turn that resumed twice would call it three times.
type twoRaises struct {
	mu    sync.Mutex
	calls int
	seen  [][]*store.Message
}

func raiseArgs(question string) string {
	return `{"questions":[{"question":"` + question + `","header":"` + question + `","options":["Basic","Pro"]}],"reason":"to quote"}`
}

func (m *twoRaises) Respond(_ context.Context, req agent.ModelRequest, _ func(string)) (agent.ModelResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	m.seen = append(m.seen, req.History)
	last := req.History[len(req.History)-1]
	if last.Role == store.RoleUser {
		return agent.ModelResponse{ToolCalls: []store.ToolCall{
			{ID: "call-a", Name: "request_choices", Arguments: raiseArgs("Plan")},
			{ID: "call-b", Name: "request_choices", Arguments: raiseArgs("Term")},
		}}, nil
	}
	var got []string
	for _, h := range req.History {
		if h.Role == store.RoleTool {
			got = append(got, h.ToolCallID+"="+h.Text)
		}
	}
	slices.Sort(got)
	return agent.ModelResponse{Text: strings.Join(got, "\n")}, nil
}

func (m *twoRaises) steps() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls
}

func answerOf(option string, header string) agent.Answer {
	return agent.Answer{Values: []byte(`{"answers":[{"header":"` + header + `","options":["` + option + `"]}]}`)}
}

// prompts reads n prompts from f.
func (f *follower) prompts(t *testing.T, n int) []*store.Park {
	t.Helper()
	var ps []*store.Park
	for range n {
		ps = append(ps, f.next(t, agent.EventPrompt).Park)
	}
	return ps
}

// TestParallelAsksOpenAtOnce: with ParallelAsks, a step's two raises open
// both cards at once; answered in reverse order, the first answer is
// stored and resumes nothing, the second resumes the turn once, with both
// answers, on every store.
func TestParallelAsksOpenAtOnce(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st := open(t)
			m := &twoRaises{}
			e := engine(t, st, m, clockwork.NewFakeClock())
			sess := conversation(t, st, "", "choice_chips", agent.ParallelAsks)
			f := newFollower()
			f.start(e, sess, "quote me")
			shown := f.prompts(t, 2)
			if shown[0].ToolCall.ID != "call-a" || shown[1].ToolCall.ID != "call-b" || shown[0].Group == "" || shown[0].Group != shown[1].Group {
				t.Fatalf("prompts = %s (group %q), %s (group %q); want call-a and call-b of one group",
					shown[0].ToolCall.ID, shown[0].Group, shown[1].ToolCall.ID, shown[1].Group)
			}
			open, err := e.PendingAsks(ctx, "c1")
			if err != nil || len(open) != 2 || open[0].ID != shown[0].ID || open[1].ID != shown[1].ID {
				t.Fatalf("PendingAsks = %v, %v; want both, in order", open, err)
			}
			if first, err := e.PendingAsk(ctx, "c1"); err != nil || first.ID != shown[0].ID {
				t.Errorf("PendingAsk = %v, %v; want the first", first, err)
			}

			var taken agent.Taken
			ok, err := e.Submit(ctx, sess, shown[1].ID, answerOf("Pro", "Term"), func(tk agent.Taken) { taken = tk })
			if err != nil || !ok || taken.Resumes || taken.RequestID != "r1" {
				t.Fatalf("Submit of the second card = %v, %v, %+v; want taken, resuming nothing", ok, err, taken)
			}
			if left, _ := e.PendingAsks(ctx, "c1"); len(left) != 1 || left[0].ID != shown[0].ID {
				t.Fatalf("PendingAsks after one answer = %v, want the first card", left)
			}
			e.Wait()
			if n := m.steps(); n != 1 {
				t.Fatalf("model steps after one of two answers = %d, want 1", n)
			}
			ok, err = e.Submit(ctx, sess, shown[0].ID, answerOf("Basic", "Plan"), func(tk agent.Taken) { taken = tk })
			if err != nil || !ok || !taken.Resumes {
				t.Fatalf("Submit of the last card = %v, %v, %+v; want taken, resuming", ok, err, taken)
			}
			reply := f.next(t, agent.EventReply)
			e.Wait()
			want := `call-a={"status":"submitted","values":{"answers":[{"header":"Plan","options":["Basic"]}]}}` + "\n" +
				`call-b={"status":"submitted","values":{"answers":[{"header":"Term","options":["Pro"]}]}}`
			if reply.Reply.Text != want {
				t.Errorf("reply = %q, want both answers:\n%s", reply.Reply.Text, want)
			}
			if n := m.steps(); n != 2 {
				t.Errorf("model steps = %d, want 2: the turn resumed once", n)
			}
			wantRoles := []store.Role{store.RoleUser, store.RoleAssistant, store.RoleTool, store.RoleTool, store.RoleAssistant, store.RoleReply}
			if got := history(t, st); !slices.Equal(got, wantRoles) {
				t.Errorf("history = %v, want %v", got, wantRoles)
			}
			noOwedTurns(t, st, time.Now(), "after the reply")
			var ended *agent.AskEndedError
			if again, err := e.Submit(ctx, sess, shown[1].ID, answerOf("Basic", "Term"), nil); again || !errors.As(err, &ended) {
				t.Errorf("a second answer to the second card = %v, %v; want it ended", again, err)
			}
		})
	}
}

// TestParallelAsksOffOneAtATime: without ParallelAsks the same step opens
// one card, the next after the first's answer, as before.
func TestParallelAsksOffOneAtATime(t *testing.T) {
	ctx := context.Background()
	st := stores(t)["memory"](t)
	m := &twoRaises{}
	e := engine(t, st, m, clockwork.NewFakeClock())
	sess := conversation(t, st, "", "choice_chips")
	f := newFollower()
	f.start(e, sess, "quote me")
	first := f.next(t, agent.EventPrompt).Park
	if open, _ := e.PendingAsks(ctx, "c1"); len(open) != 1 || first.ToolCall.ID != "call-a" || first.Group != "" {
		t.Fatalf("open asks = %d, first %s of group %q; want call-a alone", len(open), first.ToolCall.ID, first.Group)
	}
	var taken agent.Taken
	if ok, err := e.Submit(ctx, sess, first.ID, answerOf("Pro", "Plan"), func(tk agent.Taken) { taken = tk }); !ok || err != nil || !taken.Resumes {
		t.Fatalf("Submit = %v, %v, %+v", ok, err, taken)
	}
	second := f.next(t, agent.EventPrompt).Park
	if second.ToolCall.ID != "call-b" {
		t.Fatalf("second prompt = %s, want call-b", second.ToolCall.ID)
	}
	if ok, err := e.Submit(ctx, sess, second.ID, answerOf("Pro", "Term"), nil); !ok || err != nil {
		t.Fatalf("Submit = %v, %v", ok, err)
	}
	f.next(t, agent.EventReply)
	e.Wait()
	if n := m.steps(); n != 2 {
		t.Errorf("model steps = %d, want 2", n)
	}
}

// TestParallelAsksTwoProcesses: two engines share a PostgreSQL store, as
// two processes do. The cards one step opened are answered in reverse
// order from two sessions, one on each process, and then, round after
// round, both at once: the turn resumes exactly once, with both answers.
func TestParallelAsksTwoProcesses(t *testing.T) {
	ctx := context.Background()
	st := stores(t)["postgres"](t)
	m := &twoRaises{}
	one := engine(t, st, m, clockwork.NewRealClock())
	two := engine(t, st, m, clockwork.NewRealClock())
	for round := range 6 {
		conv := fmt.Sprintf("conv-%d", round)
		if err := st.CreateConversation(ctx, &store.Conversation{ID: conv, Supports: []string{"choice_chips", agent.ParallelAsks}, CreatedAt: time.Now()},
			&store.Session{ID: conv + "-s1"}, &store.Session{ID: conv + "-s2"}); err != nil {
			t.Fatal(err)
		}
		s1, err := st.Session(ctx, conv+"-s1")
		if err != nil {
			t.Fatal(err)
		}
		s2, err := st.Session(ctx, conv+"-s2")
		if err != nil {
			t.Fatal(err)
		}
		f := newFollower()
		one.Subscribe(ctx, conv, agent.Position{}, func(ev agent.Event) { f.events <- ev })
		before := m.steps()
		if err := one.Send(ctx, s1, agent.Message{RequestID: "r1", Text: "quote me"}, nil); err != nil {
			t.Fatal(err)
		}
		shown := f.prompts(t, 2)
		answer := func(e *agent.Engine, sess *store.Session, p *store.Park, a agent.Answer) bool {
			var taken agent.Taken
			ok, err := e.Submit(ctx, sess, p.ID, a, func(tk agent.Taken) { taken = tk })
			if err != nil || !ok {
				t.Errorf("round %d: Submit of %s = %v, %v", round, p.ToolCall.ID, ok, err)
			}
			return taken.Resumes
		}
		var resumed []bool
		if round == 0 {
			// In reverse order, one after the other.
			resumed = append(resumed, answer(two, s2, shown[1], answerOf("Pro", "Term")), answer(one, s1, shown[0], answerOf("Basic", "Plan")))
			if resumed[0] || !resumed[1] {
				t.Errorf("resumes = %v, want the last answer's alone", resumed)
			}
		} else {
			var wg sync.WaitGroup
			var mu sync.Mutex
			for i, e := range []*agent.Engine{two, one} {
				wg.Go(func() {
					r := answer(e, []*store.Session{s2, s1}[i], shown[1-i], answerOf([]string{"Pro", "Basic"}[i], []string{"Term", "Plan"}[i]))
					mu.Lock()
					resumed = append(resumed, r)
					mu.Unlock()
				})
			}
			wg.Wait()
		}
		if n := len(slices.DeleteFunc(slices.Clone(resumed), func(r bool) bool { return !r })); n != 1 {
			t.Errorf("round %d: %d answers resumed the turn, want 1", round, n)
		}
		reply := f.next(t, agent.EventReply)
		one.Wait()
		two.Wait()
		if !strings.Contains(reply.Reply.Text, `"Basic"`) || !strings.Contains(reply.Reply.Text, `"Pro"`) {
			t.Errorf("round %d: reply = %q, want both answers", round, reply.Reply.Text)
		}
		if n := m.steps() - before; n != 2 {
			t.Errorf("round %d: model steps = %d, want 2: the turn resumed once", round, n)
		}
		noOwedTurns(t, st, time.Now(), "after the reply")
	}
}

// readRequest is the request id of the turn park p waits on.
func readRequest(p *store.Park) string {
	var s struct {
		RequestID string `json:"requestId"`
	}
	_ = json.Unmarshal(p.Turn, &s)
	return s.RequestID
}

// TestParallelAsksEndTogether: a message from another session withdraws
// every open card of the step, and a cancel ends them all; nothing
// resumes.
func TestParallelAsksEndTogether(t *testing.T) {
	for _, how := range []string{"withdraw", "cancel"} {
		t.Run(how, func(t *testing.T) {
			ctx := context.Background()
			st := stores(t)["sqlite"](t)
			m := &twoRaises{}
			e := engine(t, st, m, clockwork.NewFakeClock())
			sess := conversation(t, st, "", "choice_chips", agent.ParallelAsks)
			f := newFollower()
			f.start(e, sess, "quote me")
			shown := f.prompts(t, 2)
			if _, err := e.Submit(ctx, sess, shown[0].ID, answerOf("Pro", "Plan"), nil); err != nil {
				t.Fatal(err)
			}
			switch how {
			case "withdraw":
				other := &store.Session{ID: "s2", ConversationID: "c1"}
				if err := st.CreateSession(ctx, other); err != nil {
					t.Fatal(err)
				}
				if err := e.Send(ctx, other, agent.Message{RequestID: "r2", Text: "never mind"}, nil); err != nil {
					t.Fatalf("Send from another session = %v", err)
				}
			case "cancel":
				e.Cancel(ctx, "c1", "r1")
			}
			if ev := f.next(t, agent.EventCancelled); ev.RequestID != "r1" {
				t.Errorf("cancelled = %+v, want r1", ev)
			}
			e.Wait()
			open, _ := e.PendingAsks(ctx, "c1")
			for _, p := range open {
				// The withdrawing message's own turn opens cards of its own.
				if p.ID == shown[0].ID || p.ID == shown[1].ID || readRequest(p) == "r1" {
					t.Errorf("a card of r1 open after the %s: %s", how, p.ToolCall.ID)
				}
			}
			var ended *agent.AskEndedError
			if ok, err := e.Submit(ctx, sess, shown[1].ID, answerOf("Pro", "Term"), nil); ok || !errors.As(err, &ended) {
				t.Errorf("an answer to the other card after the %s = %v, %v; want it ended", how, ok, err)
			}
			if how == "cancel" {
				noOwedTurns(t, st, time.Now(), "after the cancel")
				if n := m.steps(); n != 1 {
					t.Errorf("model steps = %d, want 1: nothing resumed", n)
				}
			}
		})
	}
}

// quoteTool is a host tool that asks for a plan and a term in one AskAll,
// and returns what it was told; runs counts its runs.
func quoteTool(runs *atomic.Int32) agent.HostTool {
	tool, err := agent.NewTool("quote", "Quote a plan.", func(ctx context.Context, _ struct{}) (any, error) {
		runs.Add(1)
		plan := &kindkit.Asking[choicesgen.Spec, choicesgen.Values]{Kind: "choices", Spec: question("Plan", "Basic", "Pro"), Reason: "to quote"}
		term := &kindkit.Asking[choicesgen.Spec, choicesgen.Values]{Kind: "choices", Spec: question("Term", "Monthly", "Yearly"), Reason: "to quote"}
		if err := kindkit.AskAll(ctx, plan, term); err != nil {
			return nil, err
		}
		said := func(q *kindkit.Asking[choicesgen.Spec, choicesgen.Values]) string {
			if q.Err != nil {
				return q.Err.Error()
			}
			return pick(q.Answer)
		}
		return "quoted " + said(plan) + " / " + said(term), nil
	})
	if err != nil {
		panic(err)
	}
	return tool
}

// lastToolResult is conversation c1's newest tool result.
func lastToolResult(t *testing.T, st store.Store) string {
	t.Helper()
	msgs, _, err := st.Messages(context.Background(), "c1", []store.Role{store.RoleTool}, "", 1)
	if err != nil || len(msgs) == 0 {
		t.Fatalf("tool results: %v, %v", msgs, err)
	}
	return msgs[0].Text
}

// TestAskAll: a host tool asks two questions in one AskAll. With
// ParallelAsks both cards open at once; answered in reverse order (one
// declined), the tool runs again once, with both answers typed, on every
// store. Without it they open one at a time, and the tool gets the same.
func TestAskAll(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			var runs atomic.Int32
			s := askTurn(t, open(t), quoteTool(&runs), []string{"choice_chips", agent.ParallelAsks})
			shown := s.f.prompts(t, 2)
			if shown[0].Group == "" || shown[0].Group != shown[1].Group || !strings.Contains(string(shown[1].Spec), "Term") {
				t.Fatalf("cards = %s, %s; want Plan and Term of one group", shown[0].Spec, shown[1].Spec)
			}
			var taken agent.Taken
			if ok, err := s.e.Submit(ctx, s.sess, shown[1].ID, agent.Answer{Declined: true}, func(tk agent.Taken) { taken = tk }); !ok || err != nil || taken.Resumes {
				t.Fatalf("decline of Term = %v, %v, %+v; want taken, resuming nothing", ok, err, taken)
			}
			s.e.Wait()
			if n := runs.Load(); n != 1 {
				t.Fatalf("tool runs after one answer = %d, want 1", n)
			}
			if ok, err := s.e.Submit(ctx, s.sess, shown[0].ID, answerOf("Pro", "Plan"), nil); !ok || err != nil {
				t.Fatalf("Submit of Plan = %v, %v", ok, err)
			}
			s.f.next(t, agent.EventReply)
			s.e.Wait()
			if got := lastToolResult(t, s.st); got != "quoted Pro / "+kindkit.ErrDeclined.Error() {
				t.Errorf("the tool's result = %s, want both answers", got)
			}
			if n := runs.Load(); n != 2 {
				t.Errorf("tool runs = %d, want 2: one run again, once every answer was in", n)
			}
		})
	}
	t.Run("one at a time", func(t *testing.T) {
		ctx := context.Background()
		var runs atomic.Int32
		s := askTurn(t, stores(t)["memory"](t), quoteTool(&runs), []string{"choice_chips"})
		first := s.f.next(t, agent.EventPrompt).Park
		if open, _ := s.e.PendingAsks(ctx, "c1"); len(open) != 1 || first.Group != "" || !strings.Contains(string(first.Spec), "Plan") {
			t.Fatalf("open asks = %d, first %s; want Plan alone", len(open), first.Spec)
		}
		if ok, err := s.e.Submit(ctx, s.sess, first.ID, answerOf("Basic", "Plan"), nil); !ok || err != nil {
			t.Fatalf("Submit = %v, %v", ok, err)
		}
		second := s.f.next(t, agent.EventPrompt).Park
		if !strings.Contains(string(second.Spec), "Term") {
			t.Fatalf("second card = %s, want Term", second.Spec)
		}
		if ok, err := s.e.Submit(ctx, s.sess, second.ID, answerOf("Yearly", "Term"), nil); !ok || err != nil {
			t.Fatalf("Submit = %v, %v", ok, err)
		}
		s.f.next(t, agent.EventReply)
		s.e.Wait()
		if got := lastToolResult(t, s.st); got != "quoted Basic / Yearly" {
			t.Errorf("the tool's result = %s", got)
		}
	})
}
