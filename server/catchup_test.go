package server_test

import (
	"context"
	"testing"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/server"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/storetest"
)

// A socket that asked for kindkit.turn_catchup and joins a conversation
// whose turn runs in another process, started before this process could
// hear it, is told first that the turn runs, then its stream; one that did
// not ask gets only the stream, as a reference client does.
func TestTurnCatchUpAcrossProcesses(t *testing.T) {
	dsn := storetest.PostgresDB(t)
	m := servertest.NewStall()
	a := servertest.Start(t, servertest.Config{Store: openSQL(t, dsn), Model: m}, nil)
	sender := dial(t, a.WS())
	sender.Send(`{"action":"create_conversation_session","requestId":"r-create","agentId":"a"}`)
	ack := sender.Expect("immediate_response")[0]
	sid, conv := path(ack, "data", "sessionId").(string), path(ack, "data", "conversationId").(string)
	sender.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"hi"}`)
	sender.Expect("immediate_response")
	<-m.Said

	// B starts now: it heard nothing of the turn.
	b := servertest.Start(t, servertest.Config{Store: openSQL(t, dsn), Model: servertest.NewStall()}, nil)
	waitListening(t, a, b)
	asked, plain := dial(t, b.WS()), dial(t, b.WS())
	resumeConversation(asked, conv, `["`+server.ExtTurnCatchUp+`"]`)
	resumeConversation(plain, conv, "")
	if ev := asked.Next(); ev["type"] != "turn_running" || ev["requestId"] != "T" || path(ev, "data", "requestId") != "T" {
		t.Fatalf("the first event after joining: %v, want turn_running for T", ev)
	}
	plain.Send(`{"action":"ping","requestId":"p"}`)
	if ev := plain.Next(); ev["type"] != "pong" {
		t.Fatalf("a socket that did not ask: %v before its pong, want nothing", ev)
	}
	close(m.Release)
	for _, c := range []*client{asked, plain} {
		if text, end := watched(c, "T"); text != " and goodbye." || end["type"] != "eventual_response" {
			t.Errorf("after the catch-up: %q, %v", text, end)
		}
	}
}

// A socket that asked for kindkit.turn_catchup and joins while a card
// waits gets the words the turn said before the card, then the card; one
// that did not ask gets the card alone, as today.
func TestTurnCatchUpWordsBeforeCard(t *testing.T) {
	_, url := startServer(t, servertest.Config{Model: askFirst{}})
	first := dial(t, url)
	first.Send(`{"action":"create_conversation_session","requestId":"r-create","agentId":"a","supports":["choice_chips"]}`)
	ack := first.Expect("immediate_response")[0]
	sid, conv := path(ack, "data", "sessionId").(string), path(ack, "data", "conversationId").(string)
	first.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"quote"}`)
	first.Expect("immediate_response", "stream_token", "interaction_required", "stream_chunk")
	first.WS.CloseNow()

	asked := dial(t, url)
	resumeConversation(asked, conv, `["choice_chips","`+server.ExtTurnCatchUp+`"]`)
	evs := asked.Expect("stream_token", "interaction_required")
	if evs[0]["token"] != askFirstWords || evs[0]["requestId"] != "T" {
		t.Errorf("before the card: %v, want the turn's words", evs[0])
	}
	plain := dial(t, url)
	resumeConversation(plain, conv, "")
	plain.Expect("interaction_required")
}

const askFirstWords = "Let me ask you something first."

// askFirst says a few words and raises a choices card in the same step,
// then answers.
type askFirst struct{}

func (askFirst) Respond(ctx context.Context, req agent.ModelRequest, onText func(string)) (agent.ModelResponse, error) {
	if req.Position == 0 {
		onText(askFirstWords)
		return agent.ModelResponse{Position: 1, Text: askFirstWords,
			ToolCalls: []store.ToolCall{{ID: "c1", Name: "request_choices", Arguments: raiseChoices}}}, nil
	}
	onText("Thanks.")
	return agent.ModelResponse{Position: req.Position + 1, Text: "Thanks."}, nil
}
