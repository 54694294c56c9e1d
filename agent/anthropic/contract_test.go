package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/agent/modeltest"
	"github.com/kindkit/kindkit/store"
)

func TestContract(t *testing.T) { modeltest.Run(t, harness) }

func FuzzStream(f *testing.F) { modeltest.FuzzStream(f, harness) }

// harness is this adapter for the model contract suite, over a fake that
// speaks the Messages API's streaming wire format.
var harness = modeltest.Harness{
	Provider: "anthropic",
	Path:     "/v1/messages",
	New: func(t testing.TB, url string, cfg modeltest.Config) agent.Model {
		m, err := New(Config{BaseURL: url, Model: cfg.Model, APIKey: cfg.APIKey, System: cfg.System,
			MaxRetries: cfg.MaxRetries, HTTPClient: cfg.HTTPClient, Logger: cfg.Logger})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.MaxRetryDelay > 0 {
			m.maxDelay = cfg.MaxRetryDelay
		}
		return m
	},
	Frames:    frames,
	ErrorBody: func(status int, message string) string { return APIError(errorType(status), message) },
	Read:      readRequest,
	Status: func(err error) (int, bool) {
		var e *Error
		if errors.As(err, &e) {
			return e.Status, true
		}
		return 0, false
	},
	ErrorFlag: true,
}

// frames is r as the Messages API streams it: a text block, then a
// tool_use block per call, pings between.
func frames(r modeltest.Reply) []string {
	evs := []string{MessageStart(r.Usage.PromptTokens), Ping()}
	index := 0
	if len(r.Text) > 0 {
		evs = append(evs, TextStart(index))
		for _, p := range r.Text {
			evs = append(evs, TextDelta(index, p))
		}
		evs = append(evs, BlockStop(index))
		index++
	}
	for _, c := range r.Calls {
		evs = append(evs, ToolStart(index, c.ID, c.Name))
		for _, p := range c.Args {
			evs = append(evs, InputDelta(index, p), Ping())
		}
		evs = append(evs, BlockStop(index))
		index++
	}
	switch r.End {
	case modeltest.Finish:
		stop := "end_turn"
		if len(r.Calls) > 0 {
			stop = "tool_use"
		}
		evs = append(evs, MessageDelta(stop, r.Usage.CompletionTokens), MessageStop())
	case modeltest.Truncated:
		evs = append(evs, MessageStop()) // without a message_delta's stop_reason
	case modeltest.Malformed:
		evs = append(evs, event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_de`))
	case modeltest.ErrorEvent:
		evs = append(evs, ErrorEvent("overloaded_error", r.Error))
	}
	return evs
}

// errorType is the API's error type of an HTTP status.
func errorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}

// wireBlock is a content block of a request.
type wireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   []wireBlock     `json:"content"`
	IsError   bool            `json:"is_error"`
}

// readRequest reads a Messages API request, and checks what the API
// requires of one: user and assistant messages alternate from a user
// message, and every tool_use is answered by a tool_result in the user
// message right after it, and only there.
func readRequest(t *testing.T, body []byte) modeltest.Request {
	t.Helper()
	var w struct {
		Model     string      `json:"model"`
		MaxTokens int         `json:"max_tokens"`
		Stream    bool        `json:"stream"`
		System    []wireBlock `json:"system"`
		Messages  []struct {
			Role    string      `json:"role"`
			Content []wireBlock `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		t.Fatalf("request: %v: %s", err, body)
	}
	if w.MaxTokens <= 0 {
		t.Errorf("request without max_tokens: %s", body)
	}
	req := modeltest.Request{Model: w.Model, Stream: w.Stream}
	for _, b := range w.System {
		if b.Type != "text" {
			t.Errorf("a %s block in system", b.Type)
		}
		req.System = append(req.System, b.Text)
	}
	var open map[string]bool // the tool_use ids the previous assistant message left unanswered
	for i, m := range w.Messages {
		if want := []string{"user", "assistant"}[i%2]; m.Role != want {
			t.Errorf("message %d is the %s's, want the %s's: the roles must alternate from the user's", i, m.Role, want)
		}
		if len(m.Content) == 0 {
			t.Errorf("message %d has no content", i)
		}
		switch m.Role {
		case "assistant":
			msg := modeltest.Message{Role: store.RoleAssistant}
			open = map[string]bool{}
			for _, b := range m.Content {
				switch b.Type {
				case "text":
					msg.Text += b.Text
				case "tool_use":
					var input map[string]any
					if json.Unmarshal(b.Input, &input) != nil || input == nil {
						t.Errorf("message %d: tool_use %s's input %s is not an object", i, b.ID, b.Input)
					}
					open[b.ID] = true
					msg.ToolCalls = append(msg.ToolCalls, store.ToolCall{ID: b.ID, Name: b.Name, Arguments: string(b.Input)})
				default:
					t.Errorf("message %d: a %s block in an assistant message", i, b.Type)
				}
			}
			req.Messages = append(req.Messages, msg)
		case "user":
			for _, b := range m.Content {
				switch b.Type {
				case "text":
					if b.Text == "" {
						t.Errorf("message %d: an empty text block", i)
					}
					req.Messages = append(req.Messages, modeltest.Message{Role: store.RoleUser, Text: b.Text})
				case "tool_result":
					if !open[b.ToolUseID] {
						t.Errorf("message %d: a tool_result for %q, which the message before did not call (or answered already)", i, b.ToolUseID)
					}
					delete(open, b.ToolUseID)
					var text strings.Builder
					for _, c := range b.Content {
						if c.Type != "text" {
							t.Errorf("message %d: a %s block in a tool_result", i, c.Type)
						}
						text.WriteString(c.Text)
					}
					req.Messages = append(req.Messages, modeltest.Message{Role: store.RoleTool, Text: text.String(),
						ToolCallID: b.ToolUseID, IsError: b.IsError})
				default:
					t.Errorf("message %d: a %s block in a user message", i, b.Type)
				}
			}
			if len(open) > 0 {
				t.Errorf("message %d does not answer the tool_use blocks %v of the message before", i, open)
			}
			open = nil
		}
	}
	for _, tool := range w.Tools {
		if !bytes.HasPrefix(bytes.TrimSpace(tool.InputSchema), []byte("{")) {
			t.Errorf("tool %s: input_schema %s is not an object", tool.Name, tool.InputSchema)
		}
		req.Tools = append(req.Tools, agent.Tool{Name: tool.Name, Description: tool.Description, Parameters: tool.InputSchema})
	}
	return req
}
