package agent_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jonboulle/clockwork"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/storetest"
)

// twoSessions makes conversation conv with the capability to show a
// choices card, and two sessions of it (two tabs, or two people).
func twoSessions(t *testing.T, st store.Store, conv string) (*store.Session, *store.Session) {
	t.Helper()
	s1 := &store.Session{ID: conv + "-s1", ConversationID: conv}
	s2 := &store.Session{ID: conv + "-s2", ConversationID: conv}
	c := &store.Conversation{ID: conv, Supports: []string{"choice_chips"}, CreatedAt: time.Now()}
	if err := st.CreateConversation(context.Background(), c, s1, s2); err != nil {
		t.Fatal(err)
	}
	return s1, s2
}

// The engine decides what a message sent while a card waits does: the
// card's own session is refused unless it withdraws the card by name,
// another session withdraws it, and either way the old card is answered
// no more. No transport reads the pending park first.
func TestSendWhileCardWaits(t *testing.T) {
	ctx := context.Background()
	u, a, tool, reply := store.RoleUser, store.RoleAssistant, store.RoleTool, store.RoleReply
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			e := engine(t, st, script(t, "Pro it is."), clockwork.NewFakeClock())
			s1, s2 := twoSessions(t, st, "c1")
			f := newFollower()
			f.start(e, s1, "hi")
			f.next(t, agent.EventPrompt)
			p, err := st.PendingPark(ctx, "c1")
			if err != nil {
				t.Fatal(err)
			}

			// The card's own session, not naming it: refused, nothing stored.
			err = e.Send(ctx, s1, agent.Message{RequestID: "r2", Text: "second"}, nil)
			if !errors.Is(err, agent.ErrTurnInProgress) {
				t.Fatalf("Send from the card's session = %v, want ErrTurnInProgress", err)
			}
			if d := cmp.Diff([]store.Role{u, a}, roles(t, st, "c1")); d != "" {
				t.Errorf("history after a refused message (-want +got):\n%s", d)
			}
			if _, err := st.PendingPark(ctx, "c1"); err != nil {
				t.Errorf("the card after a refused message: %v", err)
			}

			// Another session: the card is withdrawn in the write that
			// stores the message, and the old turn is told cancelled first.
			acked := false
			err = e.Send(ctx, s2, agent.Message{RequestID: "r2", Text: "Pro, please"}, func() { acked = true })
			if err != nil || !acked {
				t.Fatalf("Send from another session = %v (acked %v)", err, acked)
			}
			if ev := f.next(t, agent.EventCancelled); ev.RequestID != "r1" {
				t.Errorf("cancelled %q, want r1", ev.RequestID)
			}
			if ev := f.next(t, agent.EventReply); ev.RequestID != "r2" {
				t.Errorf("replied to %q, want r2", ev.RequestID)
			}
			e.Wait()
			var ended *agent.AskEndedError
			if ok, err := e.Submit(ctx, s1, p.ID, agent.Answer{Values: []byte(picked)}, nil); ok || !errors.As(err, &ended) || ended.Status != "withdrawn" {
				t.Errorf("an answer to the withdrawn card = %v, %v; want not taken, withdrawn", ok, err)
			}
			if got := roles(t, st, "c1"); !slices.Equal(got[:4], []store.Role{u, a, tool, u}) || got[len(got)-1] != reply {
				t.Errorf("history after the withdrawal: %v, want user, assistant, tool (withdrawn), user, …, reply", got)
			}

			// The card's own session withdraws it by name.
			s3, _ := twoSessions(t, st, "c2")
			g := newFollower()
			g.start(e, s3, "hi")
			g.next(t, agent.EventPrompt)
			q, err := st.PendingPark(ctx, "c2")
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Send(ctx, s3, agent.Message{RequestID: "r2", Text: "Pro", Withdraw: q.ID}, nil); err != nil {
				t.Fatalf("Send that withdraws its own card = %v", err)
			}
			g.next(t, agent.EventCancelled)
			g.next(t, agent.EventReply)
			e.Wait()
			if got := roles(t, st, "c2"); !slices.Equal(got[:4], []store.Role{u, a, tool, u}) || got[len(got)-1] != reply {
				t.Errorf("history after withdrawing by name: %v, want user, assistant, tool (withdrawn), user, …, reply", got)
			}
		})
	}
}

// A message races a turn that is about to park, through the exported
// API, many times: it is refused while the turn runs, withdraws the card
// once it waits (from another session, on another engine on PostgreSQL,
// as another process would), and never yields two turns at once.
func TestSendRacesParkingTurn(t *testing.T) {
	ctx := context.Background()
	const rounds = 25
	for name, open := range stores(t) {
		if name == "memory" {
			continue // one process only: covered by TestSendWhileCardWaits
		}
		t.Run(name, func(t *testing.T) {
			st := open(t)
			other := st // the second engine's store
			if name == "postgres" {
				// Two engines on one database, as two processes are.
				dsn := storetest.PostgresDB(t)
				st, other = openStore(t, dsn), openStore(t, dsn)
			}
			clock := clockwork.NewFakeClock()
			first := engine(t, st, script(t, "Pro it is."), clock)
			second := first
			if other != st {
				second = engine(t, other, script(t, "Pro it is."), clock)
			}
			// Each hears the other from the first round on: a note sent
			// before an engine listens is lost, as the relay has it.
			for _, e := range []*agent.Engine{first, second} {
				if err := e.RelayReady(ctx); err != nil {
					t.Fatal(err)
				}
			}
			outcomes := map[string]int{}
			for i := range rounds {
				conv := fmt.Sprintf("race-%d", i)
				s1, s2 := twoSessions(t, st, conv)
				f := newFollower()
				stop := first.Subscribe(ctx, conv, agent.Position{}, func(ev agent.Event) { f.events <- ev })
				if err := first.Send(ctx, s1, agent.Message{RequestID: "r1", Text: "hi"}, nil); err != nil {
					t.Fatal(err)
				}
				var own, others error
				var wg sync.WaitGroup
				wg.Go(func() { own = first.Send(ctx, s1, agent.Message{RequestID: "r-own", Text: "again"}, nil) })
				wg.Go(func() { others = second.Send(ctx, s2, agent.Message{RequestID: "r2", Text: "Pro, please"}, nil) })
				wg.Wait()
				// The parking turn's own session is refused, unless the
				// other message withdrew the card and its turn ended first.
				if !errors.Is(own, agent.ErrTurnInProgress) && (own != nil || others != nil) {
					t.Fatalf("round %d: Send from the parking turn's own session = %v (the other's: %v)", i, own, others)
				}
				switch {
				case errors.Is(others, agent.ErrTurnInProgress):
					outcomes["refused while the turn ran"]++
					f.next(t, agent.EventPrompt)
				case others == nil:
					outcomes["withdrew the card"]++
					f.next(t, agent.EventCancelled)
					f.next(t, agent.EventReply)
				default:
					t.Fatal(others)
				}
				stop()
				first.Wait()
				second.Wait()
				got := roles(t, st, conv)
				for j := 1; j < len(got); j++ {
					if got[j] == store.RoleUser && got[j-1] != store.RoleTool && got[j-1] != store.RoleReply {
						t.Fatalf("round %d: history %v: a message started a turn while another was open", i, got)
					}
				}
				pending, err := st.PendingPark(ctx, conv)
				if (others == nil) != errors.Is(err, store.ErrNotFound) || (err != nil && !errors.Is(err, store.ErrNotFound)) {
					t.Fatalf("round %d: pending park %v, %v after the message got %v", i, pending, err, others)
				}
			}
			t.Logf("%d rounds: %v", rounds, outcomes)
		})
	}
}
