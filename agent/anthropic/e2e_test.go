package anthropic_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kindkit/kindkit/agent/anthropic"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/internal/wstest"
)

// startKindkit runs a kindkit server over the fake Messages API server and
// returns its WebSocket URL.
func startKindkit(t *testing.T, fake *anthropic.FakeServer) string {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	model, err := anthropic.New(anthropic.Config{BaseURL: fake.URL, Model: "fake-model", APIKey: "sk-ant-e2e",
		MaxRetries: 2, HTTPClient: anthropic.NewTestClient(t), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	anthropic.SetMaxRetryDelay(model, 5*time.Millisecond)
	return servertest.Start(t, servertest.Config{Model: model, Logger: quiet}, nil).WS()
}

func createSession(c *wstest.Client) string {
	c.Send(`{"action":"create_conversation_session","requestId":"r1","agentId":"a","supports":["choice_chips"]}`)
	return wstest.Path(c.Expect("immediate_response")[0], "data", "sessionId").(string)
}

func TestEndToEndChoicesCard(t *testing.T) {
	args := `{"questions":[{"question":"Which plan fits best?","header":"Plan","options":[{"label":"Starter"},{"label":"Team"}]}],"reason":"to tailor the answer"}`
	fake := anthropic.NewFakeServer(t,
		anthropic.Stream(anthropic.ToolMessage(30, 5, "toolu_e2e", "request_choices", args[:30], args[30:90], args[90:])...),
		anthropic.Stream(anthropic.TextMessage(50, 4, "Team ", "it is.")...),
	)
	c := wstest.Dial(t, startKindkit(t, fake))
	sid := createSession(c)

	c.Send(`{"action":"send_message","requestId":"r2","sessionId":"` + sid + `","message":"I'd like a quote"}`)
	evs := c.Expect("immediate_response", "interaction_required", "stream_chunk")
	if evs[0]["status"] != float64(202) {
		t.Errorf("send_message ack status = %v, want 202", evs[0]["status"])
	}
	card := wstest.Path(evs[1], "data", "data")
	questions, _ := wstest.Path(card, "spec", "questions").([]any)
	if len(questions) != 1 || wstest.Path(questions[0], "header") != "Plan" {
		t.Fatalf("interaction_required spec = %v", wstest.Path(card, "spec"))
	}
	if wstest.Path(card, "kind") != "choices" || wstest.Path(card, "reason") != "to tailor the answer" {
		t.Errorf("card = %v", card)
	}
	if wstest.Path(evs[2], "data", "state", "rawResponse", "toolCall", "name") != "request_choices" {
		t.Errorf("tool call chunk = %v", evs[2])
	}
	iid := wstest.Path(card, "interactionId").(string)

	c.Send(`{"action":"submit_interaction","requestId":"r2","sessionId":"` + sid + `","interactionId":"` + iid + `","values":{"answers":[{"header":"Plan","options":["Team"]}]}}`)
	evs = c.Expect("immediate_response", "stream_chunk")
	result, _ := wstest.Path(evs[1], "data", "state", "rawResponse", "toolResult", "result").(string)
	if !strings.Contains(result, `"status":"submitted"`) {
		t.Errorf("tool result chunk = %v", evs[1])
	}
	text, terminal := c.Turn()
	if terminal["type"] != "eventual_response" || text != "Team it is." {
		t.Fatalf("turn ended with %v after text %q", terminal, text)
	}
	if got := wstest.Path(terminal, "data", "data", "usage", "promptTokens"); got != float64(80) {
		t.Errorf("usage promptTokens = %v, want 30+50", got)
	}

	if fake.Count() != 2 {
		t.Fatalf("%d model calls, want 2", fake.Count())
	}
	type block struct {
		Type      string          `json:"type"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
		ToolUseID string          `json:"tool_use_id"`
		Content   []struct {
			Type, Text string
		} `json:"content"`
	}
	var second struct {
		Messages []struct {
			Role    string  `json:"role"`
			Content []block `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	raw, _ := json.Marshal(fake.Request(t, 1))
	if err := json.Unmarshal(raw, &second); err != nil {
		t.Fatal(err)
	}
	msgs := second.Messages
	if len(msgs) < 3 {
		t.Fatalf("second request messages = %s", raw)
	}
	for i := 1; i < len(msgs); i++ {
		if msgs[i].Role == msgs[i-1].Role {
			t.Errorf("messages %d and %d are both %s: %s", i-1, i, msgs[i].Role, raw)
		}
	}
	call, last := msgs[len(msgs)-2], msgs[len(msgs)-1]
	var use *block
	for i := range call.Content {
		if call.Content[i].Type == "tool_use" {
			use = &call.Content[i]
		}
	}
	if call.Role != "assistant" || use == nil || use.ID != "toolu_e2e" || use.Name != "request_choices" {
		t.Fatalf("the assistant's tool call was not sent back: %+v", call)
	}
	var gotInput, wantInput any
	json.Unmarshal(use.Input, &gotInput)
	json.Unmarshal([]byte(args), &wantInput)
	if !jsonEqual(gotInput, wantInput) {
		t.Errorf("tool_use input = %s, want %s", use.Input, args)
	}
	if last.Role != "user" || len(last.Content) != 1 || last.Content[0].Type != "tool_result" || last.Content[0].ToolUseID != "toolu_e2e" ||
		len(last.Content[0].Content) != 1 || !strings.Contains(last.Content[0].Content[0].Text, `"status":"submitted"`) {
		t.Errorf("last message = %+v, want the submitted tool result", last)
	}
	var names []string
	for _, tool := range second.Tools {
		names = append(names, tool.Name)
		if !json.Valid(tool.InputSchema) || !strings.Contains(string(tool.InputSchema), `"type"`) {
			t.Errorf("tool %s input_schema = %s", tool.Name, tool.InputSchema)
		}
	}
	if !strings.Contains(strings.Join(names, ","), "request_choices") {
		t.Errorf("tools offered = %v", names)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func TestEndToEndModelFailure(t *testing.T) {
	fake := anthropic.NewFakeServer(t, anthropic.Status(529, anthropic.APIError("overloaded_error", "Overloaded")))
	c := wstest.Dial(t, startKindkit(t, fake))
	sid := createSession(c)
	c.Send(`{"action":"send_message","requestId":"r2","sessionId":"` + sid + `","message":"hi"}`)
	c.Expect("immediate_response")
	text, terminal := c.Turn()
	if terminal["type"] != "error" || wstest.ErrorCode(terminal) != "INTERNAL_ERROR" || text != "" {
		t.Fatalf("turn ended with %v after text %q, want an INTERNAL_ERROR error", terminal, text)
	}
	if fake.Count() != 3 {
		t.Errorf("%d model calls, want 1 + MaxRetries 2", fake.Count())
	}
	c.Send(`{"action":"ping","requestId":"p"}`)
	if pong := c.Expect("pong")[0]; pong["requestId"] != "p" {
		t.Errorf("pong = %v", pong)
	}
}
