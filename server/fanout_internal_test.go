package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
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
		`{"o":"x","c":"c1","p":"p1"}`, `{"o":"x","c":"-","q":"probe"}`, `{}`, `null`, `[]`, `{"c":5}`, `{"o":"x","c":"c1","f":[1,2]}`,
	} {
		f.Add([]byte(s))
	}
	catalog, err := kindkit.NewCatalog()
	if err != nil {
		f.Fatal(err)
	}
	srv, err := New(Config{Catalog: catalog, Store: memstore.New(), Model: agent.Demo{}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(srv.Close)
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
	catalog, err := kindkit.NewCatalog()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Catalog: catalog, Store: memstore.New(), Model: agent.Demo{}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	h := srv.hub
	for _, shown := range []bool{true, false} {
		c, conv := &conn{srv: srv, wake: make(chan struct{}, 1)}, fmt.Sprint("c-", shown)
		h.receive([]byte(`{"o":"elsewhere","c":"` + conv + `","k":1,"r":"T","f":{"type":"stream_chunk","requestId":"T"}}`))
		h.watch(c, conv)
		var park *store.Park
		if shown {
			park = &store.Park{ID: "p1", Turn: store.TurnState{RequestID: "T"}}
		}
		h.open(c, conv, park)
		c.mu.Lock()
		n := len(c.queue)
		c.mu.Unlock()
		if want := map[bool]int{true: 0, false: 1}[shown]; n != want {
			t.Errorf("card shown %v: %d frames of the catch-up sent, want %d", shown, n, want)
		}
		h.unwatch(c, conv)
	}
}
