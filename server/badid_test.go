package server_test

import (
	"strings"
	"testing"

	"github.com/kindkit/kindkit/internal/servertest"
)

// An id that cannot be one (a NUL, a lone surrogate, 10 KB, plain text)
// is answered as an unknown id, before any store sees it, so every store
// gives the same answer: PostgreSQL cannot even compare a NUL, and
// answered INTERNAL_ERROR where SQLite and memory said SESSION_NOT_FOUND.
func TestBadIDs(t *testing.T) {
	bad := []string{`\u0000`, `a\u0000b`, `\ud800`, "not-an-id", strings.Repeat("f", 10_000),
		"00000000-0000-0000-0000-00000000000\\u0000", "{" + strings.Repeat("0", 36) + "}"}
	for _, st := range scenarioStores(t) {
		t.Run(st.name, func(t *testing.T) {
			_, url := startServer(t, servertest.Config{Store: st.open(t), Model: parkingScript(t), FrameRate: -1, ClientFrameRate: -1, ConversationRate: -1})
			c := dial(t, url)
			sid := create(c, "")
			c.Send(`{"action":"create_conversation_session","requestId":"r","agentId":"a"}`)
			conv := path(c.Expect("immediate_response")[0], "data", "conversationId").(string)
			for _, id := range bad {
				for _, tc := range []struct{ frame, code string }{
					{`{"action":"get_session","requestId":"x","sessionId":"` + id + `"}`, "SESSION_NOT_FOUND"},
					{`{"action":"send_message","requestId":"x","sessionId":"` + id + `","message":"hi"}`, "SESSION_NOT_FOUND"},
					{`{"action":"get_conversation_messages","requestId":"x","sessionId":"` + id + `"}`, "SESSION_NOT_FOUND"},
					{`{"action":"get_conversation_messages","requestId":"x","sessionId":"` + sid + `","cursor":"` + id + `"}`, "VALIDATION_ERROR"},
					{`{"action":"submit_interaction","requestId":"x","sessionId":"` + id + `","interactionId":"i","values":{}}`, "NO_PENDING_INTERACTION"},
					{`{"action":"confirm_tool_action","requestId":"x","sessionId":"` + id + `","approved":true}`, "NO_PENDING_CONFIRMATION"},
					{`{"action":"verify_otp","requestId":"x","sessionId":"` + id + `","code":"123456"}`, "SESSION_NOT_FOUND"},
				} {
					c.Send(tc.frame)
					if ev := c.Next(); ev["type"] != "error" || errorCode(ev) != tc.code || ev["requestId"] != "x" {
						t.Errorf("%.120s: got %v, want %s", tc.frame, ev, tc.code)
					}
				}
				// A resume of a conversation that cannot exist starts a
				// fresh one, as for an unknown id.
				c.Send(`{"action":"create_conversation_session","requestId":"r","agentId":"a","conversationId":"` + id + `"}`)
				ev := c.Next()
				if got := path(ev, "data", "conversationId"); ev["type"] != "immediate_response" || got == nil || got == conv {
					t.Errorf("resume of %.40q: %v, want a fresh conversation", id, ev)
				}
			}
		})
	}
}
