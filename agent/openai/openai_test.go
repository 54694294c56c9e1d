package openai

import (
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/agent/modeltest"
	"github.com/kindkit/kindkit/internal/syncbuf"
	"github.com/kindkit/kindkit/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testKey = "sk-test-secret-0123456789"

// newModel is a model of the fake server with retry delays of 5ms at most; edit
// adjusts the config.
func newModel(t *testing.T, baseURL string, edit func(*Config)) (*Model, *syncbuf.Buffer) {
	t.Helper()
	logs := &syncbuf.Buffer{}
	cfg := Config{
		BaseURL:    baseURL,
		Model:      "fake-model",
		APIKey:     testKey,
		System:     "You are a test.",
		HTTPClient: modeltest.Client(t),
		Logger:     slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if edit != nil {
		edit(&cfg)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m.maxDelay = 5 * time.Millisecond
	return m, logs
}

// at reads v at a path of object keys and array indices.
func at(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, k := range path {
		switch k := k.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("at %v: %v is not an object", path, v)
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				t.Fatalf("at %v: %v is not an array with index %d", path, v, k)
			}
			v = a[k]
		}
	}
	return v
}

func TestNewChecksConfig(t *testing.T) {
	for _, cfg := range []Config{
		{BaseURL: "http://x/v1"},
		{BaseURL: "ftp://x/v1", Model: "m"},
		{BaseURL: "localhost:11434", Model: "m"},
		{BaseURL: "http://user:pw@x/v1", Model: "m"},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
	m, err := New(Config{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if m.maxRetries != DefaultMaxRetries {
		t.Errorf("maxRetries = %d, want %d", m.maxRetries, DefaultMaxRetries)
	}
	if m, _ := New(Config{Model: "m", MaxRetries: -1}); m.maxRetries != 0 {
		t.Errorf("MaxRetries -1: maxRetries = %d, want 0", m.maxRetries)
	}
}

// What is chat completions' own in a request: stream_options, the system
// prompt as the first message, content as a string, and the key as a bearer
// token. The model contract suite checks the rest.
func TestRequestShape(t *testing.T) {
	f, url := newFake(t, stream(TextChunk("ok"), FinishChunk("stop")))
	m, _ := newModel(t, url, nil)
	if _, _, err := modeltest.Respond(t.Context(), m, modeltest.UserRequest("hi")); err != nil {
		t.Fatal(err)
	}
	req := f.Request(t, 0)
	if req["model"] != "fake-model" || req["stream"] != true || at(t, req, "stream_options", "include_usage") != true {
		t.Errorf("request model/stream/stream_options wrong: %v", req)
	}
	msgs := at(t, req, "messages").([]any)
	if len(msgs) != 2 || at(t, msgs, 0, "role") != "system" || at(t, msgs, 0, "content") != "You are a test." ||
		at(t, msgs, 1, "role") != "user" || at(t, msgs, 1, "content") != "hi" {
		t.Errorf("messages = %v", msgs)
	}
	if got := f.Header(0).Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got)
	}
}

func TestNoKeyNoAuthorization(t *testing.T) {
	f, url := newFake(t, stream(TextChunk("ok"), FinishChunk("stop")))
	m, _ := newModel(t, url, func(c *Config) { c.APIKey = ""; c.System = "" })
	resp, _, err := modeltest.Respond(t.Context(), m, modeltest.UserRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage != (store.Usage{}) {
		t.Errorf("usage = %+v without a usage chunk, want zero", resp.Usage)
	}
	if got := f.Header(0).Get("Authorization"); got != "" {
		t.Errorf("Authorization = %q with no key", got)
	}
	if msgs := at(t, f.Request(t, 0), "messages").([]any); len(msgs) != 1 || at(t, msgs, 0, "role") != "user" {
		t.Errorf("messages = %v, want the user message only", msgs)
	}
}

// A call goes back to the model as chat completions want it: an assistant
// message without content when it has no text, a function call with the
// arguments as stored, in a string; a tool without parameters sends none.
func TestToolCallShape(t *testing.T) {
	f, url := newFake(t, stream(TextChunk("ok"), FinishChunk("stop")))
	m, _ := newModel(t, url, nil)
	req := modeltest.UserRequest("a quote please")
	req.Tools = []agent.Tool{{Name: "lookup", Parameters: json.RawMessage(`{"type":"object"}`)}, {Name: "list_plans"}}
	req.History = append(req.History,
		&store.Message{Role: store.RoleAssistant, ToolCalls: []store.ToolCall{{ID: "call_1", Name: "lookup", Arguments: `{"a": 1}`}}},
		&store.Message{Role: store.RoleTool, ToolCallID: "call_1", ToolName: "lookup", Text: "found"})
	if _, _, err := modeltest.Respond(t.Context(), m, req); err != nil {
		t.Fatal(err)
	}
	sent := f.Request(t, 0)
	msgs := at(t, sent, "messages").([]any)
	if _, ok := msgs[2].(map[string]any)["content"]; ok {
		t.Errorf("assistant message without text has content: %v", msgs[2])
	}
	if call := at(t, msgs, 2, "tool_calls", 0); at(t, call, "type") != "function" || at(t, call, "function", "arguments") != `{"a": 1}` {
		t.Errorf("assistant tool call = %v, want a function call with the arguments as stored", call)
	}
	if tool := at(t, sent, "tools", 1); at(t, tool, "type") != "function" || at(t, tool, "function", "name") != "list_plans" {
		t.Errorf("tool = %v", tool)
	} else if _, ok := at(t, tool, "function").(map[string]any)["parameters"]; ok {
		t.Errorf("a tool without parameters was sent some: %v", tool)
	}
}

func TestSeveralToolCallsInIndexOrder(t *testing.T) {
	_, url := newFake(t, stream(
		ToolChunk(1, "call_b", "second", `{"n":`),
		ToolChunk(0, "call_a", "first", `{"n":`),
		ToolChunk(1, "", "", `2}`),
		ToolChunk(0, "", "", `1}`),
		ToolChunk(2, "call_c", "third", ``),
		FinishChunk("tool_calls")))
	m, _ := newModel(t, url, nil)
	resp, _, err := modeltest.Respond(t.Context(), m, modeltest.UserRequest("go"))
	if err != nil {
		t.Fatal(err)
	}
	want := []store.ToolCall{
		{ID: "call_a", Name: "first", Arguments: `{"n":1}`},
		{ID: "call_b", Name: "second", Arguments: `{"n":2}`},
		{ID: "call_c", Name: "third", Arguments: `{}`},
	}
	if !reflect.DeepEqual(resp.ToolCalls, want) {
		t.Errorf("tool calls = %+v, want %+v", resp.ToolCalls, want)
	}
}

func TestWholeCallsAtOneIndex(t *testing.T) {
	// Some servers send every call whole, all at index 0.
	_, url := newFake(t, stream(
		ToolChunk(0, "call_a", "first", `{}`),
		ToolChunk(0, "call_b", "second", `{"x":1}`),
		FinishChunk("tool_calls")))
	m, _ := newModel(t, url, nil)
	resp, _, err := modeltest.Respond(t.Context(), m, modeltest.UserRequest("go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 2 || resp.ToolCalls[0].Name != "first" || resp.ToolCalls[1].Arguments != `{"x":1}` {
		t.Errorf("tool calls = %+v", resp.ToolCalls)
	}
}

// The SDK waits what the server's Retry-After or retry-after-ms asks
// rather than its own backoff (375–500ms for the first retry), and does not
// retry when the server asks for longer than the cap.
func TestRetryAfter(t *testing.T) {
	for name, tc := range map[string]struct {
		header   []string
		min, max time.Duration // the gap before the retry
	}{
		"retry-after-ms": {[]string{"Retry-After-Ms", "20"}, 20 * time.Millisecond, 300 * time.Millisecond},
		"seconds":        {[]string{"Retry-After", "1"}, time.Second, 3 * time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			f, url := newFake(t, modeltest.Status(429, `{"error":{"message":"slow down"}}`, tc.header...),
				stream(TextChunk("ok"), FinishChunk("stop")))
			m, _ := newModel(t, url, nil)
			m.maxDelay = 5 * time.Second
			if _, _, err := modeltest.Respond(t.Context(), m, modeltest.UserRequest("hi")); err != nil {
				t.Fatal(err)
			}
			if gap := f.Gap(1); gap < tc.min || gap > tc.max {
				t.Errorf("retried after %v, want %v to %v", gap, tc.min, tc.max)
			}
		})
	}
	t.Run("longer than the cap", func(t *testing.T) {
		f, url := newFake(t, modeltest.Status(429, `{"error":{"message":"slow down"}}`, "Retry-After", "3600"),
			stream(TextChunk("ok"), FinishChunk("stop")))
		m, logs := newModel(t, url, nil)
		_, _, err := modeltest.Respond(t.Context(), m, modeltest.UserRequest("hi"))
		var e *Error
		if !errors.As(err, &e) || e.Status != 429 || f.Count() != 1 {
			t.Errorf("error %v after %d requests, want a 429 after 1", err, f.Count())
		}
		if strings.Contains(logs.String(), "retrying") {
			t.Errorf("a retry was logged: %s", logs)
		}
	})
}
