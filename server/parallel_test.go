package server_test

import (
	"strings"
	"testing"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/server"
)

const raiseTerm = `{"questions":[{"question":"Which term?","header":"Term","options":["Monthly","Yearly"]}],"reason":"to quote"}`

// twoCardScript raises two choices cards in one model step, then replies.
func twoCardScript(t *testing.T) agent.Model {
	t.Helper()
	m, err := agent.NewScripted([]agent.ScriptEntry{
		{Kind: "toolCall", ID: "call-a", Name: "request_choices", Arguments: raiseChoices,
			Calls: []agent.ScriptCall{{ID: "call-b", Name: "request_choices", Arguments: raiseTerm}}},
		{Kind: "text", Text: "Both noted."},
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func submitChoice(c *client, sid, iid, header, option string) {
	c.Send(`{"action":"submit_interaction","requestId":"r-` + header + `","sessionId":"` + sid + `","interactionId":"` + iid +
		`","kind":"choices","values":{"answers":[{"header":"` + header + `","options":["` + option + `"]}]}}`)
}

func interactionID(ev map[string]any) string {
	id, _ := path(ev, "data", "data", "interactionId").(string)
	return id
}

// TestParallelAsksWire: a client that names kindkit.parallel_asks gets
// both cards of a step at once, each its own interaction_required, and
// answers them in reverse order, each acknowledged on its own; the turn
// then runs once to its reply. A late second answer gets
// NO_PENDING_INTERACTION.
func TestParallelAsksWire(t *testing.T) {
	_, url := startServer(t, servertest.Config{Model: twoCardScript(t)})
	c := dial(t, url)
	sid := create(c, `["choice_chips","`+server.ExtParallelAsks+`"]`)
	c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"quote"}`)
	evs := c.Expect("immediate_response", "interaction_required", "stream_chunk", "interaction_required", "stream_chunk")
	a, b := interactionID(evs[1]), interactionID(evs[3])
	if a == "" || b == "" || a == b {
		t.Fatalf("two cards: %q, %q", a, b)
	}
	submitChoice(c, sid, b, "Term", "Yearly")
	if ack := c.Expect("immediate_response")[0]; path(ack, "data", "interactionId") != b {
		t.Fatalf("the second card's ack: %v", ack)
	}
	submitChoice(c, sid, a, "Plan", "Pro")
	c.Expect("immediate_response")
	text, end := c.Turn()
	if end["type"] != "eventual_response" || !strings.Contains(text, "Both noted.") {
		t.Fatalf("after both answers: %q, %v", text, end)
	}
	submitChoice(c, sid, b, "Term", "Monthly")
	if code := errorCode(c.Expect("error")[0]); code != "NO_PENDING_INTERACTION" {
		t.Errorf("a second answer to a card: %s", code)
	}
}

// TestParallelAsksReferenceOneAtATime: a reference client sees the same
// step's cards one at a time, the second after the first's ack and the
// first's result, exactly as before the extension existed.
func TestParallelAsksReferenceOneAtATime(t *testing.T) {
	_, url := startServer(t, servertest.Config{Model: twoCardScript(t)})
	c := dial(t, url)
	sid := create(c, `["choice_chips"]`)
	c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"quote"}`)
	a := interactionID(c.Expect("immediate_response", "interaction_required", "stream_chunk")[1])
	submitChoice(c, sid, a, "Plan", "Pro")
	evs := c.Expect("immediate_response", "stream_chunk", "interaction_required", "stream_chunk")
	b := interactionID(evs[2])
	if b == "" || b == a {
		t.Fatalf("the second card: %v", evs[2])
	}
	submitChoice(c, sid, b, "Term", "Yearly")
	c.Expect("immediate_response")
	if _, end := c.Turn(); end["type"] != "eventual_response" {
		t.Fatalf("after both answers: %v", end)
	}
}

// TestParallelAsksReferenceJoins: reference clients on a conversation
// whose step opened two cards at once (for another client, which named
// the extension) are shown one card at a time: one watching as the cards
// open gets the first, and the second after its answer's ack; one that
// joins later is shown the first. The turn that the last answer resumes
// reaches every socket.
func TestParallelAsksReferenceJoins(t *testing.T) {
	_, url := startServer(t, servertest.Config{Model: twoCardScript(t)})
	p := dial(t, url)
	p.Send(`{"action":"create_conversation_session","requestId":"r-create","agentId":"a","supports":["choice_chips","` + server.ExtParallelAsks + `"]}`)
	created := p.Expect("immediate_response")[0]
	psid, _ := path(created, "data", "sessionId").(string)
	conv, _ := path(created, "data", "conversationId").(string)
	r := dial(t, url)
	rsid := resumeConversation(r, conv, "") // no supports: the conversation's stay
	// r's join ends before its pong (its reader handles one frame at a
	// time), so r watches the cards open live: a join still under way
	// as they open would show r the first card again, without its chunk.
	r.Send(`{"action":"ping","requestId":"joined"}`)
	r.Expect("pong")

	p.Send(`{"action":"send_message","requestId":"T","sessionId":"` + psid + `","message":"quote"}`)
	evs := p.Expect("immediate_response", "interaction_required", "stream_chunk", "interaction_required", "stream_chunk")
	a, b := interactionID(evs[1]), interactionID(evs[3])
	if got := interactionID(r.Expect("interaction_required", "stream_chunk")[0]); got != a {
		t.Fatalf("the watching reference client was shown %s, want the first card %s", got, a)
	}
	late := dial(t, url)
	resumeConversation(late, conv, `["choice_chips"]`)
	if got := interactionID(late.Expect("interaction_required")[0]); got != a {
		t.Fatalf("the reference client that joined was shown %s, want the first card %s", got, a)
	}

	submitChoice(r, rsid, a, "Plan", "Pro")
	evs = r.Expect("immediate_response", "interaction_required", "stream_chunk")
	if got := interactionID(evs[1]); got != b {
		t.Fatalf("after its answer the reference client was shown %s, want the second card %s", got, b)
	}
	submitChoice(r, rsid, b, "Term", "Yearly")
	r.Expect("immediate_response")
	for name, c := range map[string]*client{"the answering client": r, "the client that opened them": p} {
		if text, end := c.Turn(); end["type"] != "eventual_response" || !strings.Contains(text, "Both noted.") {
			t.Errorf("%s after both answers: %q, %v", name, text, end)
		}
	}
}
