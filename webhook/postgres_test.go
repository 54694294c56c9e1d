package webhook

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/storetest"
)

// Two senders, each with its own store (its own connections) on one
// PostgreSQL database, as two processes have, deliver every event exactly
// once, each ask's parked before its resolved, while parks are written
// through both.
func TestTwoProcessesOnePostgres(t *testing.T) {
	dsn := storetest.PostgresDB(t)
	r := newReceiver(t, func(n int, w http.ResponseWriter) {
		time.Sleep(5 * time.Millisecond) // a receiver that takes its time, so both senders have work
	})
	const asks = 30
	type process struct {
		st      store.Store
		sender  *Sender
		metrics *countMetrics
	}
	var procs []process
	for range 2 {
		m := &countMetrics{}
		s, err := New(Config{Endpoints: []Endpoint{{URL: r.URL, Keys: testKeys(t)}}, PollInterval: 5 * time.Millisecond, Metrics: m})
		if err != nil {
			t.Fatal(err)
		}
		st := openStore(t, dsn)
		e := newEngine(t, st, clockwork.NewRealClock(), s.Consumers(), 1)
		if err := s.Start(e); err != nil {
			t.Fatal(err)
		}
		defer s.Stop()
		procs = append(procs, process{st, s, m})
	}
	ctx := context.Background()
	for i := range asks {
		st := procs[i%2].st
		conv := fmt.Sprintf("c%d", i)
		if err := st.CreateConversation(ctx, &store.Conversation{ID: conv, CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		p := &store.Park{ID: fmt.Sprintf("p%d", i), Type: store.ParkInteraction, ConversationID: conv, Kind: "choices",
			ToolCall: store.ToolCall{ID: "call", Name: "request_choices"}, Deadline: time.Now().Add(time.Hour), CreatedAt: time.Now(), Turn: []byte(`{}`)}
		if _, err := st.SavePark(ctx, p, nil); err != nil {
			t.Fatal(err)
		}
		// The other process ends it.
		if _, ok, err := procs[(i+1)%2].st.TakePark(ctx, p.ID, store.Answer{State: store.ParkExpired}); err != nil || !ok {
			t.Fatalf("TakePark = %v, %v", ok, err)
		}
	}
	// Each event is delivered, and recorded so, by one of them.
	deadline := time.Now().Add(30 * time.Second)
	for procs[0].metrics.counts()[ResultDelivered]+procs[1].metrics.counts()[ResultDelivered] < 2*asks {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests, %v and %v", len(r.requests()), procs[0].metrics.counts(), procs[1].metrics.counts())
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, p := range procs {
		p.sender.Stop()
	}
	t.Logf("delivered by the first process: %d, by the second: %d", procs[0].metrics.counts()[ResultDelivered], procs[1].metrics.counts()[ResultDelivered])
	seen := map[string]int{}
	parked := map[string]bool{}
	for _, q := range r.requests() {
		verify(t, q)
		seen[q.header.Get("webhook-id")]++
		b := decode(t, q)
		switch b.Type {
		case store.EventAskParked:
			parked[b.Data.InteractionID] = true
		case store.EventAskResolved:
			if !parked[b.Data.InteractionID] {
				t.Errorf("%s: resolved before parked", b.Data.InteractionID)
			}
		}
	}
	if len(seen) != 2*asks {
		t.Errorf("%d events delivered, want %d", len(seen), 2*asks)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s delivered %d times", id, n)
		}
	}
	for _, p := range procs {
		if ev, err := store.OutboxOf(p.st).LeaseEvent(ctx, p.sender.Consumers()[0], "check", time.Now().Add(time.Hour), time.Now().Add(2*time.Hour)); err != nil || ev != nil {
			t.Errorf("an event left in the outbox: %+v, %v", ev, err)
		}
	}
}
