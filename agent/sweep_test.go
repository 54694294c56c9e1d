package agent_test

import (
	"context"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/demo"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
)

// sweeps is a store that tells when a sweep is over: the engine asks for
// owed turns after it has resolved the expired parks.
type sweeps struct {
	store.Store
	done chan struct{}
}

func (s sweeps) OwedTurns(ctx context.Context, now time.Time, limit int) ([]*store.Park, error) {
	defer func() { s.done <- struct{}{} }()
	return s.Store.OwedTurns(ctx, now, limit)
}

// TestEngineSweepBatches: however many parks are due, one tick of the
// sweep resolves at most a batch of them (100), the earliest first, and the
// next ticks work off the rest.
func TestEngineSweepBatches(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	clock := clockwork.NewFakeClock()
	const due = 250
	for i := range due {
		c := "c" + strconv.Itoa(i)
		if err := mem.CreateConversation(ctx, &store.Conversation{ID: c, Supports: []string{"choice_chips"}, CreatedAt: clock.Now()}); err != nil {
			t.Fatal(err)
		}
		if err := mem.CreateSession(ctx, &store.Session{ID: c + "-s", ConversationID: c}); err != nil {
			t.Fatal(err)
		}
		call := store.ToolCall{ID: c + "-call", Name: "request_choices", Arguments: "{}"}
		if _, err := mem.SavePark(ctx, &store.Park{ID: c + "-p", Type: store.ParkInteraction, ConversationID: c, SessionID: c + "-s",
			Kind: "choices", Spec: []byte(`{"questions":[]}`), ToolCall: call, State: store.ParkPending,
			Deadline: clock.Now().Add(-time.Duration(due-i) * time.Second)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	st := sweeps{mem, make(chan struct{})}
	e := newEngine(t, agent.Config{Store: st, Model: demo.Model{}, Clock: clock, Logger: slog.New(slog.DiscardHandler)})
	pending := func() []*store.Park {
		t.Helper()
		ps, err := mem.ExpiredParks(ctx, clock.Now().Add(time.Hour), 1000)
		if err != nil {
			t.Fatal(err)
		}
		return ps
	}
	for _, left := range []int{150, 50, 0} {
		<-st.done // the sweep at the start, then one a tick
		ps := pending()
		if len(ps) != left {
			t.Fatalf("after a sweep %d parks pending, want %d", len(ps), left)
		}
		if left > 0 && ps[0].ID != "c"+strconv.Itoa(due-left)+"-p" {
			t.Errorf("after a sweep the earliest pending park is %s, want c%d-p: the earliest go first", ps[0].ID, due-left)
		}
		// Let the resumed turns finish, then tick (the loop made its
		// ticker before its first sweep).
		e.Wait()
		if left > 0 {
			clock.Advance(time.Second)
		}
	}
}
