package server

import (
	"bytes"
	"encoding/json"
	"testing"
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
