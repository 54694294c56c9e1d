package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kindkit/kindkit/store"
)

func outboxOf(t *testing.T, s store.Store) store.Outbox {
	t.Helper()
	o := store.OutboxOf(s)
	if o == nil {
		t.Fatalf("%T keeps no outbox", s)
	}
	return o
}

// drain leases consumer's events at now until none is due, without
// finishing them, and returns them in the order leased.
func drain(t *testing.T, o store.Outbox, consumer string, now time.Time) []*store.OutboxEvent {
	t.Helper()
	var out []*store.OutboxEvent
	for range 100 {
		e, err := o.LeaseEvent(context.Background(), consumer, "w", now, now.Add(time.Minute))
		must(t, err)
		if e == nil {
			return out
		}
		out = append(out, e)
	}
	t.Fatal("LeaseEvent never ran dry")
	return nil
}

func done(t *testing.T, o store.Outbox, events []*store.OutboxEvent) {
	t.Helper()
	for _, e := range events {
		must(t, o.EventDone(context.Background(), e.Consumer, e.ID))
	}
}

// testOutboxOff: a store whose outbox has no consumer writes no event,
// and a consumer added later gets only what follows.
func testOutboxOff(t *testing.T, s store.Store) {
	ctx := context.Background()
	o := outboxOf(t, s)
	newConv(t, s, "c1")
	savePark(t, s, newPark("c1", "p1", at(600)))
	if _, ok, err := s.TakePark(ctx, "p1", store.Answer{State: store.ParkExpired}); err != nil || !ok {
		t.Fatalf("TakePark = %v, %v", ok, err)
	}
	if o.OutboxOpen("a") {
		t.Error("OutboxOpen before OpenOutbox = true")
	}
	o.OpenOutbox("a")
	if got := drain(t, o, "a", at(0)); len(got) != 0 {
		t.Errorf("events written while the outbox had no consumer: %v", got)
	}
	savePark(t, s, newPark("c1", "p2", at(600)))
	if got := drain(t, o, "a", at(0)); len(got) != 1 || got[0].AskID != "p2" {
		t.Errorf("events after OpenOutbox: %+v, want p2's ask.parked", got)
	}
}

// testOutboxEvents: every way a park ends writes its ask.resolved event
// in the same write: an answer (TakePark), a replacement (SavePark), a
// withdrawal (StartTurn), an expiry; each ask's events go out in order,
// and each consumer gets its own.
func testOutboxEvents(t *testing.T, s store.Store) {
	ctx := context.Background()
	o := outboxOf(t, s)
	o.OpenOutbox("a", "b")
	o.OpenOutbox("a") // again: no second copy
	for _, c := range []string{"c1", "c2", "c3"} {
		newConv(t, s, c)
	}
	// An ended park's event is timed by the store's clock, a replaced
	// one's by the park that replaced it.
	start := time.Now()
	// c1: p1 is replaced by p2, which is answered.
	savePark(t, s, newPark("c1", "p1", at(600)))
	p2 := newPark("c1", "p2", time.Time{})
	p2.CreatedAt = at(-1800)
	savePark(t, s, p2)
	answer := store.Answer{State: store.ParkResolved, Lease: &store.Lease{ParkID: "p2", Owner: "A", Until: at(60)},
		Outcome: json.RawMessage(`{"status":"submitted","values":{"choice":"a"}}`)}
	if _, ok, err := s.TakePark(ctx, "p2", answer); err != nil || !ok {
		t.Fatalf("TakePark(p2) = %v, %v", ok, err)
	}
	if _, ok, err := s.TakePark(ctx, "p2", answer); err != nil || ok {
		t.Fatalf("TakePark(p2) again = %v, %v; want false", ok, err)
	}
	// c2: a confirmation that a message withdraws.
	p3 := newPark("c2", "p3", at(900))
	p3.Type, p3.Kind, p3.ToolCall.Name = store.ParkConfirmation, "", "deploy"
	savePark(t, s, p3)
	l := store.Lease{ParkID: "t-c2", Owner: "me", Until: at(60)}
	if _, ok, err := s.StartTurn(ctx, &store.Message{ID: "m", ConversationID: "c2", Role: store.RoleUser, CreatedAt: at(6)}, turnRecord("c2", l), nil,
		func(p *store.Park) *store.Answer {
			return &store.Answer{State: store.ParkCancelled, Outcome: json.RawMessage(`{"status":"withdrawn","message":"…"}`)}
		}); err != nil || !ok {
		t.Fatalf("StartTurn that withdraws = %v, %v", ok, err)
	}
	// c3: p4 expires with no outcome.
	savePark(t, s, newPark("c3", "p4", at(700)))
	if _, ok, err := s.TakePark(ctx, "p4", store.Answer{State: store.ParkExpired}); err != nil || !ok {
		t.Fatalf("TakePark(p4) = %v, %v", ok, err)
	}
	// A park that cannot be saved writes no event.
	if _, err := s.SavePark(ctx, newPark("nowhere", "p5", at(1)), nil); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("SavePark in no conversation = %v", err)
	}

	ev := func(id, typ, conv string, ask store.ParkKind, kind, tool string, deadline time.Time, status string, when time.Time) *store.OutboxEvent {
		return &store.OutboxEvent{ID: "msg_" + id + "_" + typ, Consumer: "a", Type: "ask." + typ, AskID: id, ConversationID: conv,
			Ask: ask, Kind: kind, Tool: tool, Deadline: deadline, Status: status, At: when}
	}
	parked := []*store.OutboxEvent{
		ev("p1", "parked", "c1", store.ParkInteraction, "choices", "", at(600), "", at(-3600)),
		ev("p2", "parked", "c1", store.ParkInteraction, "choices", "", time.Time{}, "", at(-1800)),
		ev("p3", "parked", "c2", store.ParkConfirmation, "", "deploy", at(900), "", at(-3600)),
		ev("p4", "parked", "c3", store.ParkInteraction, "choices", "", at(700), "", at(-3600)),
	}
	resolved := []*store.OutboxEvent{
		ev("p1", "resolved", "c1", store.ParkInteraction, "choices", "", at(600), "replaced", at(-1800)),
		ev("p2", "resolved", "c1", store.ParkInteraction, "choices", "", time.Time{}, "submitted", time.Time{}),
		ev("p3", "resolved", "c2", store.ParkConfirmation, "", "deploy", at(900), "withdrawn", time.Time{}),
		ev("p4", "resolved", "c3", store.ParkInteraction, "choices", "", at(700), "expired", time.Time{}),
	}
	// An ask's ask.resolved waits while its ask.parked is leased.
	first := drain(t, o, "a", at(0))
	if d := cmp.Diff(parked, first, opts); d != "" {
		t.Errorf("the first events leased (-want +got):\n%s", d)
	}
	done(t, o, first)
	second := drain(t, o, "a", at(0))
	for _, e := range second {
		if e.AskID == "p1" {
			continue
		}
		if e.At.Before(start.Add(-time.Second)) || e.At.After(time.Now().Add(time.Second)) {
			t.Errorf("%s at %s, want the time it ended (%s on)", e.ID, e.At, start)
		}
		e.At = time.Time{}
	}
	if d := cmp.Diff(resolved, second, opts); d != "" {
		t.Errorf("the events leased once the first were done (-want +got):\n%s", d)
	}
	done(t, o, second)
	if got := drain(t, o, "a", at(0)); len(got) != 0 {
		t.Errorf("events left once all were done: %v", got)
	}
	// b has its own, untouched.
	b := drain(t, o, "b", at(0))
	if len(b) != 4 || b[0].ID != "msg_p1_parked" || b[0].Consumer != "b" {
		t.Errorf("b's events: %+v", b)
	}
}

// testOutboxLease: a leased event is not leased again until its lease
// runs out; a failed attempt is counted and the event is due again at its
// retry time; only the lease's holder reschedules it; a closed consumer
// gets nothing more.
func testOutboxLease(t *testing.T, s store.Store) {
	ctx := context.Background()
	o := outboxOf(t, s)
	o.OpenOutbox("a", "b")
	newConv(t, s, "c1")
	savePark(t, s, newPark("c1", "p1", at(600)))
	lease := func(owner string, now, until time.Time) *store.OutboxEvent {
		t.Helper()
		e, err := o.LeaseEvent(ctx, "a", owner, now, until)
		must(t, err)
		return e
	}
	if e := lease("A", at(0), at(10)); e == nil || e.Attempts != 0 {
		t.Fatalf("first lease = %+v", e)
	}
	if e := lease("B", at(5), at(15)); e != nil {
		t.Errorf("lease while A holds it = %+v, want none", e)
	}
	if err := o.RetryEvent(ctx, "a", "msg_p1_parked", "B", at(20)); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("RetryEvent by B = %v, want ErrLeaseLost", err)
	}
	must(t, o.RetryEvent(ctx, "a", "msg_p1_parked", "A", at(20)))
	if e := lease("B", at(15), at(25)); e != nil {
		t.Errorf("lease before the retry time = %+v, want none", e)
	}
	if e := lease("B", at(20), at(30)); e == nil || e.Attempts != 1 {
		t.Errorf("lease at the retry time = %+v, want the event, 1 attempt", e)
	}
	// B's lease runs out: A takes it, and B may not reschedule it.
	if e := lease("A", at(31), at(40)); e == nil {
		t.Error("lease after B's ran out = none")
	}
	if err := o.RetryEvent(ctx, "a", "msg_p1_parked", "B", at(50)); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("RetryEvent by B after its lease ran out = %v, want ErrLeaseLost", err)
	}

	must(t, o.CloseOutbox(ctx, "a"))
	if o.OutboxOpen("a") || !o.OutboxOpen("b") {
		t.Errorf("after CloseOutbox(a): open a %v, b %v; want false, true", o.OutboxOpen("a"), o.OutboxOpen("b"))
	}
	savePark(t, s, newPark("c1", "p2", at(600)))
	if got := drain(t, o, "a", at(100)); len(got) != 0 {
		t.Errorf("a's events after CloseOutbox: %v", got)
	}
	if got := drain(t, o, "b", at(100)); len(got) != 2 {
		t.Errorf("b's events: %d, want p1's ask.parked and p2's (p1's ask.resolved waits)", len(got))
	}
}

// testOutboxConcurrentLeases: workers leasing at once each get a
// different event: none is leased twice.
func testOutboxConcurrentLeases(t *testing.T, s store.Store) {
	ctx := context.Background()
	o := outboxOf(t, s)
	o.OpenOutbox("a")
	const asks = 40
	for i := range asks {
		conv := fmt.Sprintf("c%d", i)
		newConv(t, s, conv)
		savePark(t, s, newPark(conv, "p"+conv, at(600)))
	}
	var (
		mu   sync.Mutex
		seen = map[string]int{}
		wg   sync.WaitGroup
	)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				e, err := o.LeaseEvent(ctx, "a", fmt.Sprint("w", w), at(0), at(60))
				if err != nil {
					t.Error(err)
					return
				}
				if e == nil {
					return
				}
				mu.Lock()
				seen[e.ID]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != asks {
		t.Errorf("%d events leased, want %d", len(seen), asks)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s leased %d times", id, n)
		}
	}
}
