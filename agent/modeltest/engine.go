package modeltest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/internal/wstest"
	"github.com/kindkit/kindkit/store"
)

// The suite's engine tests run the adapter as a program does: in a real
// engine, behind the WebSocket server, driven by a client over a real
// socket.

// startKindkit serves a kindkit engine over h's adapter, which calls url
// and retries twice, and connects a client to it; cfg's Model and Logger
// are set here.
func (h Harness) startKindkit(t *testing.T, url string, cfg servertest.Config) (*wstest.Client, *servertest.Server) {
	t.Helper()
	cfg.Model = h.New(t, url, Config{Model: modelName, APIKey: testKey, MaxRetries: 2, MaxRetryDelay: 5 * time.Millisecond,
		HTTPClient: Client(t), Logger: quiet})
	cfg.Logger = quiet
	srv := servertest.Start(t, cfg, nil)
	return wstest.Dial(t, srv.WS()), srv
}

// openSession opens a session that shows choice cards, and returns its id.
func openSession(c *wstest.Client) string {
	c.Send(`{"action":"create_conversation_session","requestId":"r1","agentId":"a","supports":["choice_chips"]}`)
	return wstest.Path(c.Expect("immediate_response")[0], "data", "sessionId").(string)
}

// The model raises a card; the person's answer goes back to the model
// paired with the call, and the turn ends with the model's text and the
// usage of both calls.
func testEngineCard(t *testing.T, h Harness) {
	args := `{"questions":[{"question":"Which plan fits best?","header":"Plan","options":[{"label":"Starter"},{"label":"Team"}]}],"reason":"to tailor the answer"}`
	s := h.server(t,
		Reply{Calls: []Call{{ID: "call_e2e", Name: "request_choices", Args: []string{args[:30], args[30:90], args[90:]}}},
			Usage: store.Usage{PromptTokens: 30, CompletionTokens: 5}},
		Reply{Text: []string{"Team ", "it is."}, Usage: store.Usage{PromptTokens: 50, CompletionTokens: 4}},
	)
	c, _ := h.startKindkit(t, s.URL, servertest.Config{})
	sid := openSession(c)

	c.Send(`{"action":"send_message","requestId":"r2","sessionId":"` + sid + `","message":"I'd like a quote"}`)
	evs := c.Expect("immediate_response", "interaction_required", "stream_chunk")
	card := wstest.Path(evs[1], "data", "data")
	questions, _ := wstest.Path(card, "spec", "questions").([]any)
	if len(questions) != 1 || wstest.Path(questions[0], "header") != "Plan" || wstest.Path(card, "kind") != "choices" ||
		wstest.Path(card, "reason") != "to tailor the answer" {
		t.Fatalf("card = %v", card)
	}
	iid := wstest.Path(card, "interactionId").(string)
	c.Send(`{"action":"submit_interaction","requestId":"r3","sessionId":"` + sid + `","interactionId":"` + iid + `","values":{"answers":[{"header":"Plan","options":["Team"]}]}}`)
	c.Expect("immediate_response")
	text, terminal := c.Turn()
	if terminal["type"] != "eventual_response" || text != "Team it is." {
		t.Fatalf("turn ended with %v after text %q", terminal, text)
	}
	if got := wstest.Path(terminal, "data", "data", "usage", "promptTokens"); got != float64(80) {
		t.Errorf("usage promptTokens = %v, want 30+50", got)
	}

	if s.Count() != 2 {
		t.Fatalf("%d model calls, want 2", s.Count())
	}
	sent := h.sent(t, s, 1)
	if n := len(sent.Messages); n < 3 || sent.Messages[n-2].Role != store.RoleAssistant || sent.Messages[n-1].Role != store.RoleTool {
		t.Fatalf("second request's messages = %+v, want the call and its result last", sent.Messages)
	}
	result := sent.Messages[len(sent.Messages)-1]
	if !strings.Contains(result.Text, `"status":"submitted"`) || !strings.Contains(result.Text, `"Team"`) {
		t.Errorf("the card's result = %q, want the submitted answer", result.Text)
	}
	h.checkAnswered(t, sent, []store.ToolCall{{ID: "call_e2e", Name: "request_choices", Arguments: args}},
		map[string]*store.Message{"call_e2e": {Text: result.Text}})
	offered := false
	for _, tool := range sent.Tools {
		if tool.Name == "request_choices" {
			offered = json.Valid(tool.Parameters) && strings.Contains(string(tool.Parameters), `"type"`)
		}
	}
	if !offered {
		t.Errorf("request_choices not offered with a schema: %+v", sent.Tools)
	}
}

// orderArgs are the host tools' arguments.
type orderArgs struct {
	Order string `json:"order"`
}

// Several host tool calls of one model step all reach the engine, which
// runs each; each result, a failure's message among them, goes back to the
// model in the next request, paired with its call.
func testEngineHostTools(t *testing.T, h Harness) {
	var mu sync.Mutex
	var ran []string
	lookup, err := agent.NewTool("lookup_order", "Looks an order up.", func(ctx context.Context, a orderArgs) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		ran = append(ran, "lookup "+a.Order)
		return a.Order + ": shipped", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cancelOrder, err := agent.NewTool("cancel_order", "Cancels an order.", func(ctx context.Context, a orderArgs) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		ran = append(ran, "cancel "+a.Order)
		return nil, errors.New("order " + a.Order + " has shipped; it cannot be cancelled")
	})
	if err != nil {
		t.Fatal(err)
	}
	calls := []store.ToolCall{
		{ID: "call_a", Name: "lookup_order", Arguments: `{"order":"A-1"}`},
		{ID: "call_b", Name: "cancel_order", Arguments: `{"order":"A-1"}`},
		{ID: "call_c", Name: "lookup_order", Arguments: `{"order":"B-2"}`},
	}
	step := Reply{Text: []string{"Checking."}}
	for _, c := range calls {
		step.Calls = append(step.Calls, Call{ID: c.ID, Name: c.Name, Args: []string{c.Arguments}})
	}
	s := h.server(t, step, Reply{Text: []string{" A-1 has shipped and cannot be cancelled."}})
	c, _ := h.startKindkit(t, s.URL, servertest.Config{Tools: []agent.HostTool{lookup, cancelOrder}})
	sid := openSession(c)
	c.Send(`{"action":"send_message","requestId":"r2","sessionId":"` + sid + `","message":"cancel A-1, and where is B-2?"}`)
	c.Expect("immediate_response")
	text, terminal := c.Turn()
	if terminal["type"] != "eventual_response" || text != "Checking. A-1 has shipped and cannot be cancelled." {
		t.Fatalf("turn ended with %v after text %q", terminal, text)
	}
	mu.Lock()
	if want := []string{"lookup A-1", "cancel A-1", "lookup B-2"}; strings.Join(ran, ",") != strings.Join(want, ",") {
		t.Errorf("tools ran %q, want %q", ran, want)
	}
	mu.Unlock()
	if s.Count() != 2 {
		t.Fatalf("%d model calls, want 2", s.Count())
	}
	sent := h.sent(t, s, 1)
	var failure string
	for _, m := range sent.Messages {
		if m.ToolCallID == "call_b" {
			failure = m.Text
		}
	}
	if !strings.Contains(failure, "order A-1 has shipped; it cannot be cancelled") {
		t.Errorf("the failed call's result = %q, want the tool's message", failure)
	}
	h.checkAnswered(t, sent, calls, map[string]*store.Message{
		"call_a": {Text: "A-1: shipped"},
		"call_b": {Text: failure, IsError: true},
		"call_c": {Text: "B-2: shipped"},
	})
}

// A person's decisions on a tool call reach the model: a rejection as an
// error result carrying their reason, a respond decision as the call's
// result in their words, each paired with its call.
func testEngineDecisions(t *testing.T, h Harness) {
	var mu sync.Mutex
	refunded := 0
	refund, err := agent.NewTool("send_refund", "Refunds an order.", func(ctx context.Context, a orderArgs) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		refunded++
		return "refunded", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	first := store.ToolCall{ID: "call_r1", Name: "send_refund", Arguments: `{"order":"A-1"}`}
	second := store.ToolCall{ID: "call_r2", Name: "send_refund", Arguments: `{"order":"B-2"}`}
	s := h.server(t,
		Reply{Calls: []Call{{ID: first.ID, Name: first.Name, Args: []string{first.Arguments}}}},
		Reply{Calls: []Call{{ID: second.ID, Name: second.Name, Args: []string{second.Arguments}}}},
		Reply{Text: []string{"Understood."}},
	)
	c, srv := h.startKindkit(t, s.URL, servertest.Config{Tools: []agent.HostTool{refund},
		Confirm: agent.ConfirmMatching(agent.Approve|agent.Reject|agent.Respond, "send_refund")})
	sid := openSession(c)
	ctx := t.Context()
	sess, err := srv.Engine.Store().Session(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	// decide waits for the confirmation the client is shown, and makes d
	// on it, as another tab would.
	decide := func(d agent.Decided) {
		t.Helper()
		for ev := c.Next(); ev["type"] != "write_confirmation_required"; ev = c.Next() {
			if ev["type"] != "stream_chunk" && ev["type"] != "stream_token" {
				t.Fatalf("got %v, want a write confirmation", ev)
			}
		}
		p, err := srv.Engine.Store().PendingPark(ctx, sess.ConversationID)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := srv.Engine.Decide(ctx, sess, p.ID, d, nil); !ok || err != nil {
			t.Fatalf("Decide(%v) = %v, %v", d.Decision, ok, err)
		}
	}
	c.Send(`{"action":"send_message","requestId":"r2","sessionId":"` + sid + `","message":"refund A-1"}`)
	c.Expect("immediate_response")
	decide(agent.Decided{Decision: agent.Reject, Message: "wrong order, refund B-2"})
	decide(agent.Decided{Decision: agent.Respond, Message: "I refunded B-2 by hand."})
	text, terminal := c.Turn()
	if terminal["type"] != "eventual_response" || text != "Understood." {
		t.Fatalf("turn ended with %v after text %q", terminal, text)
	}
	mu.Lock()
	if refunded != 0 {
		t.Errorf("the tool ran %d times, want none", refunded)
	}
	mu.Unlock()
	if s.Count() != 3 {
		t.Fatalf("%d model calls, want 3", s.Count())
	}
	resultOf := func(req Request, id string) string {
		for _, m := range req.Messages {
			if m.ToolCallID == id {
				return m.Text
			}
		}
		return ""
	}
	sent := h.sent(t, s, 1)
	rejected := resultOf(sent, first.ID)
	if !strings.Contains(rejected, "wrong order, refund B-2") {
		t.Errorf("the rejected call's result = %q, want the person's reason", rejected)
	}
	h.checkAnswered(t, sent, []store.ToolCall{first}, map[string]*store.Message{first.ID: {Text: rejected, IsError: true}})
	sent = h.sent(t, s, 2)
	responded := resultOf(sent, second.ID)
	if !strings.Contains(responded, "I refunded B-2 by hand.") {
		t.Errorf("the responded call's result = %q, want the person's words", responded)
	}
	h.checkAnswered(t, sent, []store.ToolCall{first}, map[string]*store.Message{first.ID: {Text: rejected, IsError: true}})
	h.checkAnswered(t, sent, []store.ToolCall{second}, map[string]*store.Message{second.ID: {Text: responded}})
}

// A model that keeps failing ends the turn with INTERNAL_ERROR after its
// retries, and the server goes on.
func testEngineModelFailure(t *testing.T, h Harness) {
	s := h.server(t, Reply{Status: 500, Error: "boom"})
	c, _ := h.startKindkit(t, s.URL, servertest.Config{})
	sid := openSession(c)
	c.Send(`{"action":"send_message","requestId":"r2","sessionId":"` + sid + `","message":"hi"}`)
	c.Expect("immediate_response")
	text, terminal := c.Turn()
	if terminal["type"] != "error" || wstest.ErrorCode(terminal) != "INTERNAL_ERROR" || text != "" {
		t.Fatalf("turn ended with %v after text %q, want an INTERNAL_ERROR error", terminal, text)
	}
	if s.Count() != 3 {
		t.Errorf("%d model calls, want 1 + MaxRetries 2", s.Count())
	}
	c.Send(`{"action":"ping","requestId":"p"}`)
	if pong := c.Expect("pong")[0]; pong["requestId"] != "p" {
		t.Errorf("pong = %v", pong)
	}
}
