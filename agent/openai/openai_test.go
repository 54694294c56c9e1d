package openai

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.uber.org/goleak"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/syncbuf"
	"github.com/kindkit/kindkit/knowledge"
	"github.com/kindkit/kindkit/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testKey = "sk-test-secret-0123456789"

// visitorText is a message that no error or log line may quote.
const visitorText = "my card number is 4111 1111 1111 1111"

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
		HTTPClient: NewTestClient(t),
		Logger:     slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if edit != nil {
		edit(&cfg)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	SetMaxRetryDelay(m, 5*time.Millisecond)
	return m, logs
}

func userRequest(text string) agent.ModelRequest {
	return agent.ModelRequest{ConversationID: "c1", Position: 7,
		History: []*store.Message{{Role: store.RoleUser, Text: text}}}
}

// respond calls m and collects the onText pieces.
func respond(ctx context.Context, m *Model, req agent.ModelRequest) (agent.ModelResponse, []string, error) {
	var pieces []string
	resp, err := m.Respond(ctx, req, func(s string) { pieces = append(pieces, s) })
	return resp, pieces, err
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

func TestStreamsText(t *testing.T) {
	f := NewFakeServer(t, Stream(RoleChunk(), TextChunk("Hel"), TextChunk("lo, "), TextChunk("world"),
		FinishChunk("stop"), UsageChunk(12, 3)))
	m, _ := newModel(t, f.URL, nil)
	resp, pieces, err := respond(t.Context(), m, userRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Hel", "lo, ", "world"}; !reflect.DeepEqual(pieces, want) {
		t.Errorf("onText pieces = %q, want %q", pieces, want)
	}
	want := agent.ModelResponse{Text: "Hello, world", Usage: store.Usage{PromptTokens: 12, CompletionTokens: 3}, Position: 7}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response = %+v, want %+v", resp, want)
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
	if _, ok := req["tools"]; ok {
		t.Errorf("tools sent although none offered: %v", req["tools"])
	}
	if got := f.Header(0).Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got)
	}
}

// The turn's knowledge reaches the model as a system message after the
// system prompt, each document under its source and cut to a bounded size.
func TestKnowledgeInThePrompt(t *testing.T) {
	f := NewFakeServer(t, Stream(TextChunk("ok"), FinishChunk("stop")))
	m, _ := newModel(t, f.URL, func(*Config) {})
	req := userRequest("refund?")
	req.Knowledge = []knowledge.Doc{{Source: "returns.md", Content: "Returns within 30 days."}, {Source: "big.md", Content: strings.Repeat("é", 3000)}}
	if _, _, err := respond(t.Context(), m, req); err != nil {
		t.Fatal(err)
	}
	msgs := at(t, f.Request(t, 0), "messages").([]any)
	if len(msgs) != 3 || at(t, msgs, 1, "role") != "system" || at(t, msgs, 2, "role") != "user" {
		t.Fatalf("messages = %v", msgs)
	}
	prompt := at(t, msgs, 1, "content").(string)
	if !strings.Contains(prompt, "[returns.md]\nReturns within 30 days.") || !strings.Contains(prompt, "[big.md]\n") {
		t.Errorf("knowledge prompt = %q", prompt)
	}
	if big := prompt[strings.Index(prompt, "[big.md]"):]; len(big) > 4100 || !utf8.ValidString(big) || !strings.HasSuffix(big, " …") {
		t.Errorf("the big document is not cut cleanly: %d bytes, valid %v", len(big), utf8.ValidString(big))
	}
}

func TestNoKeyNoAuthorization(t *testing.T) {
	f := NewFakeServer(t, Stream(TextChunk("ok"), FinishChunk("stop")))
	m, _ := newModel(t, f.URL, func(c *Config) { c.APIKey = ""; c.System = "" })
	resp, _, err := respond(t.Context(), m, userRequest("hi"))
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

const choicesSchema = `{"type":"object","properties":{"questions":{"type":"array","minItems":1,"maxItems":4,"items":{"type":"object"}},"reason":{"type":"string"}},"required":["questions"]}`

func TestToolCallRoundTrip(t *testing.T) {
	args := `{"questions":[{"question":"Which plan?","header":"Plan","options":["A","B"]}],"reason":"to help"}`
	f := NewFakeServer(t,
		Stream(RoleChunk(),
			ToolChunk(0, "call_1", "request_choices", ""),
			ToolChunk(0, "", "", args[:20]),
			ToolChunk(0, "", "", args[20:50]),
			ToolChunk(0, "", "", args[50:]),
			FinishChunk("tool_calls")),
		Stream(TextChunk("Plan "), TextChunk("B, noted."), FinishChunk("stop"), UsageChunk(40, 4)),
	)
	m, _ := newModel(t, f.URL, nil)
	tools := []agent.Tool{{Name: "request_choices", Description: "Ask the visitor.", Parameters: json.RawMessage(choicesSchema)}}
	req := userRequest("a quote please")
	req.Tools = tools
	resp, pieces, err := respond(t.Context(), m, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(pieces) != 0 || resp.Text != "" {
		t.Errorf("text %q / pieces %q for a tool call", resp.Text, pieces)
	}
	wantCalls := []store.ToolCall{{ID: "call_1", Name: "request_choices", Arguments: args}}
	if !reflect.DeepEqual(resp.ToolCalls, wantCalls) {
		t.Errorf("tool calls = %+v, want %+v", resp.ToolCalls, wantCalls)
	}
	if resp.Usage != (store.Usage{}) {
		t.Errorf("usage = %+v, want zero (none reported)", resp.Usage)
	}

	result := `{"status":"submitted","values":{"answers":[{"header":"Plan","options":["B"]}]}}`
	req.History = append(req.History,
		&store.Message{Role: store.RoleAssistant, ToolCalls: resp.ToolCalls},
		&store.Message{Role: store.RoleTool, ToolCallID: "call_1", ToolName: "request_choices", Text: result})
	resp, pieces, err = respond(t.Context(), m, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Plan B, noted." || !reflect.DeepEqual(pieces, []string{"Plan ", "B, noted."}) || resp.Usage.PromptTokens != 40 {
		t.Errorf("second response = %+v, pieces %q", resp, pieces)
	}

	sent := f.Request(t, 1)
	msgs := at(t, sent, "messages").([]any)
	var roles []string
	for _, msg := range msgs {
		roles = append(roles, at(t, msg, "role").(string))
	}
	if want := []string{"system", "user", "assistant", "tool"}; !reflect.DeepEqual(roles, want) {
		t.Fatalf("roles = %q, want %q", roles, want)
	}
	if _, ok := msgs[2].(map[string]any)["content"]; ok {
		t.Errorf("assistant message without text has content: %v", msgs[2])
	}
	call := at(t, msgs, 2, "tool_calls", 0)
	if at(t, call, "id") != "call_1" || at(t, call, "type") != "function" ||
		at(t, call, "function", "name") != "request_choices" || at(t, call, "function", "arguments") != args {
		t.Errorf("assistant tool call = %v", call)
	}
	if at(t, msgs, 3, "tool_call_id") != "call_1" || at(t, msgs, 3, "content") != result {
		t.Errorf("tool message = %v", msgs[3])
	}
	tool := at(t, sent, "tools", 0)
	if at(t, tool, "type") != "function" || at(t, tool, "function", "name") != "request_choices" ||
		at(t, tool, "function", "description") != "Ask the visitor." {
		t.Errorf("tool = %v", tool)
	}
	var schema any
	json.Unmarshal([]byte(choicesSchema), &schema)
	if got := at(t, tool, "function", "parameters"); !reflect.DeepEqual(got, schema) {
		t.Errorf("parameters = %v, want the schema %v", got, schema)
	}
}

func TestHistoryKeepsOrderAndText(t *testing.T) {
	f := NewFakeServer(t, Stream(TextChunk("ok"), FinishChunk("stop")))
	m, _ := newModel(t, f.URL, func(c *Config) { c.System = "" })
	req := agent.ModelRequest{History: []*store.Message{
		{Role: store.RoleUser, Text: "one"},
		{Role: store.RoleAssistant, Text: "Let me check.", ToolCalls: []store.ToolCall{{ID: "a", Name: "lookup", Arguments: ""}}},
		{Role: store.RoleTool, ToolCallID: "a", ToolName: "lookup", Text: "found", IsError: true},
		{Role: store.RoleAssistant, Text: "Found it."},
		{Role: store.RoleUser, Text: "two"},
	}}
	if _, _, err := respond(t.Context(), m, req); err != nil {
		t.Fatal(err)
	}
	msgs := at(t, f.Request(t, 0), "messages").([]any)
	want := []struct{ role, content string }{{"user", "one"}, {"assistant", "Let me check."}, {"tool", "found"}, {"assistant", "Found it."}, {"user", "two"}}
	if len(msgs) != len(want) {
		t.Fatalf("messages = %v", msgs)
	}
	for i, w := range want {
		if at(t, msgs, i, "role") != w.role || at(t, msgs, i, "content") != w.content {
			t.Errorf("message %d = %v, want %s %q", i, msgs[i], w.role, w.content)
		}
	}
	if got := at(t, msgs, 1, "tool_calls", 0, "function", "arguments"); got != "{}" {
		t.Errorf("empty stored arguments sent as %q, want {}", got)
	}
}

func TestSeveralToolCallsInIndexOrder(t *testing.T) {
	f := NewFakeServer(t, Stream(
		ToolChunk(1, "call_b", "second", `{"n":`),
		ToolChunk(0, "call_a", "first", `{"n":`),
		ToolChunk(1, "", "", `2}`),
		ToolChunk(0, "", "", `1}`),
		ToolChunk(2, "call_c", "third", ``),
		FinishChunk("tool_calls")))
	m, _ := newModel(t, f.URL, nil)
	resp, _, err := respond(t.Context(), m, userRequest("go"))
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
	f := NewFakeServer(t, Stream(
		ToolChunk(0, "call_a", "first", `{}`),
		ToolChunk(0, "call_b", "second", `{"x":1}`),
		FinishChunk("tool_calls")))
	m, _ := newModel(t, f.URL, nil)
	resp, _, err := respond(t.Context(), m, userRequest("go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 2 || resp.ToolCalls[0].Name != "first" || resp.ToolCalls[1].Arguments != `{"x":1}` {
		t.Errorf("tool calls = %+v", resp.ToolCalls)
	}
}

// failure runs one failing call and checks the error and request count.
type failure struct {
	name       string
	replies    []Reply
	maxRetries int
	wantErr    string // a substring of the error
	wantStatus int
	wantCount  int
	wantPieces []string
}

const apiError500 = `{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`

func TestFailures(t *testing.T) {
	badArgs := `{"questions":[{"header":`
	for _, tc := range []failure{
		{name: "401 is not retried",
			replies:    []Reply{Status(401, `{"error":{"message":"Incorrect API key provided: `+testKey+`","type":"invalid_request_error","code":"invalid_api_key"}}`)},
			wantErr:    "HTTP 401 Unauthorized: Incorrect API key provided: [redacted]",
			wantStatus: 401, wantCount: 1},
		{name: "404 unknown model is not retried",
			replies:    []Reply{Status(404, `{"error":{"message":"model \"nope\" not found, try pulling it first","type":"api_error"}}`)},
			wantErr:    `HTTP 404 Not Found: model "nope" not found`,
			wantStatus: 404, wantCount: 1},
		{name: "500 forever fails after MaxRetries+1 requests",
			replies:    []Reply{Status(500, apiError500)},
			maxRetries: 3,
			wantErr:    "HTTP 500 Internal Server Error: The server had an error while processing your request. (after 4 attempts)",
			wantStatus: 500, wantCount: 4},
		{name: "502 from a proxy without a JSON body is retried",
			replies:    []Reply{Status(502, "<html>Bad Gateway</html>")},
			maxRetries: 1,
			wantErr:    "HTTP 502 Bad Gateway (after 2 attempts)",
			wantStatus: 502, wantCount: 2},
		{name: "a stream broken after a delta is not retried",
			replies:    []Reply{Break(RoleChunk(), TextChunk("Hello"))},
			maxRetries: 3,
			wantErr:    "the stream broke: unexpected EOF",
			wantCount:  1, wantPieces: []string{"Hello"}},
		{name: "a stream that ends without finish_reason",
			replies:   []Reply{Stream(TextChunk("Hel"))},
			wantErr:   "the stream ended before the model finished",
			wantCount: 1, wantPieces: []string{"Hel"}},
		{name: "an error event in the stream",
			replies:   []Reply{Stream(TextChunk("Hel"), `{"error":{"message":"overloaded"}}`)},
			wantErr:   "the server sent an error in the stream",
			wantCount: 1, wantPieces: []string{"Hel"}},
		{name: "tool arguments that are not JSON",
			replies: []Reply{Stream(ToolChunk(0, "call_1", "request_choices", badArgs[:10]),
				ToolChunk(0, "", "", badArgs[10:]), FinishChunk("length"))},
			wantErr:   "openai: tool call request_choices: arguments are not JSON: " + `"{\"questions\":[{\"header\":"`,
			wantCount: 1},
		{name: "a tool call without a name",
			replies:   []Reply{Stream(ToolChunk(0, "call_1", "", `{}`), FinishChunk("tool_calls"))},
			wantErr:   `tool call 0 (id "call_1") has no function name`,
			wantCount: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFakeServer(t, tc.replies...)
			m, logs := newModel(t, f.URL, func(c *Config) { c.MaxRetries = tc.maxRetries })
			_, pieces, err := respond(t.Context(), m, userRequest(visitorText))
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q does not contain %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), testKey) || strings.Contains(logs.String(), testKey) {
				t.Errorf("the API key leaked: error %q, logs %s", err, logs)
			}
			if strings.Contains(err.Error(), visitorText) || strings.Contains(logs.String(), visitorText) {
				t.Errorf("the visitor's text leaked: error %q, logs %s", err, logs)
			}
			if tc.wantStatus != 0 {
				var e *Error
				if !errors.As(err, &e) || e.Status != tc.wantStatus {
					t.Errorf("error %#v: want an *Error with status %d", err, tc.wantStatus)
				}
			}
			if got := f.Count(); got != tc.wantCount {
				t.Errorf("%d requests, want %d", got, tc.wantCount)
			}
			if !reflect.DeepEqual(pieces, tc.wantPieces) {
				t.Errorf("onText pieces = %q, want %q", pieces, tc.wantPieces)
			}
			if !strings.Contains(logs.String(), "model=fake-model") {
				t.Errorf("no failure log line: %s", logs)
			}
		})
	}
}

// A request that gets no answer is retried too, and its failure logged
// with status 0.
func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	m, logs := newModel(t, "http://"+addr+"/v1", func(c *Config) { c.MaxRetries = 1 })
	_, _, err = respond(t.Context(), m, userRequest("hi"))
	if err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), "openai: model fake-model: request failed") ||
		!strings.Contains(err.Error(), "(after 2 attempts)") {
		t.Fatalf("error = %v, want a connection refused after 2 attempts", err)
	}
	l := logs.String()
	if strings.Count(l, "\n") != 2 || !strings.Contains(l, "retrying") || !strings.Contains(l, "status=0 attempt=1") || !strings.Contains(l, "status=0 attempt=2") {
		t.Errorf("want a retry line for attempt 1 and a failure line for attempt 2, both status 0: %s", l)
	}
}

func TestRetriesThenSucceeds(t *testing.T) {
	t.Run("429 then success", func(t *testing.T) {
		f := NewFakeServer(t,
			Status(429, `{"error":{"message":"Rate limit reached","type":"requests"}}`, "Retry-After", "0"),
			Stream(TextChunk("ok"), FinishChunk("stop")))
		m, logs := newModel(t, f.URL, nil)
		resp, _, err := respond(t.Context(), m, userRequest("hi"))
		if err != nil || resp.Text != "ok" {
			t.Fatalf("response %+v, error %v", resp, err)
		}
		if f.Count() != 2 {
			t.Errorf("%d requests, want 2", f.Count())
		}
		if l := logs.String(); !strings.Contains(l, "retrying") || !strings.Contains(l, "status=429 attempt=1") || strings.Contains(l, testKey) {
			t.Errorf("retry log: %s", l)
		}
	})
	t.Run("500 three times then success", func(t *testing.T) {
		f := NewFakeServer(t, Status(500, apiError500), Status(500, apiError500), Status(500, apiError500),
			Stream(TextChunk("ok"), FinishChunk("stop")))
		m, logs := newModel(t, f.URL, func(c *Config) { c.MaxRetries = 3 })
		resp, _, err := respond(t.Context(), m, userRequest("hi"))
		if err != nil || resp.Text != "ok" {
			t.Fatalf("response %+v, error %v", resp, err)
		}
		if f.Count() != 4 {
			t.Errorf("%d requests, want 4", f.Count())
		}
		if n := strings.Count(logs.String(), "retrying"); n != 3 {
			t.Errorf("%d retry log lines, want 3: %s", n, logs)
		}
	})
	t.Run("no retries when MaxRetries is negative", func(t *testing.T) {
		f := NewFakeServer(t, Status(500, apiError500), Stream(TextChunk("ok"), FinishChunk("stop")))
		m, _ := newModel(t, f.URL, func(c *Config) { c.MaxRetries = -1 })
		if _, _, err := respond(t.Context(), m, userRequest("hi")); err == nil || f.Count() != 1 {
			t.Errorf("error %v after %d requests, want an error after 1", err, f.Count())
		}
	})
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
			f := NewFakeServer(t, Status(429, `{"error":{"message":"slow down"}}`, tc.header...),
				Stream(TextChunk("ok"), FinishChunk("stop")))
			m, _ := newModel(t, f.URL, nil)
			SetMaxRetryDelay(m, 5*time.Second)
			if _, _, err := respond(t.Context(), m, userRequest("hi")); err != nil {
				t.Fatal(err)
			}
			if gap := f.Gap(1); gap < tc.min || gap > tc.max {
				t.Errorf("retried after %v, want %v to %v", gap, tc.min, tc.max)
			}
		})
	}
	t.Run("longer than the cap", func(t *testing.T) {
		f := NewFakeServer(t, Status(429, `{"error":{"message":"slow down"}}`, "Retry-After", "3600"),
			Stream(TextChunk("ok"), FinishChunk("stop")))
		m, logs := newModel(t, f.URL, nil)
		_, _, err := respond(t.Context(), m, userRequest("hi"))
		var e *Error
		if !errors.As(err, &e) || e.Status != 429 || f.Count() != 1 {
			t.Errorf("error %v after %d requests, want a 429 after 1", err, f.Count())
		}
		if strings.Contains(logs.String(), "retrying") {
			t.Errorf("a retry was logged: %s", logs)
		}
	})
}

func TestContextCancelledMidStream(t *testing.T) {
	f := NewFakeServer(t, Hang(RoleChunk(), TextChunk("Hi")))
	m, _ := newModel(t, f.URL, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	start := time.Now()
	var pieces []string
	_, err := m.Respond(ctx, userRequest("hi"), func(s string) {
		pieces = append(pieces, s)
		go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("returned after %v", el)
	}
	if !reflect.DeepEqual(pieces, []string{"Hi"}) || f.Count() != 1 {
		t.Errorf("pieces %q, %d requests", pieces, f.Count())
	}
}

func TestContextCancelledDuringBackoff(t *testing.T) {
	f := NewFakeServer(t, Status(500, apiError500))
	m, _ := newModel(t, f.URL, nil)
	SetMaxRetryDelay(m, time.Minute)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err := respond(ctx, m, userRequest("hi"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want the deadline", err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("returned after %v", el)
	}
}

func TestBadToolSchema(t *testing.T) {
	m, _ := newModel(t, "http://127.0.0.1:1/v1", nil)
	req := userRequest("hi")
	req.Tools = []agent.Tool{{Name: "broken", Parameters: json.RawMessage(`[1,2]`)}}
	if _, _, err := respond(t.Context(), m, req); err == nil || !strings.Contains(err.Error(), "tool broken: parameters are not a JSON object") {
		t.Errorf("error = %v", err)
	}
}
