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

// Two sockets on one conversation submit the same park at once: one ack,
// one NO_PENDING_INTERACTION, one resumed turn, which both sockets see.
func TestRacingSubmits(t *testing.T) {
	for range 20 {
		_, url := startServer(t, server.Config{Model: parkingScript(t)})
		a, convID, iid := park(t, url)
		b := dial(t, url)
		sidB := resumeConversation(b, convID, "")
		b.Expect("interaction_required")
		var wg sync.WaitGroup
		for _, c := range []*client{a, b} {
			wg.Go(func() { submitPlan(c, sidB, iid) })
		}
		wg.Wait()
		won := 0
		for _, c := range []*client{a, b} {
			ack, _, streamed := c.AnswerAndEnd("r-submit")
			switch {
			case ack["type"] == "immediate_response" && !streamed:
				won++
			case errorCode(ack) == "NO_PENDING_INTERACTION":
			default:
				t.Fatalf("ack %v (resumed stream before it: %v)", ack, streamed)
			}
		}
		if won != 1 {
			t.Fatalf("%d submits won, want exactly 1", won)
		}
	}
}

// A newer raise in a conversation replaces its pending card: the older
// card is gone, and the connection its turn was parked on gets its slot
// back. Two tabs run turns at once on one conversation: B's starts while
// no card waits, then A's parks, then B's raises.
func TestNewerRaiseReplacesPark(t *testing.T) {
	g := &gateModel{started: make(chan struct{}, 1), release: make(chan struct{})}
	_, url := startServer(t, server.Config{Model: g})
	a := dial(t, url)
	a.Send(`{"action":"create_conversation_session","requestId":"r-create","agentId":"a","supports":["choice_chips"]}`)
	ack := a.Expect("immediate_response")[0]
	sidA, convX := path(ack, "data", "sessionId").(string), path(ack, "data", "conversationId").(string)
	b := dial(t, url)
	sidB := resumeConversation(b, convX, `["choice_chips"]`)

	b.Send(`{"action":"send_message","requestId":"TB","sessionId":"` + sidB + `","message":"first"}`)
	b.Expect("immediate_response")
	<-g.started // B's turn waits in the model
	a.Send(`{"action":"send_message","requestId":"TA","sessionId":"` + sidA + `","message":"second"}`)
	a.Expect("immediate_response")
	<-g.started
	g.release <- struct{}{} // the first to take it raises first
	old := a.Next()
	if old["type"] != "interaction_required" {
		t.Fatalf("first raise: %v", old)
	}
	first := old["requestId"]
	g.release <- struct{}{}
	var newCard map[string]any
	for newCard == nil {
		if ev := a.Next(); ev["type"] == "interaction_required" && ev["requestId"] != first {
			newCard = ev
		}
	}
	oldID, newID := path(old, "data", "data", "interactionId"), path(newCard, "data", "data", "interactionId")
	if oldID == newID {
		t.Fatal("the newer raise reused the older card's id")
	}
	a.Send(`{"action":"submit_interaction","requestId":"r-old","sessionId":"` + sidA + `","interactionId":"` + oldID.(string) + `","values":{"answers":[{"header":"Plan","options":["Pro"]}]}}`)
	if ev := nextOf(a, "r-old"); errorCode(ev) != "INTERACTION_MISMATCH" {
		t.Errorf("submit to the replaced card: %v", ev)
	}
	replaced, sid := a, sidA
	if first == "TB" {
		replaced, sid = b, sidB
	}
	replaced.Send(`{"action":"send_message","requestId":"T3","sessionId":"` + sid + `","message":"hello"}`)
	if ev := nextOf(replaced, "T3"); ev["status"] != 202.0 {
		t.Fatalf("the replaced turn's slot was not given back: %v", ev)
	}
}

// nextOf reads c's events until one of request id, which it returns.
func nextOf(c *client, id string) map[string]any {
	c.T.Helper()
	for {
		if ev := c.Next(); ev["requestId"] == id {
			return ev
		}
	}
}
