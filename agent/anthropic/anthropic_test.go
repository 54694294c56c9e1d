package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
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

const testKey = "sk-ant-test-secret-0123456789"

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

// jsonOf decodes s, for comparing JSON values.
func jsonOf(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

func TestNewChecksConfig(t *testing.T) {
	for _, cfg := range []Config{
		{BaseURL: "http://x"},
		{BaseURL: "ftp://x", Model: "m"},
		{BaseURL: "api.anthropic.com", Model: "m"},
		{BaseURL: "https://user:pw@x", Model: "m"},
		{Model: "m", MaxTokens: -1},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
	m, err := New(Config{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if m.maxRetries != DefaultMaxRetries || m.maxTokens != DefaultMaxTokens || m.ModelName() != "m" {
		t.Errorf("maxRetries = %d, maxTokens = %d, name %q; want %d, %d, m", m.maxRetries, m.maxTokens, m.ModelName(), DefaultMaxRetries, DefaultMaxTokens)
	}
	if m, _ := New(Config{Model: "m", MaxRetries: -1}); m.maxRetries != 0 {
		t.Errorf("MaxRetries -1: maxRetries = %d, want 0", m.maxRetries)
	}
}

// The SDK reads nothing from the environment: not a key, not a base URL,
// not extra headers.
func TestNoEnvironment(t *testing.T) {
	f := NewFakeServer(t, Stream(TextMessage(1, 1, "ok")...))
	t.Setenv("ANTHROPIC_API_KEY", "sk-from-env")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "tok-from-env")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-From-Env: yes")
	t.Setenv("ANTHROPIC_PROFILE", "nope")
	m, _ := newModel(t, f.URL, func(c *Config) { c.APIKey = "" })
	if _, _, err := respond(t.Context(), m, userRequest("hi")); err != nil {
		t.Fatal(err)
	}
	h := f.Header(0)
	for _, name := range []string{"Authorization", "X-Api-Key", "X-From-Env"} {
		if v := h.Get(name); v != "" {
			t.Errorf("%s = %q taken from the environment", name, v)
		}
	}
}

func TestStreamsText(t *testing.T) {
	f := NewFakeServer(t, Stream(TextMessage(12, 3, "Hel", "lo, ", "world")...))
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
	if req["model"] != "fake-model" || req["stream"] != true || req["max_tokens"] != float64(DefaultMaxTokens) {
		t.Errorf("request model/stream/max_tokens wrong: %v", req)
	}
	if got, want := req["system"], jsonOf(t, `[{"type":"text","text":"You are a test."}]`); !reflect.DeepEqual(got, want) {
		t.Errorf("system = %v, want %v", got, want)
	}
	if got, want := req["messages"], jsonOf(t, `[{"role":"user","content":[{"type":"text","text":"hi"}]}]`); !reflect.DeepEqual(got, want) {
		t.Errorf("messages = %v, want %v", got, want)
	}
	if _, ok := req["tools"]; ok {
		t.Errorf("tools sent although none offered: %v", req["tools"])
	}
	// The SDK sends the key as a bearer token.
	if got := f.Header(0).Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got)
	}
	if f.Header(0).Get("Anthropic-Version") == "" {
		t.Errorf("no anthropic-version header: %v", f.Header(0))
	}
}

// The turn's knowledge reaches the model as a second system block after the
// system prompt, each document under its source and cut to a bounded size.
func TestKnowledgeInThePrompt(t *testing.T) {
	f := NewFakeServer(t, Stream(TextMessage(1, 1, "ok")...))
	m, _ := newModel(t, f.URL, nil)
	req := userRequest("refund?")
	req.Knowledge = []knowledge.Doc{{Source: "returns.md", Content: "Returns within 30 days."}, {Source: "big.md", Content: strings.Repeat("é", 3000)}}
	if _, _, err := respond(t.Context(), m, req); err != nil {
		t.Fatal(err)
	}
	sent := f.Request(t, 0)
	system := at(t, sent, "system").([]any)
	if len(system) != 2 || at(t, system, 0, "text") != "You are a test." || at(t, system, 1, "type") != "text" {
		t.Fatalf("system = %v", system)
	}
	prompt := at(t, system, 1, "text").(string)
	if !strings.Contains(prompt, "[returns.md]\nReturns within 30 days.") || !strings.Contains(prompt, "[big.md]\n") {
		t.Errorf("knowledge prompt = %q", prompt)
	}
	if big := prompt[strings.Index(prompt, "[big.md]"):]; len(big) > 4100 || !utf8.ValidString(big) || !strings.HasSuffix(big, " …") {
		t.Errorf("the big document is not cut cleanly: %d bytes, valid %v", len(big), utf8.ValidString(big))
	}
	if msgs := at(t, sent, "messages").([]any); len(msgs) != 1 || at(t, msgs, 0, "role") != "user" {
		t.Errorf("messages = %v", msgs)
	}
}

func TestNoKeyNoAuthorization(t *testing.T) {
	f := NewFakeServer(t, Stream(TextStart(0), TextDelta(0, "ok"), BlockStop(0), MessageDelta("end_turn", 0), MessageStop()))
	m, _ := newModel(t, f.URL, func(c *Config) { c.APIKey = ""; c.System = "" })
	resp, _, err := respond(t.Context(), m, userRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage != (store.Usage{}) || resp.Text != "ok" {
		t.Errorf("response = %+v without a message_start, want text ok and zero usage", resp)
	}
	if h := f.Header(0); h.Get("Authorization") != "" || h.Get("X-Api-Key") != "" {
		t.Errorf("credentials sent with no key: %v", h)
	}
	if _, ok := f.Request(t, 0)["system"]; ok {
		t.Errorf("system sent without a system prompt or knowledge")
	}
}

const choicesSchema = `{"type":"object","properties":{"questions":{"type":"array","minItems":1,"maxItems":4,"items":{"type":"object"}},"reason":{"type":"string"}},"required":["questions"],"additionalProperties":false}`

func TestToolCallRoundTrip(t *testing.T) {
	args := `{"questions":[{"question":"Which plan?","header":"Plan","options":["A","B"]}],"reason":"to help"}`
	f := NewFakeServer(t,
		Stream(ToolMessage(30, 9, "toolu_01", "request_choices", "", args[:20], args[20:50], args[50:])...),
		Stream(TextMessage(40, 4, "Plan ", "B, noted.")...),
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
	wantCalls := []store.ToolCall{{ID: "toolu_01", Name: "request_choices", Arguments: args}}
	if !reflect.DeepEqual(resp.ToolCalls, wantCalls) {
		t.Errorf("tool calls = %+v, want %+v", resp.ToolCalls, wantCalls)
	}
	if resp.Usage != (store.Usage{PromptTokens: 30, CompletionTokens: 9}) {
		t.Errorf("usage = %+v, want 30/9", resp.Usage)
	}

	result := `{"status":"submitted","values":{"answers":[{"header":"Plan","options":["B"]}]}}`
	req.History = append(req.History,
		&store.Message{Role: store.RoleAssistant, ToolCalls: resp.ToolCalls},
		&store.Message{Role: store.RoleTool, ToolCallID: "toolu_01", ToolName: "request_choices", Text: result})
	resp, pieces, err = respond(t.Context(), m, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Plan B, noted." || !reflect.DeepEqual(pieces, []string{"Plan ", "B, noted."}) || resp.Usage.PromptTokens != 40 {
		t.Errorf("second response = %+v, pieces %q", resp, pieces)
	}

	sent := f.Request(t, 1)
	want := jsonOf(t, `[
		{"role":"user","content":[{"type":"text","text":"a quote please"}]},
		{"role":"assistant","content":[{"type":"tool_use","id":"toolu_01","name":"request_choices","input":`+args+`}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":[{"type":"text","text":`+quote(result)+`}]}]}
	]`)
	if got := sent["messages"]; !reflect.DeepEqual(got, want) {
		t.Errorf("messages =\n%v\nwant\n%v", got, want)
	}
	wantTools := jsonOf(t, `[{"name":"request_choices","description":"Ask the visitor.","input_schema":`+choicesSchema+`}]`)
	if got := sent["tools"]; !reflect.DeepEqual(got, wantTools) {
		t.Errorf("tools = %v, want %v", got, wantTools)
	}
}

// Text and several tool calls in one message come back in order; a call
// without input has {}; pings between events change nothing.
func TestSeveralToolCalls(t *testing.T) {
	f := NewFakeServer(t, Stream(
		MessageStart(50), Ping(),
		TextStart(0), TextDelta(0, "Let me "), TextDelta(0, "check."), BlockStop(0),
		ToolStart(1, "toolu_a", "lookup_order"), InputDelta(1, ""), InputDelta(1, `{"order`), Ping(), InputDelta(1, `":"A-1"}`), BlockStop(1),
		ToolStart(2, "toolu_b", "list_plans"), BlockStop(2),
		ToolStart(3, "toolu_c", "lookup_order"), InputDelta(3, `{"order":"B-2"}`), BlockStop(3),
		MessageDelta("tool_use", 60), MessageStop()))
	m, _ := newModel(t, f.URL, nil)
	resp, pieces, err := respond(t.Context(), m, userRequest("where are my orders?"))
	if err != nil {
		t.Fatal(err)
	}
	want := agent.ModelResponse{Text: "Let me check.", Position: 7, Usage: store.Usage{PromptTokens: 50, CompletionTokens: 60},
		ToolCalls: []store.ToolCall{
			{ID: "toolu_a", Name: "lookup_order", Arguments: `{"order":"A-1"}`},
			{ID: "toolu_b", Name: "list_plans", Arguments: `{}`},
			{ID: "toolu_c", Name: "lookup_order", Arguments: `{"order":"B-2"}`},
		}}
	if !reflect.DeepEqual(resp, want) || !reflect.DeepEqual(pieces, []string{"Let me ", "check."}) {
		t.Errorf("response = %+v, pieces %q; want %+v", resp, pieces, want)
	}
}

// The history maps onto alternating user and assistant messages: the
// results of several calls, an error result among them, go into one user
// message, and so do consecutive user messages.
func TestHistoryMapping(t *testing.T) {
	f := NewFakeServer(t, Stream(TextMessage(1, 1, "ok")...))
	m, _ := newModel(t, f.URL, nil)
	req := agent.ModelRequest{History: []*store.Message{
		{Role: store.RoleUser, Text: "first"},
		{Role: store.RoleUser, Text: "second"},
		{Role: store.RoleAssistant, Text: "Checking.", ToolCalls: []store.ToolCall{
			{ID: "toolu_a", Name: "lookup_order", Arguments: `{"order":"A-1"}`},
			{ID: "toolu_b", Name: "list_plans", Arguments: ""},
		}},
		{Role: store.RoleTool, ToolCallID: "toolu_a", ToolName: "lookup_order", Text: `{"status":"shipped"}`},
		{Role: store.RoleTool, ToolCallID: "toolu_b", ToolName: "list_plans", Text: "plans are down", IsError: true},
		{Role: store.RoleUser, Text: "thanks"},
		{Role: store.RoleAssistant, Text: "You are welcome."},
		{Role: "system", Text: "not for the model"},
		nil,
		{Role: store.RoleUser, Text: "one more"},
	}}
	if _, _, err := respond(t.Context(), m, req); err != nil {
		t.Fatal(err)
	}
	want := jsonOf(t, `[
		{"role":"user","content":[{"type":"text","text":"first"},{"type":"text","text":"second"}]},
		{"role":"assistant","content":[{"type":"text","text":"Checking."},
			{"type":"tool_use","id":"toolu_a","name":"lookup_order","input":{"order":"A-1"}},
			{"type":"tool_use","id":"toolu_b","name":"list_plans","input":{}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"toolu_a","content":[{"type":"text","text":"{\"status\":\"shipped\"}"}]},
			{"type":"tool_result","tool_use_id":"toolu_b","content":[{"type":"text","text":"plans are down"}],"is_error":true},
			{"type":"text","text":"thanks"}]},
		{"role":"assistant","content":[{"type":"text","text":"You are welcome."}]},
		{"role":"user","content":[{"type":"text","text":"one more"}]}
	]`)
	if got := f.Request(t, 0)["messages"]; !reflect.DeepEqual(got, want) {
		gotJSON, _ := json.Marshal(got)
		t.Errorf("messages =\n%s\nwant the merged, alternating history", gotJSON)
	}
}

func TestFailures(t *testing.T) {
	const apiError500 = `{"type":"error","error":{"type":"api_error","message":"Internal server error"},"request_id":"req_1"}`
	badInput := `{"questions":[{"header":`
	for _, tc := range []struct {
		name       string
		replies    []Reply
		maxRetries int
		wantErr    string
		wantStatus int
		wantCount  int
		wantPieces []string
	}{
		{name: "401 is not retried, and the echoed key is scrubbed",
			replies:    []Reply{Status(401, APIError("authentication_error", "invalid x-api-key "+testKey))},
			wantErr:    "anthropic: model fake-model: HTTP 401 Unauthorized: authentication_error: invalid x-api-key [redacted]",
			wantStatus: 401, wantCount: 1},
		{name: "400 invalid request is not retried",
			replies:    []Reply{Status(400, APIError("invalid_request_error", "messages: roles must alternate"))},
			wantErr:    "HTTP 400 Bad Request: invalid_request_error: messages: roles must alternate",
			wantStatus: 400, wantCount: 1},
		{name: "429 forever fails after MaxRetries+1 requests",
			replies:    []Reply{Status(429, APIError("rate_limit_error", "Number of requests has exceeded your rate limit"), "Retry-After", "0")},
			maxRetries: 2,
			wantErr:    "HTTP 429 Too Many Requests: rate_limit_error: Number of requests has exceeded your rate limit (after 3 attempts)",
			wantStatus: 429, wantCount: 3},
		{name: "500 forever fails after MaxRetries+1 requests",
			replies:    []Reply{Status(500, apiError500)},
			maxRetries: 3,
			wantErr:    "HTTP 500 Internal Server Error: api_error: Internal server error (after 4 attempts)",
			wantStatus: 500, wantCount: 4},
		{name: "529 overloaded is retried",
			replies:    []Reply{Status(529, APIError("overloaded_error", "Overloaded"))},
			maxRetries: 2,
			wantErr:    "HTTP 529 Overloaded: overloaded_error: Overloaded (after 3 attempts)",
			wantStatus: 529, wantCount: 3},
		{name: "502 from a proxy without a JSON body is retried",
			replies:    []Reply{Status(502, "<html>Bad Gateway</html>")},
			maxRetries: 1,
			wantErr:    "HTTP 502 Bad Gateway (after 2 attempts)",
			wantStatus: 502, wantCount: 2},
		{name: "a stream cut after a delta is not retried",
			replies:    []Reply{Break(MessageStart(5), TextStart(0), TextDelta(0, "Hello"))},
			maxRetries: 3,
			wantErr:    "the stream broke: unexpected EOF",
			wantStatus: 200, wantCount: 1, wantPieces: []string{"Hello"}},
		{name: "a stream that ends without message_stop",
			replies:    []Reply{Stream(MessageStart(5), TextStart(0), TextDelta(0, "Hel"), BlockStop(0), MessageDelta("end_turn", 2))},
			wantErr:    "the stream ended before the model finished",
			wantStatus: 200, wantCount: 1, wantPieces: []string{"Hel"}},
		{name: "a stream that stops without a stop_reason",
			replies:    []Reply{Stream(MessageStart(5), TextStart(0), TextDelta(0, "Hel"), BlockStop(0), MessageStop())},
			wantErr:    "the stream ended before the model finished",
			wantStatus: 200, wantCount: 1, wantPieces: []string{"Hel"}},
		{name: "an error event in the stream",
			replies:    []Reply{Stream(MessageStart(5), TextStart(0), TextDelta(0, "Hel"), Ping(), ErrorEvent("overloaded_error", "Overloaded"))},
			maxRetries: 3,
			wantErr:    "anthropic: model fake-model: the server sent an error in the stream: overloaded_error: Overloaded",
			wantStatus: 200, wantCount: 1, wantPieces: []string{"Hel"}},
		{name: "tool input that is not JSON",
			replies:   []Reply{Stream(ToolMessage(5, 5, "toolu_1", "request_choices", badInput[:10], badInput[10:])...)},
			wantErr:   "anthropic: tool call request_choices: input is not JSON: " + `"{\"questions\":[{\"header\":"`,
			wantCount: 1},
		{name: "a tool call without a name",
			replies:   []Reply{Stream(ToolMessage(5, 5, "toolu_1", "", `{}`)...)},
			wantErr:   `tool call 0 (id "toolu_1") has no name`,
			wantCount: 1},
		{name: "a 200 that is not a stream",
			replies:    []Reply{Status(200, `{"id":"msg_1","type":"message","content":[]}`)},
			wantErr:    "the stream ended before the model finished",
			wantStatus: 200, wantCount: 1},
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
			l := logs.String()
			if !strings.Contains(l, "model call failed") || !strings.Contains(l, "model=fake-model") ||
				!strings.Contains(l, "attempt="+itoa(tc.wantCount)) {
				t.Errorf("no failure log line with the model and attempt %d: %s", tc.wantCount, l)
			}
			if n := strings.Count(l, "retrying"); n != tc.wantCount-1 {
				t.Errorf("%d retry log lines, want %d: %s", n, tc.wantCount-1, l)
			}
		})
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// A request that gets no answer is retried too, and its failure logged
// with status 0.
func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	m, logs := newModel(t, "http://"+addr, func(c *Config) { c.MaxRetries = 1 })
	_, _, err = respond(t.Context(), m, userRequest("hi"))
	if err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), "anthropic: model fake-model: request failed") ||
		!strings.Contains(err.Error(), "(after 2 attempts)") {
		t.Fatalf("error = %v, want a connection refused after 2 attempts", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Status != 0 {
		t.Errorf("error %#v: want an *Error with status 0", err)
	}
	l := logs.String()
	if strings.Count(l, "\n") != 2 || !strings.Contains(l, "retrying") || !strings.Contains(l, "status=0 attempt=1") || !strings.Contains(l, "status=0 attempt=2") {
		t.Errorf("want a retry line for attempt 1 and a failure line for attempt 2, both status 0: %s", l)
	}
	if strings.Contains(l, testKey) {
		t.Errorf("the key leaked: %s", l)
	}
}

func TestRetriesThenSucceeds(t *testing.T) {
	for name, first := range map[string]Reply{
		"429 with retry-after": Status(429, APIError("rate_limit_error", "slow down"), "Retry-After", "0"),
		"529 overloaded":       Status(529, APIError("overloaded_error", "Overloaded")),
		"503":                  Status(503, APIError("api_error", "unavailable")),
	} {
		t.Run(name, func(t *testing.T) {
			f := NewFakeServer(t, first, Stream(TextMessage(3, 1, "ok")...))
			m, logs := newModel(t, f.URL, nil)
			resp, _, err := respond(t.Context(), m, userRequest("hi"))
			if err != nil || resp.Text != "ok" {
				t.Fatalf("response %+v, error %v", resp, err)
			}
			if f.Count() != 2 {
				t.Errorf("%d requests, want 2", f.Count())
			}
			status := strings.Fields(name)[0]
			if l := logs.String(); strings.Count(l, "\n") != 1 || !strings.Contains(l, "retrying") ||
				!strings.Contains(l, "model=fake-model status="+status+" attempt=1") || strings.Contains(l, testKey) {
				t.Errorf("want one retry line: %s", l)
			}
		})
	}
	t.Run("500 three times then success", func(t *testing.T) {
		f := NewFakeServer(t, Status(500, APIError("api_error", "x")), Status(500, APIError("api_error", "x")), Status(500, APIError("api_error", "x")),
			Stream(TextMessage(3, 1, "ok")...))
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
		f := NewFakeServer(t, Status(500, APIError("api_error", "x")), Stream(TextMessage(3, 1, "ok")...))
		m, _ := newModel(t, f.URL, func(c *Config) { c.MaxRetries = -1 })
		if _, _, err := respond(t.Context(), m, userRequest("hi")); err == nil || f.Count() != 1 {
			t.Errorf("error %v after %d requests, want an error after 1", err, f.Count())
		}
	})
	t.Run("a successful stream is never sent again", func(t *testing.T) {
		ok := Stream(TextMessage(3, 1, "ok")...)
		f := NewFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Should-Retry", "true")
			ok(w, r)
		})
		m, _ := newModel(t, f.URL, nil)
		if resp, _, err := respond(t.Context(), m, userRequest("hi")); err != nil || resp.Text != "ok" || f.Count() != 1 {
			t.Errorf("response %+v, error %v after %d requests, want ok after 1", resp, err, f.Count())
		}
	})
}

// The SDK waits what the server's Retry-After or retry-after-ms asks
// rather than its own backoff, and does not retry when the server asks for
// longer than the cap.
func TestRetryAfter(t *testing.T) {
	for name, tc := range map[string]struct {
		header   []string
		min, max time.Duration // the gap before the retry
	}{
		"retry-after-ms": {[]string{"Retry-After-Ms", "20"}, 20 * time.Millisecond, 300 * time.Millisecond},
		"seconds":        {[]string{"Retry-After", "1"}, time.Second, 3 * time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			f := NewFakeServer(t, Status(429, APIError("rate_limit_error", "slow down"), tc.header...),
				Stream(TextMessage(1, 1, "ok")...))
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
	t.Run("the SDK's backoff is capped", func(t *testing.T) {
		f := NewFakeServer(t, Status(529, APIError("overloaded_error", "Overloaded")), Stream(TextMessage(1, 1, "ok")...))
		m, _ := newModel(t, f.URL, nil)
		SetMaxRetryDelay(m, 30*time.Millisecond)
		if _, _, err := respond(t.Context(), m, userRequest("hi")); err != nil {
			t.Fatal(err)
		}
		// The SDK's own first backoff is 375–500ms.
		if gap := f.Gap(1); gap < 30*time.Millisecond || gap > 300*time.Millisecond {
			t.Errorf("retried after %v, want the cap of 30ms", gap)
		}
	})
	for name, header := range map[string][]string{
		"seconds longer than the cap": {"Retry-After", "3600"},
		"a date beyond the cap":       {"Retry-After", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)},
		"ms longer than the cap":      {"Retry-After-Ms", "60000"},
	} {
		t.Run(name, func(t *testing.T) {
			f := NewFakeServer(t, Status(429, APIError("rate_limit_error", "slow down"), header...),
				Stream(TextMessage(1, 1, "ok")...))
			m, logs := newModel(t, f.URL, nil)
			SetMaxRetryDelay(m, 10*time.Second)
			// Bounded, so that a retry after the server's hour fails rather
			// than hangs.
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			start := time.Now()
			_, _, err := respond(ctx, m, userRequest("hi"))
			var e *Error
			if !errors.As(err, &e) || e.Status != 429 || f.Count() != 1 {
				t.Errorf("error %v after %d requests, want a 429 after 1", err, f.Count())
			}
			if el := time.Since(start); el > 3*time.Second {
				t.Errorf("returned after %v", el)
			}
			if strings.Contains(logs.String(), "retrying") {
				t.Errorf("a retry was logged: %s", logs)
			}
		})
	}
}

func TestContextCancelledMidStream(t *testing.T) {
	f := NewFakeServer(t, Hang(MessageStart(3), TextStart(0), TextDelta(0, "Hi")))
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
	f := NewFakeServer(t, Status(500, APIError("api_error", "x"), "Retry-After", "5"))
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
	if f.Count() != 1 {
		t.Errorf("%d requests, want 1", f.Count())
	}
}

func TestBadRequests(t *testing.T) {
	m, _ := newModel(t, "http://127.0.0.1:1", nil)
	for want, req := range map[string]agent.ModelRequest{
		"tool broken: parameters are not a JSON object": {Tools: []agent.Tool{{Name: "broken", Parameters: json.RawMessage(`[1,2]`)}}},
		"history message 0: tool call lookup: arguments are not a JSON object": {History: []*store.Message{
			{Role: store.RoleAssistant, ToolCalls: []store.ToolCall{{ID: "t", Name: "lookup", Arguments: `"x"`}}}}},
		"history message 1: a tool result without a tool call id": {History: []*store.Message{
			{Role: store.RoleUser, Text: "hi"}, {Role: store.RoleTool, Text: "r"}}},
	} {
		if _, _, err := respond(t.Context(), m, req); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error = %v, want %q", err, want)
		}
	}
}

// A tool without parameters gets the empty object schema the API requires.
func TestToolWithoutParameters(t *testing.T) {
	f := NewFakeServer(t, Stream(TextMessage(1, 1, "ok")...))
	m, _ := newModel(t, f.URL, nil)
	req := userRequest("hi")
	req.Tools = []agent.Tool{{Name: "list_plans"}}
	if _, _, err := respond(t.Context(), m, req); err != nil {
		t.Fatal(err)
	}
	if got, want := f.Request(t, 0)["tools"], jsonOf(t, `[{"name":"list_plans","input_schema":{"type":"object"}}]`); !reflect.DeepEqual(got, want) {
		t.Errorf("tools = %v, want %v", got, want)
	}
}
