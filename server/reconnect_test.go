package server_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
	"github.com/kindkit/kindkit/store/storetest"
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
	_, url := startServer(t, servertest.Config{Model: parkingScript(t)})
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
	_, url := startServer(t, servertest.Config{Model: parkingScript(t)})
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
		_, url := startServer(t, servertest.Config{Model: parkingScript(t)})
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

// A conversation runs one turn at a time, whichever session sends the
// message and whichever process serves it: a second tab's message while a
// turn runs is refused with TURN_IN_PROGRESS and is not stored, so two
// replies never stream into one history, each model call blind to the
// other's. Once the turn ended, the message goes through.
func TestOneTurnPerConversation(t *testing.T) {
	t.Run("one process", func(t *testing.T) {
		g := &holdModel{started: make(chan struct{}, 1), release: make(chan struct{})}
		st := memstore.New()
		_, url := startServer(t, servertest.Config{Model: g, Store: st})
		testOneTurnPerConversation(t, g, dial(t, url), dial(t, url), st)
	})
	t.Run("two processes", func(t *testing.T) {
		dsn := storetest.PostgresDB(t)
		g := &holdModel{started: make(chan struct{}, 1), release: make(chan struct{})}
		a := servertest.Start(t, servertest.Config{Store: openSQL(t, dsn), Model: g}, nil)
		b := servertest.Start(t, servertest.Config{Store: openSQL(t, dsn), Model: g}, nil)
		waitListening(t, a, b)
		testOneTurnPerConversation(t, g, dial(t, a.WS()), dial(t, b.WS()), openSQL(t, dsn))
	})
}

func testOneTurnPerConversation(t *testing.T, g *holdModel, a, b *client, st store.Store) {
	sidA, sidB, conv := tabs(t, a, b, "")
	b.Send(`{"action":"send_message","requestId":"TB","sessionId":"` + sidB + `","message":"first"}`)
	b.Expect("immediate_response")
	<-g.started // B's turn waits in the model
	a.Send(`{"action":"send_message","requestId":"TA","sessionId":"` + sidA + `","message":"second"}`)
	if ev := nextOf(a, "TA"); errorCode(ev) != "TURN_IN_PROGRESS" {
		t.Fatalf("a second tab's message while a turn runs: %v, want TURN_IN_PROGRESS", ev)
	}
	g.release <- struct{}{}
	if text, end := b.Turn(); end["type"] != "eventual_response" || text != "reply 1" {
		t.Fatalf("B's turn: %q, %v", text, end)
	}
	if _, end := watched(a, "TB"); end["type"] != "eventual_response" {
		t.Fatalf("A watched B's turn end with %v", end)
	}
	a.Send(`{"action":"send_message","requestId":"TA2","sessionId":"` + sidA + `","message":"second"}`)
	a.Expect("immediate_response")
	<-g.started
	g.release <- struct{}{}
	if text, end := a.Turn(); end["type"] != "eventual_response" || text != "reply 2" {
		t.Fatalf("A's turn: %q, %v", text, end)
	}
	msgs, _, err := st.Messages(context.Background(), conv, []store.Role{store.RoleUser, store.RoleReply}, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range slices.Backward(msgs) {
		got = append(got, m.Text)
	}
	if want := []string{"first", "reply 1", "second", "reply 2"}; !slices.Equal(got, want) {
		t.Errorf("history = %q, want %q: one turn after the other", got, want)
	}
}

// holdModel answers each call with "reply N" once the test releases it.
type holdModel struct {
	started chan struct{}
	release chan struct{}
	calls   atomic.Int32
}

func (h *holdModel) Respond(ctx context.Context, req agent.ModelRequest, onText func(string)) (agent.ModelResponse, error) {
	n := h.calls.Add(1)
	h.started <- struct{}{}
	select {
	case <-h.release:
	case <-ctx.Done():
		return agent.ModelResponse{}, ctx.Err()
	}
	text := fmt.Sprintf("reply %d", n)
	onText(text)
	return agent.ModelResponse{Text: text}, nil
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

// gatedModel raises a choices card, then, once gate is closed, another,
// then answers.
type gatedModel struct {
	calls atomic.Int32
	gate  chan struct{}
}

func (m *gatedModel) Respond(ctx context.Context, req agent.ModelRequest, onText func(string)) (agent.ModelResponse, error) {
	raise := agent.ModelResponse{ToolCalls: []store.ToolCall{{ID: fmt.Sprint("call-", m.calls.Load()), Name: "request_choices", Arguments: raiseChoices}}}
	switch m.calls.Add(1) {
	case 1:
		return raise, nil
	case 2:
		select {
		case <-m.gate:
		case <-ctx.Done():
			return agent.ModelResponse{}, ctx.Err()
		}
		return raise, nil
	}
	return agent.ModelResponse{Text: "Done."}, nil
}

// A socket that submits and closes at once leaves the resumed turn to run
// unseen; when that turn parks on its next card, the card waits for
// whoever resumes the conversation. (It was cancelled as if the person
// had stopped the turn, because its socket was gone.)
func TestParkAfterItsSocketClosed(t *testing.T) {
	m := &gatedModel{gate: make(chan struct{})}
	srv, url := startServer(t, servertest.Config{Model: m})
	c := dial(t, url)
	sid, conv, iid := parkChoices(c)
	submitPlan(c, sid, iid)
	c.Expect("immediate_response")
	c.WS.CloseNow()
	for srv.Connections() != 0 {
		time.Sleep(time.Millisecond)
	}
	close(m.gate)
	d := dial(t, url)
	sid = resumeConversation(d, conv, `["choice_chips"]`)
	var card map[string]any
	for card == nil {
		if ev := d.Next(); ev["type"] == "interaction_required" {
			card = ev
		}
	}
	d.Send(`{"action":"submit_interaction","requestId":"S","sessionId":"` + sid + `","interactionId":"` + path(card, "data", "data", "interactionId").(string) + `","values":{"answers":[{"header":"Plan","options":["Pro"]}]}}`)
	if ev := nextOf(d, "S"); ev["type"] != "immediate_response" || ev["status"] != float64(200) {
		t.Errorf("the second card's answer: %v", ev)
	}
}
