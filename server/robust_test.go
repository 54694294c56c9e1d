package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/jonboulle/clockwork"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/demo"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/internal/syncbuf"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
)

// Bad frames get an error event and the connection keeps working.
func TestBadFrames(t *testing.T) {
	_, url := startServer(t, servertest.Config{Model: &agent.Scripted{}})
	c := dial(t, url)
	for name, tc := range map[string]struct{ frame, code, requestID string }{
		"not JSON":           {`{"action":`, "VALIDATION_ERROR", ""},
		"not an object":      {`[1,2]`, "VALIDATION_ERROR", ""},
		"wrong field type":   {`{"action":"submit_interaction","requestId":"r","declined":"yes"}`, "VALIDATION_ERROR", ""},
		"supports not array": {`{"action":"create_conversation_session","requestId":"r","agentId":"a","supports":"x"}`, "VALIDATION_ERROR", ""},
		"missing action":     {`{"requestId":"r-1"}`, "VALIDATION_ERROR", "r-1"},
		"unknown action":     {`{"action":"get_messages","requestId":"r-2"}`, "UNSUPPORTED_ACTION", "r-2"},
		"missing agentId":    {`{"action":"create_conversation_session","requestId":"r-3","agentId":"  "}`, "VALIDATION_ERROR", "r-3"},
		"unknown session":    {`{"action":"send_message","requestId":"r-4","sessionId":"00000000-0000-0000-0000-000000000000","message":"x"}`, "SESSION_NOT_FOUND", "r-4"},
		"submit nobody's":    {`{"action":"submit_interaction","requestId":"r-5","sessionId":"nope","interactionId":"i","values":{}}`, "NO_PENDING_INTERACTION", "r-5"},
		"confirm nothing":    {`{"action":"confirm_tool_action","requestId":"r-6","sessionId":"nope","approved":true}`, "NO_PENDING_CONFIRMATION", "r-6"},
		"history no session": {`{"action":"get_conversation_messages","requestId":"r-7"}`, "VALIDATION_ERROR", "r-7"},
	} {
		t.Run(name, func(t *testing.T) {
			c.Send(tc.frame)
			ev := c.Expect("error")[0]
			if errorCode(ev) != tc.code {
				t.Errorf("code %q, want %q", errorCode(ev), tc.code)
			}
			if got, _ := ev["requestId"].(string); got != tc.requestID {
				t.Errorf("requestId %q, want %q", got, tc.requestID)
			}
			if _, ok := ev["status"]; ok {
				t.Error("an error event carries a status")
			}
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.WS.Write(ctx, websocket.MessageBinary, []byte(`{"action":"ping"}`)); err != nil {
		t.Fatal(err)
	}
	if ev := c.Expect("error")[0]; !strings.Contains(path(ev, "error", "message").(string), "binary frames") {
		t.Errorf("binary frame: %v", ev)
	}
	c.Send(`{"action":"ping","requestId":"p"}`)
	if ev := c.Expect("pong")[0]; ev["requestId"] != "p" || path(ev, "data", "timestamp") == nil {
		t.Errorf("pong: %v", ev)
	}
}

// A frame over 1 MiB ends that connection and no other.
func TestOversizedFrame(t *testing.T) {
	_, url := startServer(t, servertest.Config{Model: &agent.Scripted{}})
	big, other := dial(t, url), dial(t, url)
	big.Send(`{"action":"ping","requestId":"` + strings.Repeat("x", 1<<20) + `"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, _, err := big.WS.Read(ctx); err == nil {
		t.Error("the connection survived a 1 MiB frame")
	}
	other.Send(`{"action":"ping","requestId":"p"}`)
	other.Expect("pong")
}

// A client that never reads loses its connection once its queue is full;
// other connections go on.
func TestClientThatStopsReading(t *testing.T) {
	sink := &syncbuf.Buffer{}
	_, url := startServer(t, servertest.Config{Model: &agent.Scripted{}, FrameRate: -1, ClientFrameRate: -1, Logger: slog.New(slog.NewTextHandler(sink, nil))})
	slow, other := dial(t, url), dial(t, url)
	ping := []byte(`{"action":"ping","requestId":"` + strings.Repeat("p", 256) + `"}`) // the longest echoed
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Ping without reading until the server logs that the queue is full, and
	// read then: the server waits only seconds for a client to take its
	// close frame. The cap is several times what the queue and the socket
	// buffers hold.
	// The server closes it for one of two reasons, each logged: its queue
	// is full, or, on a loaded machine, a write waited past its timeout.
	closedBySlowness := func() bool { return strings.Contains(sink.String(), "client is not reading") }
	// loggedWhy waits for that line, which the server may write just after
	// the close that the client saw.
	loggedWhy := func() bool {
		for !closedBySlowness() {
			select {
			case <-ctx.Done():
				return false
			case <-time.After(10 * time.Millisecond):
			}
		}
		return true
	}
	sent := 0
	for ; sent < 100_000 && !closedBySlowness(); sent++ {
		if err := slow.WS.Write(ctx, websocket.MessageText, ping); err != nil {
			// The server closed the socket with our pings still unread in
			// its buffer, so the kernel reset it: fine, if that is why.
			if !loggedWhy() {
				t.Fatalf("ping %d: %v", sent, err)
			}
			break
		}
	}
	other.Send(`{"action":"ping","requestId":"p"}`)
	other.Expect("pong")
	for got := 0; got < sent; got++ {
		if _, _, err := slow.WS.Read(ctx); err != nil {
			// The close frame (1008), or under load the reset that beat it.
			if websocket.CloseStatus(err) != websocket.StatusPolicyViolation && !loggedWhy() {
				t.Fatalf("after %d of %d pongs: %v, want the server's close for a client that does not read", got, sent, err)
			}
			return
		}
	}
	t.Fatalf("all %d pongs arrived: the server never closed a client that did not read", sent)
}

func create(c *client, supports string) string {
	c.T.Helper()
	extra := ""
	if supports != "" {
		extra = `,"supports":` + supports
	}
	c.Send(`{"action":"create_conversation_session","requestId":"r-create","agentId":"a"` + extra + `}`)
	return path(c.Expect("immediate_response")[0], "data", "sessionId").(string)
}

const raiseChoices = `{"questions":[{"question":"Which plan?","header":"Plan","options":["Basic","Pro"]}],"reason":"to quote"}`

// Cancel while parked: cancelled and nothing else; the park is gone; the
// next turn gets the next script entry.
func TestCancelWhileParked(t *testing.T) {
	script, _ := agent.NewScripted([]agent.ScriptEntry{
		{Kind: "toolCall", Name: "request_choices", Arguments: raiseChoices},
		{Kind: "text", Text: "second"},
	})
	_, url := startServer(t, servertest.Config{Model: script})
	c := dial(t, url)
	sid := create(c, `["choice_chips"]`)
	c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"hi"}`)
	iid := path(c.Expect("immediate_response", "interaction_required", "stream_chunk")[1], "data", "data", "interactionId").(string)
	c.Send(`{"action":"send_message","requestId":"T2","sessionId":"` + sid + `","message":"again"}`)
	if ev := c.Expect("error")[0]; errorCode(ev) != "TURN_IN_PROGRESS" || ev["requestId"] != "T2" {
		t.Errorf("send while parked: %v", ev)
	}
	c.Send(`{"action":"cancel","requestId":"other"}`)
	if ev := c.Expect("cancelled")[0]; ev["requestId"] != "T" || path(ev, "data", "status") != float64(499) {
		t.Errorf("cancelled: %v", ev)
	}
	c.Send(`{"action":"submit_interaction","requestId":"T","sessionId":"` + sid + `","interactionId":"` + iid + `","values":{"answers":[{"header":"Plan","options":["Pro"]}]}}`)
	// The reference's code, its message, and then what became of the card.
	if ev := c.Expect("error")[0]; errorCode(ev) != "NO_PENDING_INTERACTION" ||
		!strings.HasPrefix(errorMessage(ev), "no interaction is awaiting submission for session '"+sid+"': this card was stopped at ") {
		t.Errorf("submit after cancel: %v", ev)
	}
	c.Send(`{"action":"send_message","requestId":"T3","sessionId":"` + sid + `","message":"again"}`)
	c.Expect("immediate_response")
	tok := c.Expect("stream_token")[0]
	if tok["requestId"] != "T3" {
		t.Errorf("token of %v", tok["requestId"])
	}
}

// A park whose deadline passes resolves no_response and the turn finishes
// and is stored. The clock is fake: the deadline passes when the test says.
func TestParkDeadline(t *testing.T) {
	script, _ := agent.NewScripted([]agent.ScriptEntry{
		{Kind: "toolCall", Name: "request_choices", Arguments: raiseChoices},
		{Kind: "text", Text: "moving on"},
	})
	clock := clockwork.NewFakeClock()
	_, url := startServer(t, servertest.Config{Model: script, ParkTimeout: time.Hour, Clock: clock})
	c := dial(t, url)
	sid := create(c, `["choice_chips"]`)
	c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"hi"}`)
	c.Expect("immediate_response", "interaction_required", "stream_chunk")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := clock.BlockUntilContext(ctx, 1); err != nil { // the engine's ticker
		t.Fatal(err)
	}
	clock.Advance(time.Hour + time.Second)
	ev := c.Expect("stream_chunk")[0]
	result, _ := path(ev, "data", "state", "rawResponse", "toolResult", "result").(string)
	if !strings.Contains(result, `"status":"no_response"`) {
		t.Errorf("result after the deadline: %q", result)
	}
	c.Expect("stream_token")
	for ev := c.Next(); ev["type"] != "eventual_response"; ev = c.Next() {
		if ev["type"] != "stream_token" {
			t.Fatalf("got %v", ev)
		}
	}
	c.Send(`{"action":"get_conversation_messages","requestId":"h","sessionId":"` + sid + `"}`)
	msgs := path(c.Expect("immediate_response")[0], "data", "messages").([]any)
	if len(msgs) != 2 || path(msgs[0], "content", "text") != "moving on" || path(msgs[1], "direction") != "inbound" {
		t.Errorf("history: %v", msgs)
	}
}

// Shutdown resolves a parked turn no_response, flushes the rest of the
// turn and closes with 1001.
func TestDrainWhileParked(t *testing.T) {
	script, _ := agent.NewScripted([]agent.ScriptEntry{
		{Kind: "toolCall", Name: "request_choices", Arguments: raiseChoices},
		{Kind: "text", Text: "bye"},
	})
	srv, url := startServer(t, servertest.Config{Model: script})
	c := dial(t, url)
	sid := create(c, `["choice_chips"]`)
	c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"hi"}`)
	c.Expect("immediate_response", "interaction_required", "stream_chunk")
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		done <- srv.Shutdown(ctx)
	}()
	c.Expect("stream_chunk", "stream_token")
	for ev := c.Next(); ev["type"] != "eventual_response"; ev = c.Next() {
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _, err := c.WS.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Errorf("close: %v, want 1001", err)
	}
	if err := <-done; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}

// gateModel raises a card once release is closed, then answers.
type gateModel struct {
	started chan struct{}
	release chan struct{}
}

func (g *gateModel) Respond(ctx context.Context, req agent.ModelRequest, onText func(string)) (agent.ModelResponse, error) {
	if req.Position == 0 {
		g.started <- struct{}{}
		select {
		case <-g.release:
		case <-ctx.Done():
			return agent.ModelResponse{}, ctx.Err()
		}
		return agent.ModelResponse{Position: 1, ToolCalls: []store.ToolCall{{ID: "c1", Name: "request_choices", Arguments: raiseChoices}}}, nil
	}
	onText("done")
	return agent.ModelResponse{Position: 2, Text: "done"}, nil
}

// A turn that parks while the server drains (memory store) cannot wait for
// anyone: its card resolves no_response at once and the turn finishes
// before the socket closes. The drain has begun when a card parked before
// it resolves (Engine.Drain marks itself draining, then resolves the held
// parks), so the other turn's model is released only then: a sleep to let
// the drain begin was too short under load, and that card parked first.
func TestDrainWhileTurnParks(t *testing.T) {
	g := &gateModel{started: make(chan struct{}, 1), release: make(chan struct{})}
	srv, url := startServer(t, servertest.Config{Model: g})
	before := dial(t, url)
	sidBefore := create(before, `["choice_chips"]`)
	before.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sidBefore + `","message":"hi"}`)
	before.Expect("immediate_response")
	<-g.started
	g.release <- struct{}{} // before's turn alone parks now
	before.Expect("interaction_required", "stream_chunk")

	c := dial(t, url)
	sid := create(c, `["choice_chips"]`)
	c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"hi"}`)
	c.Expect("immediate_response")
	<-g.started
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done <- srv.Shutdown(ctx)
	}()
	if result := toolResult(before.Expect("stream_chunk")[0]); !strings.Contains(result, `"status":"no_response"`) {
		t.Fatalf("the card parked before the drain resolved with %s", result)
	}
	close(g.release)
	c.Expect("stream_chunk")
	if result := toolResult(c.Expect("stream_chunk")[0]); !strings.Contains(result, `"status":"no_response"`) {
		t.Errorf("result while draining: %s", result)
	}
	for name, c := range map[string]*client{"the turn that parked before": before, "the turn that parked while draining": c} {
		if text, end := c.Turn(); end["type"] != "eventual_response" || text != "done" {
			t.Errorf("%s ended with %v, %q", name, end, text)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if _, _, err := c.WS.Read(ctx); websocket.CloseStatus(err) != websocket.StatusGoingAway {
			t.Errorf("%s: close: %v, want 1001", name, err)
		}
		cancel()
	}
	if err := <-done; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}

// toolResult is a stream_chunk's tool result.
func toolResult(chunk map[string]any) string {
	result, _ := path(chunk, "data", "state", "rawResponse", "toolResult", "result").(string)
	return result
}

// Clients that vanish while their turns run do not hold the drain up.
func TestDrainWhenClientsVanish(t *testing.T) {
	g := &gateModel{started: make(chan struct{}, 8), release: make(chan struct{})}
	srv, url := startServer(t, servertest.Config{Model: g})
	for range 5 {
		c := dial(t, url)
		sid := create(c, `["choice_chips"]`)
		c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"hi"}`)
		c.Expect("immediate_response")
		<-g.started
		c.WS.CloseNow()
	}
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done <- srv.Shutdown(ctx)
	}()
	time.Sleep(50 * time.Millisecond)
	close(g.release)
	if err := <-done; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}

// gateStore holds the first PendingPark or StartTurn after arm until
// release: the reader is then inside a send_message.
type gateStore struct {
	store.Store
	armed   atomic.Bool
	inside  chan struct{}
	release chan struct{}
}

func (g *gateStore) gate() {
	if g.armed.CompareAndSwap(true, false) {
		close(g.inside)
		<-g.release
	}
}

func (g *gateStore) PendingPark(ctx context.Context, conv string) (*store.Park, error) {
	g.gate()
	return g.Store.PendingPark(ctx, conv)
}

func (g *gateStore) StartTurn(ctx context.Context, m *store.Message, t *store.Park, first *store.Conversation, waiting store.Waiting) ([]*store.Park, bool, error) {
	g.gate()
	return g.Store.StartTurn(ctx, m, t, first, waiting)
}

// A send_message read just before the drain is in flight: the drain waits
// for it, and for its turn's terminal event, before it closes with 1001.
func TestDrainWaitsForFrameInFlight(t *testing.T) {
	st := &gateStore{Store: memstore.New(), inside: make(chan struct{}), release: make(chan struct{})}
	srv, url := startServer(t, servertest.Config{Model: demo.Model{}, Store: st})
	c := dial(t, url)
	sid := create(c, "")
	st.armed.Store(true)
	c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"hi"}`)
	<-st.inside
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done <- srv.Shutdown(ctx)
	}()
	type read struct {
		data []byte
		err  error
	}
	reads := make(chan read, 64)
	go func() {
		for {
			_, data, err := c.WS.Read(context.Background())
			reads <- read{data, err}
			if err != nil {
				return
			}
		}
	}()
	select { // a drain that does not wait closes the socket now
	case r := <-reads:
		t.Fatalf("while the frame was in flight: %s, %v", r.data, r.err)
	case <-time.After(100 * time.Millisecond):
	}
	close(st.release)
	var types []string
	for r := range reads {
		if r.err != nil {
			if websocket.CloseStatus(r.err) != websocket.StatusGoingAway {
				t.Errorf("close: %v, want 1001", r.err)
			}
			break
		}
		var ev struct{ Type string }
		json.Unmarshal(r.data, &ev)
		types = append(types, ev.Type)
	}
	if len(types) < 2 || types[0] != "immediate_response" || types[len(types)-1] != "eventual_response" {
		t.Errorf("events before the close: %v, want the 202 first and eventual_response last", types)
	}
	if err := <-done; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}

// parkReads counts the store's reads of pending parks.
type parkReads struct {
	store.Store
	n atomic.Int32
}

func (r *parkReads) PendingPark(ctx context.Context, conv string) (*store.Park, error) {
	r.n.Add(1)
	return r.Store.PendingPark(ctx, conv)
}

// A submit to the card this connection's turn waits on reads no park; when
// that card was replaced meanwhile (by another process: here straight in
// the store), the submit hears what the store holds.
func TestSubmitHeldPark(t *testing.T) {
	script, _ := agent.NewScripted([]agent.ScriptEntry{
		{Kind: "toolCall", Name: "request_choices", Arguments: raiseChoices},
		{Kind: "text", Text: "Pro it is."},
		{Kind: "toolCall", Name: "request_choices", Arguments: raiseChoices},
	})
	st := &parkReads{Store: memstore.New()}
	_, url := startServer(t, servertest.Config{Model: script, Store: st})
	c := dial(t, url)
	sid := create(c, `["choice_chips"]`)
	submit := func(iid string) {
		c.Send(`{"action":"submit_interaction","requestId":"S","sessionId":"` + sid + `","interactionId":"` + iid + `","values":{"answers":[{"header":"Plan","options":["Pro"]}]}}`)
	}

	c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"hi"}`)
	iid := path(c.Expect("immediate_response", "interaction_required", "stream_chunk")[1], "data", "data", "interactionId").(string)
	reads := st.n.Load()
	submit(iid)
	if ev := c.Expect("immediate_response")[0]; ev["status"] != float64(200) {
		t.Fatalf("submit: %v", ev)
	}
	if _, end := c.Turn(); end["type"] != "eventual_response" {
		t.Fatalf("turn ended with %v", end)
	}
	if got := st.n.Load() - reads; got != 0 {
		t.Errorf("the submit read the pending park %d times, want none", got)
	}

	c.Send(`{"action":"send_message","requestId":"T2","sessionId":"` + sid + `","message":"again"}`)
	c.Expect("immediate_response", "interaction_required", "stream_chunk")
	sess, err := st.Session(context.Background(), sid)
	if err != nil {
		t.Fatal(err)
	}
	p, err := st.Store.PendingPark(context.Background(), sess.ConversationID)
	if err != nil {
		t.Fatal(err)
	}
	newer := *p
	newer.ID = "newer"
	if _, err := st.Store.SavePark(context.Background(), &newer, nil); err != nil {
		t.Fatal(err)
	}
	submit(p.ID)
	if ev := c.Expect("error")[0]; errorCode(ev) != "INTERACTION_MISMATCH" {
		t.Errorf("submit to the replaced card: %v, want INTERACTION_MISMATCH", ev)
	}
}

// Capabilities declared anew while a card waits (here by the card's own
// socket, whose turn is parked, so the card is not shown again) reach the
// resumed turn: its next card goes the conversational way.
func TestCapabilitiesDeclaredWhileParked(t *testing.T) {
	_, url := startServer(t, servertest.Config{Model: raiseTwice()})
	c := dial(t, url)
	sid, conv, iid := parkChoices(c)
	c.Send(`{"action":"create_conversation_session","requestId":"r2","agentId":"a","conversationId":"` + conv + `","supports":[]}`)
	c.Expect("immediate_response")
	submitPlan(c, sid, iid)
	c.Expect("immediate_response")
	wantConversationalRaise(t, c)
}

// raiseTwice raises a choices card, then another, then answers.
func raiseTwice() agent.Model {
	m, _ := agent.NewScripted([]agent.ScriptEntry{
		{Kind: "toolCall", Name: "request_choices", Arguments: raiseChoices},
		{Kind: "toolCall", Name: "request_choices", Arguments: raiseChoices},
		{Kind: "text", Text: "done"},
	})
	return m
}

// parkChoices starts a conversation that declares choice_chips and a turn
// that parks on a card, and returns the session, the conversation and the
// card's id.
func parkChoices(c *client) (sid, conv, iid string) {
	c.T.Helper()
	c.Send(`{"action":"create_conversation_session","requestId":"r1","agentId":"a","supports":["choice_chips"]}`)
	ack := c.Expect("immediate_response")[0]
	sid, conv = path(ack, "data", "sessionId").(string), path(ack, "data", "conversationId").(string)
	c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"hi"}`)
	iid = path(c.Expect("immediate_response", "interaction_required", "stream_chunk")[1], "data", "data", "interactionId").(string)
	return sid, conv, iid
}

// wantConversationalRaise reads the rest of a resumed turn whose next raise
// must go the conversational way: no card, a fallback directive.
func wantConversationalRaise(t *testing.T, c *client) {
	t.Helper()
	fallback := false
	for ev := c.Next(); ev["type"] != "eventual_response"; ev = c.Next() {
		if ev["type"] == "interaction_required" {
			t.Fatalf("the resumed turn raised a card its conversation no longer declares: %v", ev)
		}
		if r, _ := path(ev, "data", "state", "rawResponse", "toolResult", "result").(string); strings.Contains(r, `"mode":"conversational"`) {
			fallback = true
		}
	}
	if !fallback {
		t.Error("the second raise did not go the conversational way")
	}
}
