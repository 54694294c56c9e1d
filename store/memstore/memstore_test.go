package memstore_test

import (
	"context"
	"errors"
	"runtime"
	"runtime/metrics"
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
	"github.com/kindkit/kindkit/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return memstore.New() })
}

func BenchmarkCycle(b *testing.B) { storetest.Bench(b, memstore.New()) }

func BenchmarkOps(b *testing.B) {
	storetest.BenchOps(b, func(b *testing.B) store.Store { return memstore.New() })
}

// A store with retention forgets a finished conversation and its sessions,
// and keeps one with a pending park.
func TestRetention(t *testing.T) {
	s := memstore.NewWithRetention(20 * time.Millisecond)
	defer s.Close()
	ctx := context.Background()
	for _, id := range []string{"done", "parked"} {
		if err := s.CreateConversation(ctx, &store.Conversation{ID: id}); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateSession(ctx, &store.Session{ID: "s-" + id, ConversationID: id}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.SavePark(ctx, &store.Park{ID: "p", ConversationID: "parked", State: store.ParkPending, Deadline: time.Now().Add(time.Hour)}, nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := s.Conversation(ctx, "done")
		if errors.Is(err, store.ErrNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the finished conversation was never forgotten")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := s.Session(ctx, "s-done"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("its session is still there: %v", err)
	}
	if _, err := s.PendingPark(ctx, "parked"); err != nil {
		t.Errorf("the parked conversation was forgotten: %v", err)
	}
	if _, err := s.Session(ctx, "s-parked"); err != nil {
		t.Errorf("the parked conversation's session was forgotten: %v", err)
	}
}

// TestRetainedScan measures what the garbage collector must scan of a
// finished conversation the store keeps: the growth of the scannable heap
// (runtime/metrics' /gc/scan/heap:bytes, as of the last collection) per
// storetest.Cycle kept. Kept as structs, a conversation was 1,403
// scannable bytes, and marking them was most of a collection's work under
// load; codec.go keeps it in byte slices, which are not scanned (411
// bytes: the conversation's struct and map entries).
func TestRetainedScan(t *testing.T) {
	const most = 512
	const n = 2000
	s := memstore.New()
	before := scannable()
	for i := range n {
		if err := storetest.Cycle(context.Background(), s, "c"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	per := float64(scannable()-before) / n
	runtime.KeepAlive(s)
	t.Logf("%.0f scannable bytes per kept conversation", per)
	if per > most {
		t.Errorf("a kept conversation is %.0f scannable bytes, more than %d: is the store keeping structs of strings again?", per, most)
	}
}

func scannable() int64 {
	runtime.GC()
	m := []metrics.Sample{{Name: "/gc/scan/heap:bytes"}}
	metrics.Read(m)
	return int64(m[0].Value.Uint64())
}
