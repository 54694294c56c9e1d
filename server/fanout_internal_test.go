package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/demo"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
)

// The hub knows its own notes by their first bytes, so a note's Origin
// must stay its first field.
func TestNoteStartsWithOrigin(t *testing.T) {
	h := newHub(nil, nil)
	data, err := json.Marshal(note{Origin: h.origin, Conversation: "c", Token: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, h.self) {
		t.Errorf("note %s does not start with %s", data, h.self)
	}
}

// FuzzNotes: whatever another process (or anything that can NOTIFY on the
// database) sends, the hub's receiver takes it without a panic.
func FuzzNotes(f *testing.F) {
	for _, s := range []string{
		`{"o":"x","c":"c1","k":0,"r":"T","t":"hi"}`,
		`{"o":"x","c":"c1","k":4,"r":"T","f":{"type":"eventual_response"}}`,
		`{"o":"x","c":"c1","k":3,"r":"T","a":"p1","f":{"type":"interaction_required"},"x":{"type":"stream_chunk"}}`,
		`{"o":"x","c":"c1","p":"p1"}`, `{"o":"x","c":"c1","d":true}`, `{"o":"x","c":"c1","k":4,"r":"T"}`, `{"o":"x","c":"c1","k":1}`, `{"o":"x","c":"-","q":"probe"}`, `{}`, `null`, `[]`, `{"c":5}`, `{"o":"x","c":"c1","f":[1,2]}`,
	} {
		f.Add([]byte(s))
	}
	srv := quietServer(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		srv.hub.receive(data)
	})
}

// A socket that joins while another process's notes are still on their
// way may begin its watch after the note of a call but before the note of
// the card it raised (TestBooking caught it once in CI). When its join
// shows it that card, the catch-up of the run that parked is left out:
// the card is what is left of that run.
func TestCatchUpOfAParkedRun(t *testing.T) {
	srv := quietServer(t)
	h := srv.hub
	for _, shown := range []bool{true, false} {
		c, conv := &conn{srv: srv, wake: make(chan struct{}, 1)}, fmt.Sprint("c-", shown)
		h.receive([]byte(`{"o":"elsewhere","c":"` + conv + `","k":1,"r":"T","f":{"data":{"node":"lookup","requestId":"T","state":{}},"node":"lookup","requestId":"T","timestamp":1,"type":"stream_chunk"}}`))
		h.watch(c, conv)
		var prompt *agent.Event
		if shown {
			prompt = &agent.Event{Kind: agent.EventPrompt, RequestID: "T", Park: &store.Park{ID: "p1"}}
		}
		h.open(c, conv, prompt)
		c.mu.Lock()
		n := len(c.queue)
		c.mu.Unlock()
		if want := map[bool]int{true: 0, false: 1}[shown]; n != want {
			t.Errorf("card shown %v: %d frames of the catch-up sent, want %d", shown, n, want)
		}
		h.unwatch(c, conv)
	}
}

// Without other processes the hub encodes a turn's events only for who
// hears them: a watcher here, or one that joins mid-turn and catches up.
func TestFramesForLateWatchers(t *testing.T) {
	srv := quietServer(t)
	h := srv.hub
	call := agent.Event{Kind: agent.EventToolCall, RequestID: "T", Call: store.ToolCall{ID: "c1", Name: "lookup", Arguments: `{"q":"x"}`}}
	sent := func(c *conn) []map[string]any {
		c.mu.Lock()
		defer c.mu.Unlock()
		var out []map[string]any
		for _, data := range c.queue {
			var ev map[string]any
			if err := json.Unmarshal(data, &ev); err != nil {
				t.Fatalf("frame %s: %v", data, err)
			}
			out = append(out, ev)
		}
		return out
	}
	watching := &conn{srv: srv, wake: make(chan struct{}, 1)}
	h.watch(watching, "c1")
	h.open(watching, "c1", nil)
	h.TurnEvent("c1", nil, call)
	h.TurnEvent("c1", nil, agent.Event{Kind: agent.EventText, RequestID: "T", Text: "Hi"})

	late := &conn{srv: srv, wake: make(chan struct{}, 1)}
	h.watch(late, "c1")
	h.open(late, "c1", nil)
	for name, c := range map[string]*conn{"watching": watching, "late": late} {
		evs := sent(c)
		if len(evs) != 2 || evs[0]["type"] != "stream_chunk" || evs[0]["requestId"] != "T" || evs[1]["type"] != "stream_token" {
			t.Errorf("%s: %v, want the call's chunk and the token", name, evs)
		}
	}
}

// quietServer is a server with no kinds on a memory store that logs
// nothing, closed when the test ends.
func quietServer(t testing.TB) *Server {
	t.Helper()
	catalog, err := kindkit.NewCatalog()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Catalog: catalog, Store: memstore.New(), Model: demo.Model{}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}
