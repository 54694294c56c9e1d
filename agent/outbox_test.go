package agent_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
)

// leaseAll takes every event of consumer from st's outbox, in the order
// they go out, as "conversation type status" lines.
func leaseAll(t *testing.T, st store.Store, consumer string) []string {
	t.Helper()
	ctx := context.Background()
	out := store.OutboxOf(st)
	var got []string
	for range 100 {
		ev, err := out.LeaseEvent(ctx, consumer, "test", time.Now().Add(24*time.Hour), time.Now().Add(25*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if ev == nil {
			return got
		}
		got = append(got, strings.TrimSpace(fmt.Sprintf("%s %s %s", ev.ConversationID, ev.Type, ev.Status)))
		if err := out.EventDone(ctx, consumer, ev.ID); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("the outbox never ran dry")
	return nil
}

// Every way the engine ends an ask writes its ask.resolved event, after
// its ask.parked, on every store, when the engine names an outbox
// consumer; an engine that names none writes no event.
func TestOutbox(t *testing.T) {
	ctx := context.Background()
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			clock := clockwork.NewFakeClock()
			e := newEngine(t, agent.Config{Store: st, Model: script(t, "Pro it is."), Clock: clock, Outbox: []string{"hook"}})
			parked := func(conv string) (*store.Session, *store.Session, *store.Park) {
				t.Helper()
				s1, s2 := twoSessions(t, st, conv)
				f := newFollower()
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
			s1, _, p := parked("answered")
			if ok, err := e.Submit(ctx, s1, p.ID, agent.Answer{Values: []byte(picked)}, nil); !ok || err != nil {
				t.Fatalf("Submit = %v, %v", ok, err)
			}
			s1, _, p = parked("declined")
			if ok, err := e.Submit(ctx, s1, p.ID, agent.Answer{Declined: true}, nil); !ok || err != nil {
				t.Fatalf("Decline = %v, %v", ok, err)
			}
			_, s2, _ := parked("withdrawn")
			if err := e.Send(ctx, s2, agent.Message{RequestID: "r2", Text: "no"}, nil); err != nil {
				t.Fatal(err)
			}
			parked("stopped")
			e.Cancel(ctx, "stopped", "r1")
			parked("expired")
			waitFor(t, clock, func() bool {
				_, err := st.PendingPark(ctx, "expired")
				return err != nil
			}, time.Hour)
			e.Wait()
			got := leaseAll(t, st, "hook")
			want := []string{
				"answered ask.parked", "declined ask.parked", "withdrawn ask.parked", "stopped ask.parked", "expired ask.parked",
				"answered ask.resolved submitted", "declined ask.resolved declined", "withdrawn ask.resolved withdrawn",
				"stopped ask.resolved cancelled", "expired ask.resolved no_response",
			}
			// Parked events go first (leaseAll finishes each as it
			// goes, so the order is by ask, then by time).
			if strings.Join(sorted(got), "\n") != strings.Join(sorted(want), "\n") {
				t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			seen := map[string]bool{}
			for _, g := range got {
				conv, typ, _ := strings.Cut(g, " ")
				if strings.HasPrefix(typ, store.EventAskResolved) && !seen[conv] {
					t.Errorf("%s: ask.resolved before ask.parked", conv)
				}
				seen[conv] = true
			}
		})
	}
	t.Run("off", func(t *testing.T) {
		st := memstore.New()
		e := newEngine(t, agent.Config{Store: st, Model: script(t, "Pro it is."), Clock: clockwork.NewFakeClock()})
		sess := conversation(t, st, "", "choice_chips")
		f := newFollower()
		f.start(e, sess, "hi")
		f.next(t, agent.EventPrompt)
		store.OutboxOf(st).OpenOutbox("hook")
		if got := leaseAll(t, st, "hook"); len(got) != 0 {
			t.Errorf("an engine with no Outbox wrote %v", got)
		}
	})
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
