package server_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kindkit/kindkit/internal/demo"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
	"github.com/kindkit/kindkit/store/sqlstore"
	"github.com/kindkit/kindkit/store/storetest"
)

// TestWritesPerCycle: one card cycle of the demo model (create a session,
// send a message, the card, submit, the reply) is five store writes, each
// one commit: the session comes with its conversation, and the model step
// that raised the card with the park; and no read. The history is whole
// all the same.
func TestWritesPerCycle(t *testing.T) {
	for name, open := range map[string]func(t *testing.T) store.Store{
		"memory": func(t *testing.T) store.Store { return memstore.New() },
		"sqlite": func(t *testing.T) store.Store {
			s, err := sqlstore.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "k.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
	} {
		t.Run(name, func(t *testing.T) {
			st := &storetest.Writes{Store: open(t)}
			reads := &storetest.Reads{Store: st}
			_, url := startServer(t, servertest.Config{Model: demo.Model{}, Store: reads})
			c := dial(t, url)
			c.Send(`{"action":"create_conversation_session","requestId":"r1","agentId":"a","supports":["choice_chips"]}`)
			data := path(c.Expect("immediate_response")[0], "data").(map[string]any)
			sid, conv := data["sessionId"].(string), data["conversationId"].(string)
			c.Send(`{"action":"send_message","requestId":"r2","sessionId":"` + sid + `","message":"hi"}`)
			evs := c.Expect("immediate_response", "interaction_required", "stream_chunk")
			iid := path(evs[1], "data", "data", "interactionId").(string)
			c.Send(`{"action":"submit_interaction","requestId":"r3","sessionId":"` + sid + `","interactionId":"` + iid + `","values":{"answers":[{"header":"Plan","options":["Team"]},{"header":"Topics","options":["Pricing"]}]}}`)
			c.Expect("immediate_response", "stream_chunk")
			if _, end := c.Turn(); end["type"] != "eventual_response" {
				t.Fatalf("turn ended with %v", end)
			}
			want := []string{"CreateConversation", "StartTurn", "SavePark", "TakePark", "SaveStep"}
			if got := st.Take(); !slices.Equal(got, want) {
				t.Errorf("writes of one cycle = %v, want %v", got, want)
			}
			// The first message to a conversation the connection made
			// finds it untouched as it is stored: no park to look for, and
			// the turn has its conversation and history. The submit and
			// the resume need nothing the parked turn does not hold.
			if got := reads.Take(); len(got) > 0 {
				t.Errorf("reads of one cycle = %v, want none", got)
			}
			wantRoles(t, st, conv, store.RoleUser, store.RoleAssistant, store.RoleTool, store.RoleAssistant, store.RoleReply)
			if s, err := st.Session(context.Background(), sid); err != nil || s.ConversationID != conv {
				t.Errorf("Session(%s) = %+v, %v; want one of %s", sid, s, err, conv)
			}
		})
	}
}

// TestWritesFallbackTurn: on the conversational path the model step that
// raised the kind goes in one write with the directive it got back.
func TestWritesFallbackTurn(t *testing.T) {
	st := &storetest.Writes{Store: memstore.New()}
	_, url := startServer(t, servertest.Config{Model: demo.Model{}, Store: st})
	c := dial(t, url)
	c.Send(`{"action":"create_conversation_session","requestId":"r1","agentId":"a"}`)
	data := path(c.Expect("immediate_response")[0], "data").(map[string]any)
	sid, conv := data["sessionId"].(string), data["conversationId"].(string)
	st.Take()
	c.Send(`{"action":"send_message","requestId":"r2","sessionId":"` + sid + `","message":"hi"}`)
	c.Expect("immediate_response")
	if _, end := c.Turn(); end["type"] != "eventual_response" {
		t.Fatalf("turn ended with %v", end)
	}
	// The user's message, the first of the conversation; the raise with
	// its directive; the model's words with the reply.
	want := []string{"StartTurn", "SaveStep", "SaveStep"}
	if got := st.Take(); !slices.Equal(got, want) {
		t.Errorf("writes of a fallback turn = %v, want %v", got, want)
	}
	wantRoles(t, st, conv, store.RoleUser, store.RoleAssistant, store.RoleTool, store.RoleAssistant, store.RoleReply)
}

// wantRoles checks the roles of conversation conv's history, oldest first.
func wantRoles(t *testing.T, st store.Store, conv string, want ...store.Role) {
	t.Helper()
	msgs, _, err := st.Messages(context.Background(), conv, nil, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []store.Role
	for _, m := range slices.Backward(msgs) {
		got = append(got, m.Role)
	}
	if !slices.Equal(got, want) {
		t.Errorf("history = %v, want %v", got, want)
	}
}
