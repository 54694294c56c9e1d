package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/agent/modeltest"
	"github.com/kindkit/kindkit/store"
)

func TestContract(t *testing.T) { modeltest.Run(t, harness) }

func FuzzStream(f *testing.F) { modeltest.FuzzStream(f, harness) }

// harness is this adapter for the model contract suite, over a fake that
// speaks the chat-completions streaming wire format.
var harness = modeltest.Harness{
	Provider: "openai",
	Path:     "/v1/chat/completions",
	New: func(t testing.TB, url string, cfg modeltest.Config) agent.Model {
		m, err := New(Config{BaseURL: url + "/v1", Model: cfg.Model, APIKey: cfg.APIKey, System: cfg.System,
			MaxRetries: cfg.MaxRetries, HTTPClient: cfg.HTTPClient, Logger: cfg.Logger})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.MaxRetryDelay > 0 {
			m.maxDelay = cfg.MaxRetryDelay
		}
		return m
	},
	Frames: replyFrames,
	ErrorBody: func(status int, message string) string {
		return `{"error":{"message":` + quote(message) + `,"type":"server_error","param":null,"code":null}}`
	},
	Read: readRequest,
	Status: func(err error) (int, bool) {
		var e *Error
		if errors.As(err, &e) {
			return e.Status, true
		}
		return 0, false
	},
	// A tool message has no error field: the result's text is all the
	// model reads.
	ErrorFlag: false,
}

// replyFrames is r as chat completions stream it: the role, the text, each
// tool call's id and name and then its argument pieces, the finish reason,
// the usage chunk, [DONE].
func replyFrames(r modeltest.Reply) []string {
	chunks := []string{RoleChunk()}
	for _, p := range r.Text {
		chunks = append(chunks, TextChunk(p))
	}
	for i, c := range r.Calls {
		chunks = append(chunks, ToolChunk(i, c.ID, c.Name, ""))
		for _, p := range c.Args {
			chunks = append(chunks, ToolChunk(i, "", "", p))
		}
	}
	switch r.End {
	case modeltest.Finish:
		reason := "stop"
		if len(r.Calls) > 0 {
			reason = "tool_calls"
		}
		chunks = append(chunks, FinishChunk(reason))
		if r.Usage != (store.Usage{}) {
			chunks = append(chunks, UsageChunk(r.Usage.PromptTokens, r.Usage.CompletionTokens))
		}
		return append(frames(chunks...), done)
	case modeltest.Truncated:
		return append(frames(chunks...), done) // without a finish_reason
	case modeltest.Malformed:
		return append(frames(chunks...), `data: {"id":"chatcmpl-1","choices":[{"index":0,"delta":{"content":`+"\n\n")
	case modeltest.ErrorEvent:
		return frames(append(chunks, `{"error":{"message":`+quote(r.Error)+`,"type":"server_error"}}`)...)
	}
	return frames(chunks...)
}

// readRequest reads a chat-completions request, and checks what the API
// requires of one: every tool message answers a call of the assistant
// message before it (tool messages between), and every call is answered
// before the next user or assistant message.
func readRequest(t *testing.T, body []byte) modeltest.Request {
	t.Helper()
	var w struct {
		Model         string `json:"model"`
		Stream        bool   `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		t.Fatalf("request: %v: %s", err, body)
	}
	if !w.StreamOptions.IncludeUsage {
		t.Errorf("request without stream_options.include_usage: %s", body)
	}
	req := modeltest.Request{Model: w.Model, Stream: w.Stream}
	var open map[string]bool // the calls of the last assistant message not answered yet
	for i, m := range w.Messages {
		var text string
		if len(m.Content) > 0 && string(m.Content) != "null" {
			if err := json.Unmarshal(m.Content, &text); err != nil {
				t.Errorf("message %d: content %s is not a string", i, m.Content)
			}
		}
		if m.Role != "tool" && len(open) > 0 {
			t.Errorf("message %d (%s) comes before the results of the calls %v", i, m.Role, open)
		}
		switch m.Role {
		case "system":
			req.System = append(req.System, text)
		case "user":
			req.Messages = append(req.Messages, modeltest.Message{Role: store.RoleUser, Text: text})
		case "assistant":
			msg := modeltest.Message{Role: store.RoleAssistant, Text: text}
			open = map[string]bool{}
			for _, c := range m.ToolCalls {
				if c.Type != "function" {
					t.Errorf("message %d: a tool call of type %q", i, c.Type)
				}
				open[c.ID] = true
				msg.ToolCalls = append(msg.ToolCalls, store.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
			}
			req.Messages = append(req.Messages, msg)
		case "tool":
			if !open[m.ToolCallID] {
				t.Errorf("message %d: a tool message for %q, which the assistant message before did not call (or was answered already)", i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
			req.Messages = append(req.Messages, modeltest.Message{Role: store.RoleTool, Text: text, ToolCallID: m.ToolCallID})
		default:
			t.Errorf("message %d: role %q", i, m.Role)
		}
	}
	for _, tool := range w.Tools {
		if params := bytes.TrimSpace(tool.Function.Parameters); tool.Type != "function" || len(params) > 0 && params[0] != '{' {
			t.Errorf("tool %s: type %q, parameters %s; want a function with an object schema", tool.Function.Name, tool.Type, tool.Function.Parameters)
		}
		req.Tools = append(req.Tools, agent.Tool{Name: tool.Function.Name, Description: tool.Function.Description, Parameters: tool.Function.Parameters})
	}
	return req
}
