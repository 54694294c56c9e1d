package server

import (
	"encoding/json"
	"log/slog"
	"slices"
	"testing"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/demo"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
)

// A socket that joins while another process's notes are still on their
// way may begin its watch after the note of a call but before the note of
// the card it raised (TestBooking caught it once in CI). When its join
// shows it that card, the catch-up of the run that parked is left out:
// the card is what is left of that run.
func TestCatchUpOfAParkedRun(t *testing.T) {
	srv := quietServer(t)
	call := agent.Event{Kind: agent.EventToolCall, RequestID: "T", Call: store.ToolCall{ID: "c1", Name: "lookup", Arguments: "{}"}}
	for _, shown := range []bool{true, false} {
		c := &conn{srv: srv, wake: make(chan struct{}, 1)}
		w := &watch{c: c}
		w.hear(call) // the catch-up, or a note on its way
		var prompts []*store.Park
		if shown {
			prompts = []*store.Park{{ID: "p1"}}
		}
		w.openWith("T", prompts)
		w.hear(agent.Event{Kind: agent.EventToolResult, RequestID: "T", Call: call.Call, Text: "{}", After: "p1"}) // news: after the card
		if want := map[bool][]string{true: {"stream_chunk"}, false: {"stream_chunk", "stream_chunk"}}[shown]; !slices.Equal(sent(t, c), want) {
			t.Errorf("card shown %v: sent %v, want %v", shown, sent(t, c), want)
		}
	}
}

// sent is the types of the frames queued on c.
func sent(t *testing.T, c *conn) []string {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, data := range queued(c) {
		var ev struct{ Type string }
		if err := json.Unmarshal(data, &ev); err != nil {
			t.Fatalf("frame %s: %v", data, err)
		}
		out = append(out, ev.Type)
	}
	return out
}

// queued is the frames queued on c, under c.mu.
func queued(c *conn) [][]byte {
	if c.queue == nil {
		return nil
	}
	return c.queue.split()
}

// quietServer is a server with no kinds on a memory store that logs
// nothing, closed when the test ends.
func quietServer(t testing.TB) *Server {
	t.Helper()
	catalog, err := kindkit.NewCatalog()
	if err != nil {
		t.Fatal(err)
	}
	eng, err := agent.NewEngine(agent.Config{Catalog: catalog, Store: memstore.New(), Model: demo.Model{}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	return New(eng, Options{})
}
