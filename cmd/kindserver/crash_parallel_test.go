package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kindkit/kindkit/internal/wstest"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/sqlstore"
)

// TestCrashParallelAsks is the crash matrix's cell for cards opened
// together (kindkit.parallel_asks): a step opens two cards; the second is
// answered, and kindserver is killed with -9 right after that answer's
// ack, before the first is answered. After a restart on the same store the
// acked answer is kept, the first card (and only it) is shown again, and
// its answer finishes the turn once, with both answers.
func TestCrashParallelAsks(t *testing.T) {
	for name, newStore := range stores(t) {
		t.Run(name, func(t *testing.T) {
			dsn := limitPool(newStore(t))
			scriptFile := filepath.Join(t.TempDir(), "parallel-script.json")
			script := `[
 {"kind":"toolCall","id":"call-a","name":"request_choices","arguments":"{\"questions\":[{\"question\":\"Which plan?\",\"header\":\"Plan\",\"options\":[\"Basic\",\"Pro\"]}],\"reason\":\"to quote\"}",
  "calls":[{"id":"call-b","name":"request_choices","arguments":"{\"questions\":[{\"question\":\"Which term?\",\"header\":\"Term\",\"options\":[\"Monthly\",\"Yearly\"]}],\"reason\":\"to quote\"}"}]},
 {"kind":"text","text":"Both noted."}
]`
			if err := os.WriteFile(scriptFile, []byte(script), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"-script", scriptFile, "-lease-timeout", leaseTimeout.String(), "-client-frame-rate", "-1", "-conversation-rate", "-1"}
			p := start(t, dsn, args...)
			db, err := sqlstore.Open(context.Background(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })

			const supports = `["choice_chips","kindkit.parallel_asks"]`
			c := wstest.Dial(t, p.url)
			c.Send(`{"action":"create_conversation_session","requestId":"r-create","agentId":"a","supports":` + supports + `}`)
			ack := c.Expect("immediate_response")[0]
			conv := wstest.Path(ack, "data", "conversationId").(string)
			sid := wstest.Path(ack, "data", "sessionId").(string)
			c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"quote"}`)
			evs := c.Expect("immediate_response", "interaction_required", "stream_chunk", "interaction_required", "stream_chunk")
			a := wstest.Path(evs[1], "data", "data", "interactionId").(string)
			b := wstest.Path(evs[3], "data", "data", "interactionId").(string)
			c.Send(choiceFrame(sid, b, "S-b", "Term", "Yearly"))
			if ack := c.Expect("immediate_response")[0]; ack["status"] != float64(200) {
				t.Fatalf("the second card's answer: %v", ack)
			}
			p.kill9(t)
			p = start(t, dsn, args...)

			h := stored(mustMessages(t, db, conv))
			if !h.answeredCall("call-b") || h.answeredCall("call-a") || h.count(store.RoleReply) != 0 {
				t.Fatalf("after the restart: call-b answered %v, call-a answered %v, replies %d; want the acked answer alone",
					h.answeredCall("call-b"), h.answeredCall("call-a"), h.count(store.RoleReply))
			}
			r := wstest.Dial(t, p.url)
			r.Send(`{"action":"create_conversation_session","requestId":"r-resume","agentId":"a","conversationId":"` + conv + `","supports":` + supports + `}`)
			rsid := wstest.Path(r.Expect("immediate_response")[0], "data", "sessionId").(string)
			r.Send(`{"action":"get_conversation_messages","requestId":"h","sessionId":"` + rsid + `"}`)
			var shown []any
			for ev := r.Next(); ev["requestId"] != "h"; ev = r.Next() {
				if ev["type"] == "interaction_required" {
					shown = append(shown, wstest.Path(ev, "data", "data", "interactionId"))
				}
			}
			if len(shown) != 1 || shown[0] != a {
				t.Fatalf("cards shown again = %v, want the first, %s, alone", shown, a)
			}
			r.Send(choiceFrame(rsid, a, "S-a", "Plan", "Pro"))
			if ack := r.Expect("immediate_response")[0]; ack["status"] != float64(200) {
				t.Fatalf("the first card's answer: %v", ack)
			}
			if text, end := r.Turn(); end["type"] != "eventual_response" || text != "Both noted." {
				t.Fatalf("after both answers: %q, %v", text, end)
			}
			deadline := time.Now().Add(settleTimeout)
			for time.Now().Before(deadline) && stored(mustMessages(t, db, conv)).count(store.RoleReply) == 0 {
				time.Sleep(50 * time.Millisecond)
			}
			time.Sleep(200 * time.Millisecond) // room for a second reply, were there one
			h = stored(mustMessages(t, db, conv))
			if h.count(store.RoleReply) != 1 || h.count(store.RoleTool) != 2 || h.duplicates() != 1 {
				// duplicates: the two tool results are one role; nothing else twice.
				t.Errorf("history: %d replies, %d tool results, %d duplicated steps; want 1, 2 and the two answers' 1", h.count(store.RoleReply), h.count(store.RoleTool), h.duplicates())
			}
		})
	}
}

func choiceFrame(session, interaction, requestID, header, option string) string {
	return `{"action":"submit_interaction","requestId":"` + requestID + `","sessionId":"` + session + `","interactionId":"` + interaction +
		`","kind":"choices","values":{"answers":[{"header":"` + header + `","options":["` + option + `"]}]}}`
}

func mustMessages(t *testing.T, db *sqlstore.Store, conv string) []*store.Message {
	t.Helper()
	msgs, _, err := db.Messages(context.Background(), conv, nil, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// answeredCall tells whether the result of call id is stored.
func (h stored) answeredCall(id string) bool {
	for _, m := range h {
		if m.Role == store.RoleTool && m.ToolCallID == id {
			return true
		}
	}
	return false
}
