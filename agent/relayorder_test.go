package agent_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
)

// A turn that starts in one process after a turn of another process ended
// is told there after that turn's events, not before them while the relay
// still carries them: the subscriber of the first process sees the
// conversation in the order it happened. Here the relay holds every note
// while the card's own session sends again once the other session's
// message withdrew the card and its turn ended (under load, the relay
// lags behind the store so: TestSendRacesParkingTurn/postgres then saw
// the new turn's reply before the withdrawn turn's cancelled event).
func TestTurnAfterOtherProcessTurn(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	bus := newHeldBus()
	firstBus := bus.connect()
	clock := clockwork.NewFakeClock()
	first := engine(t, sharedStore{mem, firstBus}, script(t, "Pro it is."), clock)
	second := engine(t, sharedStore{mem, bus.connect()}, script(t, "Pro it is."), clock)
	for _, e := range []*agent.Engine{first, second} {
		if err := e.RelayReady(ctx); err != nil {
			t.Fatal(err)
		}
	}
	s1, s2 := twoSessions(t, mem, "c1")
	f := newFollower()
	stop := first.Subscribe(ctx, "c1", agent.Position{}, func(ev agent.Event) { f.events <- ev })
	defer stop()
	if err := first.Send(ctx, s1, agent.Message{RequestID: "r1", Text: "hi"}, nil); err != nil {
		t.Fatal(err)
	}
	f.next(t, agent.EventPrompt)
	if err := first.RelayReady(ctx); err != nil { // first's notes are out
		t.Fatal(err)
	}

	bus.hold()
	if err := second.Send(ctx, s2, agent.Message{RequestID: "r2", Text: "Pro, please"}, nil); err != nil {
		t.Fatal(err) // another session's message withdraws the card
	}
	second.Wait()
	firstBus.sent() // forget what first sent before
	own := make(chan error, 1)
	go func() { own <- first.Send(ctx, s1, agent.Message{RequestID: "r3", Text: "again"}, nil) }()
	// Either first told the new turn without asking the relay (Send
	// returned), or it waits to hear the relay (it sent a note).
	var err error
	select {
	case err = <-own:
		bus.release()
	case <-firstBus.notified:
		bus.release()
		err = <-own
	}
	if err != nil {
		t.Fatal(err)
	}

	var seen []string
	timeout := time.After(10 * time.Second)
	for !slices.Contains(seen, "r3:reply") {
		select {
		case ev := <-f.events:
			seen = append(seen, fmt.Sprintf("%s:%s", ev.RequestID, ev.Kind))
		case <-timeout:
			t.Fatalf("no reply to r3; seen %v", seen)
		}
	}
	// r1's cancelled, r2's message … reply, then r3's message … reply.
	order := []string{"r1:cancelled", "r2:message", "r2:reply", "r3:message", "r3:reply"}
	at := -1
	for _, ev := range order {
		i := slices.Index(seen, ev)
		if i <= at {
			t.Fatalf("first's subscriber saw %v, want the order %v", seen, order)
		}
		at = i
	}
}

// sharedStore is a store that two engines share as two processes do, with
// a relay of the test's.
type sharedStore struct {
	store.Store
	bus store.Notifier
}

func (s sharedStore) Notifier() store.Notifier { return s.bus }

// heldBus relays every note to every engine connected to it, in the order
// sent, as PostgreSQL's LISTEN/NOTIFY does; while held, it delivers none.
type heldBus struct {
	mu    sync.Mutex
	moved *sync.Cond // a note came, or the hold ended
	notes [][]byte
	held  bool
}

func newHeldBus() *heldBus {
	b := &heldBus{}
	b.moved = sync.NewCond(&b.mu)
	return b
}

func (b *heldBus) hold() {
	b.mu.Lock()
	b.held = true
	b.mu.Unlock()
}

func (b *heldBus) release() {
	b.mu.Lock()
	b.held = false
	b.moved.Broadcast()
	b.mu.Unlock()
}

// connect is one engine's connection to b; its notified channel has a
// value once the engine sent a note.
func (b *heldBus) connect() *busConn {
	return &busConn{bus: b, notified: make(chan struct{}, 1)}
}

type busConn struct {
	bus      *heldBus
	notified chan struct{}
}

// sent tells whether the engine sent a note since the last call.
func (c *busConn) sent() bool {
	select {
	case <-c.notified:
		return true
	default:
		return false
	}
}

func (c *busConn) Notify(_ context.Context, msgs ...[]byte) error {
	b := c.bus
	b.mu.Lock()
	b.notes = append(b.notes, msgs...)
	b.moved.Broadcast()
	b.mu.Unlock()
	select {
	case c.notified <- struct{}{}:
	default:
	}
	return nil
}

func (c *busConn) Listen(ctx context.Context, deliver func([]byte)) error {
	b := c.bus
	stop := context.AfterFunc(ctx, func() {
		b.mu.Lock()
		b.moved.Broadcast()
		b.mu.Unlock()
	})
	defer stop()
	b.mu.Lock()
	next := len(b.notes) // a note sent before one listens is missed
	for {
		for ctx.Err() == nil && (b.held || next == len(b.notes)) {
			b.moved.Wait()
		}
		if ctx.Err() != nil {
			b.mu.Unlock()
			return ctx.Err()
		}
		note := b.notes[next]
		next++
		b.mu.Unlock()
		deliver(note)
		b.mu.Lock()
	}
}
