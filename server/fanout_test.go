package server_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/server"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/storetest"
)

// tabs opens a conversation on a and resumes it on b (a second tab).
func tabs(t *testing.T, a, b *client, supports string) (sidA, sidB, conv string) {
	t.Helper()
	extra := ""
	if supports != "" {
		extra = `,"supports":` + supports
	}
	a.Send(`{"action":"create_conversation_session","requestId":"r-create","agentId":"a"` + extra + `}`)
	ack := a.Expect("immediate_response")[0]
	sidA, conv = path(ack, "data", "sessionId").(string), path(ack, "data", "conversationId").(string)
	sidB = resumeConversation(b, conv, supports)
	// The pong comes after b's join is done (its reader handles one frame
	// at a time), so what a does next reaches b live, never through a
	// card re-sent as b joins.
	b.Send(`{"action":"ping","requestId":"joined"}`)
	b.Expect("pong")
	return sidA, sidB, conv
}

// watched reads a watching tab's events of turn id until its terminal
// event: the streamed text and the terminal event. A watcher gets no ack.
func watched(c *client, id string) (text string, end map[string]any) {
	c.T.Helper()
	for {
		ev := c.Next()
		if ev["requestId"] != id {
			c.T.Fatalf("watcher got %v, want events of turn %s", ev, id)
		}
		switch ev["type"] {
		case "stream_token":
			text += ev["token"].(string)
		case "stream_chunk", "interaction_required":
		case "immediate_response":
			c.T.Fatalf("watcher got the ack of a turn it did not start: %v", ev)
		default:
			return text, ev
		}
	}
}

// Two tabs on one conversation both see a turn live, in order, with its
// terminal event.
func TestEveryTabSeesTheTurn(t *testing.T) {
	script, _ := agent.NewScripted([]agent.ScriptEntry{{Kind: "text", Text: "Hello from the agent."}})
	_, url := startServer(t, servertest.Config{Model: script})
	a, b := dial(t, url), dial(t, url)
	sidA, _, _ := tabs(t, a, b, "")
	a.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sidA + `","message":"hi"}`)
	a.Expect("immediate_response")
	textA, endA := a.Turn()
	textB, endB := watched(b, "T")
	if textA != "Hello from the agent." || textB != textA {
		t.Errorf("texts: follower %q, watcher %q", textA, textB)
	}
	if endA["type"] != "eventual_response" || endB["type"] != "eventual_response" ||
		path(endA, "data", "data", "messageId") != path(endB, "data", "data", "messageId") {
		t.Errorf("terminal events: follower %v, watcher %v", endA, endB)
	}
}

// A tab that joins mid-turn first gets what the turn has said so far (the
// tokens as one), then the rest live.
func TestJoinMidTurn(t *testing.T) {
	m := servertest.NewStall()
	_, url := startServer(t, servertest.Config{Model: m})
	a := dial(t, url)
	a.Send(`{"action":"create_conversation_session","requestId":"r-create","agentId":"a"}`)
	ack := a.Expect("immediate_response")[0]
	sidA, conv := path(ack, "data", "sessionId").(string), path(ack, "data", "conversationId").(string)
	a.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sidA + `","message":"hi"}`)
	a.Expect("immediate_response")
	<-m.Said
	b := dial(t, url)
	resumeConversation(b, conv, "")
	if tok := b.Expect("stream_token")[0]; tok["token"] != "Hello, there" || tok["requestId"] != "T" {
		t.Errorf("catch-up: %v, want the turn's words so far", tok)
	}
	close(m.Release)
	if text, end := watched(b, "T"); text != " and goodbye." || end["type"] != "eventual_response" {
		t.Errorf("after the catch-up: %q, %v", text, end)
	}
	if text, end := a.Turn(); text != "Hello, there and goodbye." || end["type"] != "eventual_response" {
		t.Errorf("follower: %q, %v", text, end)
	}
}

// historyModel raises a card first, then answers with what the history
// says the card's call got.
type historyModel struct {
	mu   sync.Mutex
	seen []*store.Message
}

func (m *historyModel) Respond(ctx context.Context, req agent.ModelRequest, onText func(string)) (agent.ModelResponse, error) {
	if req.Position == 0 {
		return agent.ModelResponse{Position: 1, ToolCalls: []store.ToolCall{{ID: "c1", Name: "request_choices", Arguments: raiseChoices}}}, nil
	}
	m.mu.Lock()
	m.seen = req.History
	m.mu.Unlock()
	onText("ok")
	return agent.ModelResponse{Position: req.Position + 1, Text: "ok"}, nil
}

// A message from a session other than the card's (a resumed client that
// ignores the re-sent card) withdraws the card as a cancel would: both tabs
// hear cancelled for the parked turn, the new turn runs, and the model reads
// that the card was withdrawn. The raising session keeps TURN_IN_PROGRESS.
func TestMessageWithdrawsCard(t *testing.T) {
	m := &historyModel{}
	_, url := startServer(t, servertest.Config{Model: m})
	a, b := dial(t, url), dial(t, url)
	sidA, sidB, _ := tabs(t, a, b, `["choice_chips"]`)
	a.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sidA + `","message":"quote"}`)
	iid := path(a.Expect("immediate_response", "interaction_required", "stream_chunk")[1], "data", "data", "interactionId").(string)
	b.Expect("interaction_required", "stream_chunk") // live, as a watcher

	a.Send(`{"action":"send_message","requestId":"TA","sessionId":"` + sidA + `","message":"again"}`)
	if ev := a.Expect("error")[0]; errorCode(ev) != "TURN_IN_PROGRESS" {
		t.Fatalf("the raising session's message: %v", ev)
	}
	b.Send(`{"action":"send_message","requestId":"T2","sessionId":"` + sidB + `","message":"actually, never mind"}`)
	if ev := b.Expect("cancelled", "immediate_response"); ev[0]["requestId"] != "T" || ev[1]["requestId"] != "T2" {
		t.Fatalf("withdrawing tab: %v", ev)
	}
	if text, end := b.Turn(); text != "ok" || end["type"] != "eventual_response" {
		t.Errorf("new turn: %q, %v", text, end)
	}
	if ev := a.Expect("cancelled")[0]; ev["requestId"] != "T" {
		t.Errorf("raising tab: %v", ev)
	}
	if text, end := watched(a, "T2"); text != "ok" || end["type"] != "eventual_response" {
		t.Errorf("raising tab watching the new turn: %q, %v", text, end)
	}
	submitPlan(a, sidA, iid)
	if ev := a.Expect("error")[0]; errorCode(ev) != "NO_PENDING_INTERACTION" || !strings.Contains(errorMessage(ev), ": this card was withdrawn: a message came instead at ") {
		t.Errorf("submit of the withdrawn card: %v", ev)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var result string
	for _, msg := range m.seen {
		if msg.Role == store.RoleTool && msg.ToolCallID == "c1" {
			result = msg.Text
		}
	}
	if !strings.Contains(result, `"status":"withdrawn"`) {
		t.Errorf("the model read %q for the withdrawn card's call", result)
	}
}

// The first message of the tab that made the conversation, after another
// tab's turn parked on it, goes the usual way: the card is withdrawn, and
// the new turn reads the conversation and its history as they are now.
func TestFirstMessageAfterAnotherTab(t *testing.T) {
	m := &historyModel{}
	_, url := startServer(t, servertest.Config{Model: m})
	a, b := dial(t, url), dial(t, url)
	sidA, sidB, _ := tabs(t, a, b, `["choice_chips"]`)
	b.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sidB + `","message":"quote"}`)
	b.Expect("immediate_response", "interaction_required", "stream_chunk")
	a.Expect("interaction_required", "stream_chunk") // live, as a watcher

	a.Send(`{"action":"send_message","requestId":"T2","sessionId":"` + sidA + `","message":"never mind"}`)
	if ev := a.Expect("cancelled", "immediate_response"); ev[0]["requestId"] != "T" || ev[1]["requestId"] != "T2" {
		t.Fatalf("the making tab's first message: %v", ev)
	}
	// The model is past its card (position 1): it answers.
	if text, end := a.Turn(); text != "ok" || end["type"] != "eventual_response" {
		t.Errorf("its turn: %q, %v", text, end)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var said []string
	for _, msg := range m.seen {
		if msg.Role == store.RoleUser {
			said = append(said, msg.Text)
		}
	}
	if want := []string{"quote", "never mind"}; !slices.Equal(said, want) {
		t.Errorf("the model read the user messages %q, want %q", said, want)
	}
}

// The first message of the tab that made the conversation, after another
// tab declared other capabilities, runs with the new ones: no card.
func TestFirstMessageAfterNewSupports(t *testing.T) {
	_, url := startServer(t, servertest.Config{Model: &historyModel{}})
	a, b := dial(t, url), dial(t, url)
	a.Send(`{"action":"create_conversation_session","requestId":"r-create","agentId":"a","supports":["choice_chips"]}`)
	ack := a.Expect("immediate_response")[0]
	sidA, conv := path(ack, "data", "sessionId").(string), path(ack, "data", "conversationId").(string)
	resumeConversation(b, conv, `[]`)

	a.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sidA + `","message":"quote"}`)
	a.Expect("immediate_response")
	for {
		switch ev := a.Next(); ev["type"] {
		case "interaction_required":
			t.Fatalf("a card for a conversation that no longer supports it: %v", ev)
		case "eventual_response":
			return
		}
	}
}

// Two processes on one PostgreSQL database: the visitor on A sees live, in
// order and to its terminal event, a resume on B (a submit there) and B's
// deadline sweep, and has its slot back after each.
func TestFanOutAcrossProcesses(t *testing.T) {
	dsn := storetest.PostgresDB(t)
	twice := func() agent.Model {
		m, _ := agent.NewScripted([]agent.ScriptEntry{
			{Kind: "toolCall", Name: "request_choices", Arguments: raiseChoices}, {Kind: "text", Text: "Pro it is."},
			{Kind: "toolCall", Name: "request_choices", Arguments: raiseChoices}, {Kind: "text", Text: "No answer, then."},
			{Kind: "text", Text: "You are welcome."},
		})
		return m
	}
	clockB := clockwork.NewFakeClockAt(time.Now())
	a := servertest.Start(t, servertest.Config{Store: openSQL(t, dsn), Model: twice(), KeepParksOnDrain: true}, nil)
	b := servertest.Start(t, servertest.Config{Store: openSQL(t, dsn), Model: twice(), KeepParksOnDrain: true, Clock: clockB}, nil)
	waitListening(t, a, b)

	onA, onB := dial(t, a.WS()), dial(t, b.WS())
	sidA, sidB, _ := tabs(t, onA, onB, `["choice_chips"]`)
	onA.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sidA + `","message":"quote"}`)
	iid := path(onA.Expect("immediate_response", "interaction_required", "stream_chunk")[1], "data", "data", "interactionId").(string)
	onB.Expect("interaction_required", "stream_chunk")

	submitPlan(onB, sidB, iid)
	onB.Expect("immediate_response")
	if _, end := onB.Turn(); end["type"] != "eventual_response" {
		t.Fatalf("submitter: %v", end)
	}
	ev := onA.Expect("stream_chunk")[0]
	if r := path(ev, "data", "state", "rawResponse", "toolResult", "result"); !strings.Contains(r.(string), `"submitted"`) {
		t.Errorf("A's first event of the resume on B: %v", ev)
	}
	if text, end := watched(onA, "T"); text != "Pro it is." || end["type"] != "eventual_response" {
		t.Errorf("A watching B's resume: %q, %v", text, end)
	}

	// A parks again; B's sweep expires the card.
	onA.Send(`{"action":"send_message","requestId":"U","sessionId":"` + sidA + `","message":"again"}`)
	onA.Expect("immediate_response", "interaction_required", "stream_chunk")
	onB.Expect("interaction_required", "stream_chunk")
	clockB.Advance(25 * time.Hour)
	ev = onA.Expect("stream_chunk")[0]
	if r := path(ev, "data", "state", "rawResponse", "toolResult", "result"); !strings.Contains(r.(string), `"no_response"`) {
		t.Errorf("A's first event of B's sweep: %v", ev)
	}
	if text, end := watched(onA, "U"); text != "No answer, then." || end["type"] != "eventual_response" {
		t.Errorf("A watching B's sweep: %q, %v", text, end)
	}
	onA.Send(`{"action":"send_message","requestId":"V","sessionId":"` + sidA + `","message":"thanks"}`)
	if ev := nextOf(onA, "V"); ev["type"] != "immediate_response" {
		t.Errorf("A after the resume elsewhere: %v", ev)
	}
}

// waitListening waits until each server hears its notes through the
// database.
func waitListening(t *testing.T, servers ...*servertest.Server) {
	t.Helper()
	for _, s := range servers {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.FanOutReady(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// The page's "answer in words": a message that names the pending card in
// withdrawInteraction withdraws it, also from the session that raised it.
func TestMessageNamesTheCardItAnswers(t *testing.T) {
	_, url := startServer(t, servertest.Config{Model: &historyModel{}})
	c := dial(t, url)
	sid := create(c, `["choice_chips"]`)
	c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"quote"}`)
	iid := path(c.Expect("immediate_response", "interaction_required", "stream_chunk")[1], "data", "data", "interactionId").(string)
	c.Send(`{"action":"send_message","requestId":"T2","sessionId":"` + sid + `","message":"Pro, please","withdrawInteraction":"another-card"}`)
	if ev := c.Expect("error")[0]; errorCode(ev) != "TURN_IN_PROGRESS" {
		t.Fatalf("a message naming another card: %v", ev)
	}
	c.Send(`{"action":"send_message","requestId":"T3","sessionId":"` + sid + `","message":"Pro, please","withdrawInteraction":"` + iid + `"}`)
	if ev := c.Expect("cancelled", "immediate_response"); ev[0]["requestId"] != "T" || ev[1]["requestId"] != "T3" {
		t.Fatalf("answer in words: %v", ev)
	}
	if text, end := c.Turn(); text != "ok" || end["type"] != "eventual_response" {
		t.Errorf("the new turn: %q, %v", text, end)
	}
}

// A turn its socket's close aborts (it was never parked, §4.10) ends for
// the conversation's other sockets too: they hear cancelled, and a socket
// that joins afterwards is given nothing of it to catch up on.
func TestAbortedTurnEndsForWatchers(t *testing.T) {
	m := servertest.NewStall()
	defer close(m.Release)
	_, url := startServer(t, servertest.Config{Model: m})
	a, b := dial(t, url), dial(t, url)
	sidA, _, conv := tabs(t, a, b, "")
	a.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sidA + `","message":"hi"}`)
	a.Expect("immediate_response")
	<-m.Said
	a.WS.CloseNow()
	if text, end := watched(b, "T"); text != "Hello, there" || end["type"] != "cancelled" {
		t.Errorf("the watcher of an aborted turn: %q, then %v", text, end)
	}
	c := dial(t, url)
	resumeConversation(c, conv, "")
	c.Send(`{"action":"ping","requestId":"p"}`)
	if ev := c.Next(); ev["type"] != "pong" {
		t.Errorf("a socket joining after the abort got %v before its pong", ev)
	}
}

// A connection that asked to keep its turns (keepTurns) closes mid-reply,
// as a page does on reload: the turn runs on, and the socket that comes
// back catches up on it and gets its end. (Without keepTurns the turn is
// aborted, §4.10, and this test fails: the catch-up or the end is missing.)
func TestKeepTurns(t *testing.T) {
	m := servertest.NewStall()
	_, url := startServer(t, servertest.Config{Model: m})
	a := dial(t, url)
	a.Send(`{"action":"create_conversation_session","requestId":"r-create","agentId":"a","keepTurns":true}`)
	ack := a.Expect("immediate_response")[0]
	sidA, conv := path(ack, "data", "sessionId").(string), path(ack, "data", "conversationId").(string)
	a.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sidA + `","message":"hi"}`)
	a.Expect("immediate_response")
	<-m.Said
	a.WS.CloseNow()
	b := dial(t, url)
	resumeConversation(b, conv, "")
	if tok := b.Expect("stream_token")[0]; tok["token"] != "Hello, there" || tok["requestId"] != "T" {
		t.Errorf("catch-up: %v, want the turn's words so far", tok)
	}
	close(m.Release)
	if text, end := watched(b, "T"); text != " and goodbye." || end["type"] != "eventual_response" {
		t.Errorf("after the catch-up: %q, %v", text, end)
	}
}

// Capabilities declared anew on B reach a turn parked on A: its next card
// goes the conversational way. The socket on B is busy with a card of its
// own, so B does not take the card of A's conversation over (Reattach);
// only the fan-out tells A.
func TestCapabilitiesAcrossProcesses(t *testing.T) {
	dsn := storetest.PostgresDB(t)
	a := servertest.Start(t, servertest.Config{Store: openSQL(t, dsn), Model: raiseTwice()}, nil)
	b := servertest.Start(t, servertest.Config{Store: openSQL(t, dsn), Model: raiseTwice()}, nil)
	waitListening(t, a, b)

	onA := dial(t, a.WS())
	sid, conv, iid := parkChoices(onA)

	onB := dial(t, b.WS())
	own := create(onB, `["choice_chips"]`)
	onB.Send(`{"action":"send_message","requestId":"U","sessionId":"` + own + `","message":"hi"}`)
	onB.Expect("immediate_response", "interaction_required", "stream_chunk")
	onB.Send(`{"action":"create_conversation_session","requestId":"r2","agentId":"a","conversationId":"` + conv + `","supports":[]}`)
	onB.Expect("immediate_response")
	// B's note went out before B hears its own probe, and A hears B's note
	// before its own probe: notifications come in commit order.
	waitListening(t, b, a)

	submitPlan(onA, sid, iid)
	onA.Expect("immediate_response")
	wantConversationalRaise(t, onA)
}

// Every socket that asked for it sees the message another session sent to
// its conversation (a user_message event, before the turn's stream), here
// and on another process; one that did not ask sees only the turn, as a
// reference client expects.
func TestTabsSeeTheMessage(t *testing.T) {
	reply := func() agent.Model {
		m, _ := agent.NewScripted([]agent.ScriptEntry{{Kind: "text", Text: "Hi back."}})
		return m
	}
	t.Run("one process", func(t *testing.T) {
		_, url := startServer(t, servertest.Config{Model: reply()})
		testTabsSeeTheMessage(t, dial(t, url), dial(t, url), dial(t, url))
	})
	t.Run("two processes", func(t *testing.T) {
		dsn := storetest.PostgresDB(t)
		a := servertest.Start(t, servertest.Config{Store: openSQL(t, dsn), Model: reply()}, nil)
		b := servertest.Start(t, servertest.Config{Store: openSQL(t, dsn), Model: reply()}, nil)
		waitListening(t, a, b)
		testTabsSeeTheMessage(t, dial(t, a.WS()), dial(t, b.WS()), dial(t, b.WS()))
	})
}

func testTabsSeeTheMessage(t *testing.T, sender, asked, plain *client) {
	sid, _, conv := tabs(t, sender, asked, `["`+server.ExtUserMessages+`"]`)
	resumeConversation(plain, conv, "")
	plain.Send(`{"action":"ping","requestId":"p"}`)
	plain.Expect("pong")
	sender.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"hello from the first tab"}`)
	sender.Expect("immediate_response")
	if text, end := sender.Turn(); text != "Hi back." || end["type"] != "eventual_response" {
		t.Fatalf("sender's turn: %q, %v", text, end)
	}
	ev := asked.Next()
	msg, _ := path(ev, "data", "message").(map[string]any)
	if ev["type"] != "user_message" || ev["requestId"] != "T" || path(msg, "content", "text") != "hello from the first tab" ||
		msg["direction"] != "inbound" || msg["id"] == nil {
		t.Fatalf("the other tab's first event: %v, want the message as user_message", ev)
	}
	if text, end := watched(asked, "T"); text != "Hi back." || end["type"] != "eventual_response" {
		t.Errorf("the other tab's turn: %q, %v", text, end)
	}
	// The same id as the history's, so a page that has both shows one.
	asked.Send(`{"action":"get_conversation_messages","requestId":"h","sessionId":"` + sid + `"}`)
	if id := path(asked.Expect("immediate_response")[0], "data", "messages"); path(id.([]any)[1], "id") != msg["id"] {
		t.Errorf("the history's message id %v, the event's %v", path(id.([]any)[1], "id"), msg["id"])
	}
	if text, end := watched(plain, "T"); text != "Hi back." || end["type"] != "eventual_response" {
		t.Errorf("a socket that did not ask: %q, %v; want only the turn", text, end)
	}
}

// A socket that asked for it stops a turn another socket sent (another
// tab, the page before a reload), on this process or another: every
// socket on the conversation gets its cancelled event, the sender's slot
// is free, and the model is not called again. A socket that did not ask
// stops only its own turn, as the reference has it.
func TestStopAnotherSocketsTurn(t *testing.T) {
	t.Run("one process", func(t *testing.T) {
		m := servertest.NewStall()
		_, url := startServer(t, servertest.Config{Model: m})
		testStopAnotherSocketsTurn(t, m, dial(t, url), dial(t, url), dial(t, url))
	})
	t.Run("two processes", func(t *testing.T) {
		dsn := storetest.PostgresDB(t)
		m := servertest.NewStall()
		a := servertest.Start(t, servertest.Config{Store: openSQL(t, dsn), Model: m}, nil)
		b := servertest.Start(t, servertest.Config{Store: openSQL(t, dsn), Model: servertest.NewStall()}, nil)
		waitListening(t, a, b)
		testStopAnotherSocketsTurn(t, m, dial(t, a.WS()), dial(t, b.WS()), dial(t, b.WS()))
	})
}

func testStopAnotherSocketsTurn(t *testing.T, m *servertest.Stall, sender, stopper, plain *client) {
	sid, _, conv := tabs(t, sender, stopper, `["`+server.ExtSharedTurns+`"]`)
	resumeConversation(plain, conv, "")
	sender.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"hi"}`)
	sender.Expect("immediate_response")
	<-m.Said
	for _, c := range []*client{stopper, plain} {
		for said := ""; said != "Hello, there"; {
			said += c.Expect("stream_token")[0]["token"].(string)
		}
	}

	plain.Send(`{"action":"cancel","requestId":"T"}`)
	plain.Send(`{"action":"ping","requestId":"p"}`)
	plain.Expect("pong") // the turn goes on: nothing came of the cancel

	stopper.Send(`{"action":"cancel","requestId":"T"}`)
	for name, c := range map[string]*client{"sender": sender, "stopper": stopper, "plain": plain} {
		ev := nextOf(c, "T")
		for ev["type"] == "stream_token" {
			ev = nextOf(c, "T")
		}
		if ev["type"] != "cancelled" {
			t.Errorf("%s: %v, want the turn's cancelled event", name, ev)
		}
	}
	sender.Send(`{"action":"send_message","requestId":"U","sessionId":"` + sid + `","message":"again"}`)
	if ev := nextOf(sender, "U"); ev["type"] != "immediate_response" || ev["status"] != float64(202) {
		t.Errorf("the sender after the stop: %v, want its next message taken", ev)
	}
	close(m.Release)
}

// A socket with the shared-turns extension stops another socket's turn
// that waits on its card too: every socket hears its cancelled event, the
// card is gone, and the sender's next message is taken.
func TestStopAnotherSocketsCard(t *testing.T) {
	_, url := startServer(t, servertest.Config{Model: &historyModel{}})
	sender, stopper := dial(t, url), dial(t, url)
	sid, _, _ := tabs(t, sender, stopper, `["choice_chips","`+server.ExtSharedTurns+`"]`)
	sender.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"quote"}`)
	iid := path(sender.Expect("immediate_response", "interaction_required", "stream_chunk")[1], "data", "data", "interactionId").(string)
	stopper.Expect("interaction_required", "stream_chunk")

	stopper.Send(`{"action":"cancel","requestId":"T"}`)
	for name, c := range map[string]*client{"sender": sender, "stopper": stopper} {
		if ev := c.Expect("cancelled")[0]; ev["requestId"] != "T" {
			t.Errorf("%s: %v, want the turn's cancelled event", name, ev)
		}
	}
	submitPlan(sender, sid, iid)
	if ev := sender.Expect("error")[0]; errorCode(ev) != "NO_PENDING_INTERACTION" {
		t.Errorf("submit of the stopped turn's card: %v", ev)
	}
	sender.Send(`{"action":"send_message","requestId":"U","sessionId":"` + sid + `","message":"again"}`)
	if ev := nextOf(sender, "U"); ev["type"] != "immediate_response" || ev["status"] != float64(202) {
		t.Errorf("the sender after the stop: %v, want its next message taken", ev)
	}
}
