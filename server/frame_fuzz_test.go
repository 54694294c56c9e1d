package server

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/runtime/memstore"
)

// FuzzFrames hands arbitrary frames to the decoder and the action handlers
// of a connection: every frame gets well-formed JSON events back, and
// nothing panics.
func FuzzFrames(f *testing.F) {
	for _, seed := range []string{
		`{"action":"ping","requestId":"p"}`,
		`{"action":"create_conversation_session","requestId":"r","agentId":"a","supports":["choice_chips"]}`,
		`{"action":"create_conversation_session","requestId":"r","agentId":"a","supports":null,"conversationId":"x"}`,
		`{"action":"send_message","requestId":"r","sessionId":"s","message":"hi"}`,
		`{"action":"submit_interaction","requestId":"r","sessionId":"s","interactionId":"i","kind":"choices","values":null}`,
		`{"action":"submit_interaction","requestId":"r","sessionId":"s","declined":true}`,
		`{"action":"get_conversation_messages","sessionId":"s","limit":-4,"cursor":"c"}`,
		`{"action":"confirm_tool_action","sessionId":"s","approved":false}`,
		`{"action":"cancel"}`,
		`{"action":5}`, `[]`, `null`, `{"supports":[1]}`, "\xff",
	} {
		f.Add([]byte(seed))
	}
	catalog, err := kinds.All()
	if err != nil {
		f.Fatal(err)
	}
	script, _ := NewScripted([]ScriptEntry{{Kind: "toolCall", Name: "request_choices", Arguments: `{"questions":[{"question":"Q","header":"H","options":["a","b"]}]}`}, {Kind: "text", Text: "ok"}})
	srv, err := New(Config{Catalog: catalog, Store: memstore.New(), Model: script})
	if err != nil {
		f.Fatal(err)
	}
	defer srv.Close()
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &conn{srv: srv, wake: make(chan struct{}, 1)}
		c.dispatch(context.Background(), data)
		c.mu.Lock()
		if t := c.active; t != nil {
			c.active = nil
			t.cancel()
		}
		queue := c.queue
		c.mu.Unlock()
		srv.turns.Wait()
		for _, frame := range queue {
			var ev map[string]any
			if err := json.Unmarshal(frame, &ev); err != nil || ev["type"] == nil || ev["timestamp"] == nil {
				t.Fatalf("bad event %s for frame %q", frame, data)
			}
		}
	})
}
