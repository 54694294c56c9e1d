package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/syncbuf"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
)

// secret is an answer's words that no log line and no record may hold.
const secret = "Zebra-Sekret-42"

// Every ask that ends keeps its record: who ended it, when, by which path
// and in which process. Engine.Records lists them per conversation, on
// every store, and the log never holds an answer's values.
func TestRecords(t *testing.T) {
	ctx := context.Background()
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			clock := clockwork.NewFakeClock()
			logs := &syncbuf.Buffer{}
			e := newEngine(t, agent.Config{Store: st, Model: script(t, "Pro it is."), Clock: clock,
				Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			followers := map[string]*follower{}
			parked := func(conv string) (*store.Session, *store.Session, *store.Park) {
				t.Helper()
				s1, s2 := twoSessions(t, st, conv)
				f := newFollower()
				followers[conv] = f
				t.Cleanup(e.Subscribe(ctx, conv, agent.Position{}, func(ev agent.Event) { f.events <- ev }))
				if err := e.Send(ctx, s1, agent.Message{RequestID: "r1", Text: "hi"}, nil); err != nil {
					t.Fatal(err)
				}
				f.next(t, agent.EventPrompt)
				p, err := st.PendingPark(ctx, conv)
				if err != nil {
					t.Fatal(err)
				}
				return s1, s2, p
			}
			only := func(conv string) agent.AskRecord {
				t.Helper()
				e.Wait()
				rs, err := e.Records(ctx, conv, time.Time{}, "", 10)
				if err != nil || len(rs) != 1 || rs[0].Record == nil {
					t.Fatalf("Records(%s) = %+v, %v; want one with its record", conv, rs, err)
				}
				r := rs[0].Record
				if r.Process == "" || r.At.IsZero() || r.Asked != agent.AskedByModel || rs[0].Kind != "choices" {
					t.Errorf("Records(%s): %+v %+v", conv, rs[0], r)
				}
				return rs[0]
			}

			// Answered on its card by an authenticated person.
			s1, _, p := parked("answered")
			answer := `{"answers":[{"header":"Plan","options":[],"other":"` + secret + `"}]}`
			if ok, err := e.Submit(agent.WithPrincipal(ctx, "ada"), s1, p.ID, agent.Answer{Values: []byte(answer)}, nil); !ok || err != nil {
				t.Fatalf("Submit = %v, %v", ok, err)
			}
			a := only("answered")
			if r := a.Record; r.Via != agent.ViaCard || r.By != "ada" || r.SessionID != s1.ID || a.State != store.ParkResolved || a.ID != p.ID {
				t.Errorf("answered: %+v %+v", a, r)
			}
			if raw, _ := json.Marshal(a.Record); strings.Contains(string(raw), secret) {
				t.Errorf("the record holds the answer: %s", raw)
			}

			// Withdrawn by another session's message, and by its own
			// session's words.
			_, s2, _ := parked("withdrawn")
			if err := e.Send(agent.WithPrincipal(ctx, "bea"), s2, agent.Message{RequestID: "r2", Text: "no"}, nil); err != nil {
				t.Fatal(err)
			}
			if r := only("withdrawn").Record; r.Via != agent.ViaWithdraw || r.By != "bea" || r.SessionID != s2.ID {
				t.Errorf("withdrawn: %+v", r)
			}
			s1, _, p = parked("words")
			if err := e.Send(ctx, s1, agent.Message{RequestID: "r2", Text: "Pro", Withdraw: p.ID}, nil); err != nil {
				t.Fatal(err)
			}
			if r := only("words").Record; r.Via != agent.ViaWords || r.By != "" || r.SessionID != s1.ID {
				t.Errorf("words: %+v", r)
			}

			// Stopped, by whoever the context names.
			parked("stopped")
			e.Cancel(agent.WithPrincipal(ctx, "cy"), "stopped", "r1")
			if r := only("stopped").Record; r.Via != agent.ViaCancel || r.By != "cy" || r.SessionID != "" {
				t.Errorf("stopped: %+v", r)
			}

			// Nobody answered: the deadline ended it.
			parked("expired")
			waitFor(t, clock, func() bool {
				_, err := st.PendingPark(ctx, "expired")
				return err != nil
			}, time.Hour)
			// Its turn resumed (no_response) and ran: only then may Wait
			// be called, which must not race a turn being started.
			followers["expired"].next(t, agent.EventReply)
			if r := only("expired").Record; r.Via != agent.ViaDeadline || r.By != "" || r.SessionID != "" {
				t.Errorf("expired: %+v", r)
			}

			if strings.Contains(logs.String(), secret) {
				t.Errorf("the log holds an answer's values:\n%s", logs.String())
			}
		})
	}
}

// A write confirmation's record keeps the decision and the arguments it
// was asked about.
func TestConfirmationRecord(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	del, err := agent.NewTool("delete_record", "Delete a record.", func(ctx context.Context, a struct {
		ID int `json:"id"`
	}) (any, error) {
		return "deleted", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, agent.Config{Store: st, Tools: []agent.HostTool{del}, Confirm: agent.ConfirmMatching(agent.Approve|agent.Reject, "delete"), Clock: clockwork.NewFakeClock(),
		Model: scripted(t, agent.ScriptEntry{Kind: "toolCall", Name: "delete_record", Arguments: `{"id":42}`, ID: "call-1"},
			agent.ScriptEntry{Kind: "text", Text: "done"})})
	sess := conversation(t, st, "")
	f := newFollower()
	f.start(e, sess, "delete record 42")
	f.next(t, agent.EventPrompt)
	p, err := st.PendingPark(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := e.Confirm(agent.WithPrincipal(ctx, "ops"), sess, p.ID, true, nil); !ok || err != nil {
		t.Fatalf("Confirm = %v, %v", ok, err)
	}
	f.next(t, agent.EventReply)
	e.Wait()
	rs, err := e.Records(ctx, "c1", time.Time{}, "", 10)
	if err != nil || len(rs) != 1 || rs[0].Record == nil {
		t.Fatalf("Records = %+v, %v", rs, err)
	}
	r := rs[0].Record
	if r.Asked != agent.AskedByConfirmation || r.Decision != "approved" || r.By != "ops" || r.Via != agent.ViaCard ||
		string(r.Arguments) != `{"id":42}` || rs[0].Kind != "" || rs[0].Tool != "delete_record" {
		t.Errorf("the confirmation's record: %+v %+v", rs[0], r)
	}
}

// An answer that comes after its ask ended learns what became of it and
// when, on every store; one to an ask nobody raised is just not taken.
func TestLateAnswer(t *testing.T) {
	ctx := context.Background()
	answer := agent.Answer{Values: []byte(picked)}
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			clock := clockwork.NewFakeClock()
			e := engine(t, st, script(t, "Pro it is."), clock)
			late := func(conv string, s *store.Session, id string) *agent.AskEndedError {
				t.Helper()
				ok, err := e.Submit(ctx, s, id, answer, nil)
				var ended *agent.AskEndedError
				if ok || !errors.As(err, &ended) {
					t.Fatalf("a late answer = %v, %v; want an *AskEndedError", ok, err)
				}
				return ended
			}
			sess, f, p := parkOne(t, e, st, "hello")
			if ok, err := e.Submit(ctx, sess, p.ID, answer, nil); !ok || err != nil {
				t.Fatalf("Submit = %v, %v", ok, err)
			}
			f.next(t, agent.EventReply)
			e.Wait()
			if ended := late("c1", sess, p.ID); ended.Status != "submitted" || ended.Via != agent.ViaCard || ended.At.IsZero() ||
				!strings.HasPrefix(ended.Error(), "this card was answered at ") {
				t.Errorf("answered twice: %+v (%v)", ended, ended)
			}

			s2, _ := twoSessions(t, st, "c2")
			g := newFollower()
			t.Cleanup(e.Subscribe(ctx, "c2", agent.Position{}, func(ev agent.Event) { g.events <- ev }))
			if err := e.Send(ctx, s2, agent.Message{RequestID: "r1", Text: "hi"}, nil); err != nil {
				t.Fatal(err)
			}
			prompt := g.next(t, agent.EventPrompt)
			waitFor(t, clock, func() bool { _, err := st.PendingPark(ctx, "c2"); return err != nil }, time.Hour)
			e.Wait()
			if ended := late("c2", s2, prompt.Park.ID); ended.Status != "no_response" || ended.Via != agent.ViaDeadline ||
				!strings.Contains(ended.Error(), "expired at ") {
				t.Errorf("answered after the deadline: %+v (%v)", ended, ended)
			}

			for _, id := range []string{store.NewID(), "not-an-id"} {
				if ok, err := e.Submit(ctx, sess, id, answer, nil); ok || err != nil {
					t.Errorf("Submit(%q), an ask nobody raised = %v, %v; want false, nil", id, ok, err)
				}
			}
		})
	}
}
