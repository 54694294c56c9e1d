package kindserver

import (
	"context"
	"testing"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/internal/wstest"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
)

const intake = `{"fields":[{"key":"name","required":true},{"key":"email","required":true},{"key":"phone","required":false}],"reason":"to send the quote"}`

// TestContactHook: an accepted identity intake stamps its contact on the
// session, whether it came as the form or in conversation through
// submit_interaction; the store shows it.
func TestContactHook(t *testing.T) {
	for _, card := range []bool{true, false} {
		name := map[bool]string{true: "card", false: "conversation"}[card]
		t.Run(name, func(t *testing.T) {
			st := memstore.New()
			script := []agent.ScriptEntry{{Kind: "toolCall", Name: "request_identity_intake", Arguments: intake}}
			if !card {
				script = append(script, agent.ScriptEntry{Kind: "toolCall", Name: "submit_interaction",
					Arguments: `{"kind":"identity_intake","values":{"name":"Ada","email":"ada@EXAMPLE.com","phone":"+1 555 123 4567"}}`, ID: "call-2"})
			}
			script = append(script, agent.ScriptEntry{Kind: "text", Text: "Thanks."})
			model, err := agent.NewScripted(script)
			if err != nil {
				t.Fatal(err)
			}
			srv := servertest.Start(t, servertest.Config{Store: st, Model: model, Hooks: hooks(st)}, nil)
			c := wstest.Dial(t, srv.WS())
			supports := `[]`
			if card {
				supports = `["identity_form"]`
			}
			c.Send(`{"action":"create_conversation_session","requestId":"r","agentId":"a","supports":` + supports + `}`)
			sid := wstest.Path(c.Expect("immediate_response")[0], "data", "sessionId").(string)
			c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"quote please"}`)
			c.Expect("immediate_response")
			if card {
				evs := c.Expect("interaction_required", "stream_chunk")
				iid := wstest.Path(evs[0], "data", "data", "interactionId").(string)
				c.Send(`{"action":"submit_interaction","requestId":"S","sessionId":"` + sid + `","interactionId":"` + iid + `","values":{"name":"Ada","email":"ada@EXAMPLE.com","phone":"+1 555 123 4567"}}`)
				c.Expect("immediate_response")
			}
			if _, end := c.Turn(); end["type"] != "eventual_response" {
				t.Fatalf("turn ended with %v", end)
			}
			sess, err := st.Session(context.Background(), sid)
			if err != nil {
				t.Fatal(err)
			}
			want := store.Session{UserName: "Ada", ContactEmail: "ada@example.com", ContactPhone: "+15551234567"}
			if sess.UserName != want.UserName || sess.ContactEmail != want.ContactEmail || sess.ContactPhone != want.ContactPhone {
				t.Errorf("session contact = %q %q %q, want %q %q %q", sess.UserName, sess.ContactEmail, sess.ContactPhone,
					want.UserName, want.ContactEmail, want.ContactPhone)
			}
		})
	}
}
