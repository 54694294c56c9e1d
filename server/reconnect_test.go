package server_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/server"
)

func parkingScript(t *testing.T) agent.Model {
	t.Helper()
	m, err := agent.NewScripted([]agent.ScriptEntry{
		{Kind: "toolCall", Name: "request_choices", Arguments: raiseChoices},
		{Kind: "text", Text: "Pro it is."},
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// park creates a conversation with the capability and parks a turn on it.
func park(t *testing.T, url string) (c *client, conversationID, interactionID string) {
	t.Helper()
	c = dial(t, url)
	c.Send(`{"action":"create_conversation_session","requestId":"r-create","agentId":"a","supports":["choice_chips"]}`)
	ack := c.Expect("immediate_response")[0]
	sid := path(ack, "data", "sessionId").(string)
	conversationID = path(ack, "data", "conversationId").(string)
	c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"quote"}`)
	interactionID = path(c.Expect("immediate_response", "interaction_required", "stream_chunk")[1], "data", "data", "interactionId").(string)
	return c, conversationID, interactionID
}

func resumeConversation(c *client, conversationID, supports string) string {
	c.T.Helper()
	extra := ""
	if supports != "" {
		extra = `,"supports":` + supports
	}
	c.Send(`{"action":"create_conversation_session","requestId":"r-resume","agentId":"a","conversationId":"` + conversationID + `"` + extra + `}`)
	ack := c.Expect("immediate_response")[0]
	if path(ack, "data", "conversationId") != conversationID {
		c.T.Fatalf("resumed into another conversation: %v", ack)
	}
	return path(ack, "data", "sessionId").(string)
}

func submitPlan(c *client, sid, iid string) {
	c.Send(`{"action":"submit_interaction","requestId":"r-submit","sessionId":"` + sid + `","interactionId":"` + iid + `","kind":"choices","values":{"answers":[{"header":"Plan","options":["Pro"]}]}}`)
}

// expectResumed reads the rest of a resumed turn T and returns its text.
func expectResumed(c *client) (result, text string) {
	c.T.Helper()
	ev := c.Expect("stream_chunk")[0]
	if ev["requestId"] != "T" {
		c.T.Errorf("resumed stream has requestId %v, want the turn's", ev["requestId"])
	}
	result, _ = path(ev, "data", "state", "rawResponse", "toolResult", "result").(string)
	for ev = c.Next(); ev["type"] == "stream_token"; ev = c.Next() {
		text += ev["token"].(string)
	}
	if ev["type"] != "eventual_response" || ev["requestId"] != "T" {
		c.T.Fatalf("got %v, want the turn's eventual_response", ev)
	}
	return result, text
}

// The socket drops while a card is parked; a new socket resumes the
// conversation (inheriting supports), gets the same card, and its submit
// finishes the turn.
func TestReconnectKeepsPark(t *testing.T) {
	_, url := startServer(t, server.Config{Model: parkingScript(t)})
	first, convID, iid := park(t, url)
	first.WS.CloseNow()

	c := dial(t, url)
	sid := resumeConversation(c, convID, "")
	again := c.Expect("interaction_required")[0]
	if path(again, "data", "data", "interactionId") != iid || again["requestId"] != "T" {
		t.Fatalf("card after reconnect: %v, want interactionId %s and requestId T", again, iid)
	}
	c.Send(`{"action":"send_message","requestId":"T2","sessionId":"` + sid + `","message":"x"}`)
	if ev := c.Expect("error")[0]; errorCode(ev) != "TURN_IN_PROGRESS" {
		t.Errorf("send while the reattached card is parked: %v", ev)
	}
	submitPlan(c, sid, iid)
	c.Expect("immediate_response")
	result, text := expectResumed(c)
	if result != `{"status":"submitted","values":{"answers":[{"header":"Plan","options":["Pro"]}]}}` || text != "Pro it is." {
		t.Errorf("resumed with %s / %q", result, text)
	}
}

// A client without the capability that resumes the conversation gets the
// conversational fallback instead of the card.
func TestReconnectWithoutCapabilityGetsFallback(t *testing.T) {
	_, url := startServer(t, server.Config{Model: parkingScript(t)})
	first, convID, _ := park(t, url)
	first.WS.CloseNow()

	c := dial(t, url)
	resumeConversation(c, convID, `[]`)
	result, text := expectResumed(c)
	if !strings.Contains(result, `"mode":"conversational"`) || !strings.Contains(result, `"kind":"choices"`) || text != "Pro it is." {
		t.Errorf("fallback after reconnect: %s / %q", result, text)
	}
}

// Two sockets submit the same park at once: one ack, one
// NO_PENDING_INTERACTION, one resumed turn.
func TestRacingSubmits(t *testing.T) {
	for range 20 {
		_, url := startServer(t, server.Config{Model: parkingScript(t)})
		a, convID, iid := park(t, url)
		b := dial(t, url)
		sidB := resumeConversation(b, convID, "")
		b.Expect("interaction_required")
		var wg sync.WaitGroup
		acks := make([]map[string]any, 2)
		for _, c := range []*client{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				submitPlan(c, sidB, iid)
			}()
		}
		wg.Wait()
		acks[0], acks[1] = a.Next(), b.Next()
		won := 0
		for i, ack := range acks {
			switch {
			case ack["type"] == "immediate_response":
				won++
				expectResumed([]*client{a, b}[i])
			case errorCode(ack) == "NO_PENDING_INTERACTION":
			default:
				t.Fatalf("unexpected %v", ack)
			}
		}
		if won != 1 {
			t.Fatalf("%d submits won, want exactly 1", won)
		}
	}
}

// A newer raise in a conversation replaces its pending card: the older
// card is gone, and the connection its turn was parked on gets its slot
// back.
func TestNewerRaiseReplacesPark(t *testing.T) {
	// The script's position is kept per conversation: X raises (A), then
	// raises again (B), then answers (A); Y raises (B).
	model, err := agent.NewScripted([]agent.ScriptEntry{
		{Kind: "toolCall", Name: "request_choices", Arguments: raiseChoices},
		{Kind: "toolCall", Name: "request_choices", Arguments: raiseChoices},
		{Kind: "text", Text: "A again"},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, url := startServer(t, server.Config{Model: model})
	a, convX, oldCard := park(t, url)

	// B is busy with a card of its own when it joins X, so the card of X
	// stays A's; B then cancels and raises on X.
	b, _, _ := park(t, url)
	b.Send(`{"action":"create_conversation_session","requestId":"r-x","agentId":"a","conversationId":"` + convX + `"}`)
	sidX := path(b.Expect("immediate_response")[0], "data", "sessionId").(string)
	b.Send(`{"action":"cancel","requestId":"T"}`)
	b.Expect("cancelled")
	b.Send(`{"action":"send_message","requestId":"T2","sessionId":"` + sidX + `","message":"again"}`)
	newCard := path(b.Expect("immediate_response", "interaction_required", "stream_chunk")[1], "data", "data", "interactionId").(string)
	if newCard == oldCard {
		t.Fatal("the newer raise reused the older card's id")
	}

	submitPlan(b, sidX, oldCard)
	if ev := b.Expect("error")[0]; errorCode(ev) != "INTERACTION_MISMATCH" {
		t.Errorf("submit to the replaced card: %v", ev)
	}
	a.Send(`{"action":"get_session","requestId":"g","sessionId":"` + sidX + `"}`)
	a.Expect("immediate_response")
	a.Send(`{"action":"send_message","requestId":"T3","sessionId":"` + sidX + `","message":"hello"}`)
	if ev := a.Expect("immediate_response")[0]; ev["status"] != 202.0 {
		t.Fatalf("A's slot was not given back: %v", ev)
	}
	if text, ev := a.Turn(); text != "A again" || ev["type"] != "eventual_response" {
		t.Errorf("A's next turn: %q, %v", text, ev)
	}
}
