package server

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
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
