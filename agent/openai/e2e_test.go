package openai_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kindkit/kindkit/agent/openai"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/internal/wstest"
)

// startKindkit runs a kindkit server over the fake chat server and returns
// its WebSocket URL.
func startKindkit(t *testing.T, fake *openai.FakeServer) string {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	model, err := openai.New(openai.Config{BaseURL: fake.URL, Model: "fake-model", APIKey: "sk-e2e",
		MaxRetries: 2, HTTPClient: openai.NewTestClient(t), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	openai.SetMaxRetryDelay(model, 5*time.Millisecond)
	return servertest.Start(t, servertest.Config{Model: model, Logger: quiet}, nil).WS()
}

func createSession(c *wstest.Client) string {
	c.Send(`{"action":"create_conversation_session","requestId":"r1","agentId":"a","supports":["choice_chips"]}`)
	return wstest.Path(c.Expect("immediate_response")[0], "data", "sessionId").(string)
}

func TestEndToEndChoicesCard(t *testing.T) {
	args := `{"questions":[{"question":"Which plan fits best?","header":"Plan","options":[{"label":"Starter"},{"label":"Team"}]}],"reason":"to tailor the answer"}`
	fake := openai.NewFakeServer(t,
		openai.Stream(openai.RoleChunk(),
			openai.ToolChunk(0, "call_e2e", "request_choices", ""),
			openai.ToolChunk(0, "", "", args[:30]),
			openai.ToolChunk(0, "", "", args[30:90]),
			openai.ToolChunk(0, "", "", args[90:]),
			openai.FinishChunk("tool_calls"), openai.UsageChunk(30, 5)),
		openai.Stream(openai.RoleChunk(), openai.TextChunk("Team "), openai.TextChunk("it is."),
			openai.FinishChunk("stop"), openai.UsageChunk(50, 4)),
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
	var second struct {
		Messages []struct {
			Role       string `json:"role"`
			Content    any    `json:"content"`
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct{ Name, Arguments string }
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Function struct{ Name string } `json:"function"`
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
	call, last := msgs[len(msgs)-2], msgs[len(msgs)-1]
	if call.Role != "assistant" || len(call.ToolCalls) != 1 || call.ToolCalls[0].ID != "call_e2e" || call.ToolCalls[0].Function.Arguments != args {
		t.Errorf("the assistant's tool call was not sent back: %+v", call)
	}
	content, _ := last.Content.(string)
	if last.Role != "tool" || last.ToolCallID != "call_e2e" || !strings.Contains(content, `"status":"submitted"`) {
		t.Errorf("last message = %+v, want the submitted tool result", last)
	}
	var names []string
	for _, tool := range second.Tools {
		names = append(names, tool.Function.Name)
	}
	if !strings.Contains(strings.Join(names, ","), "request_choices") {
		t.Errorf("tools offered = %v", names)
	}
}

func TestEndToEndModelFailure(t *testing.T) {
	fake := openai.NewFakeServer(t, openai.Status(500, `{"error":{"message":"boom","type":"server_error"}}`))
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
