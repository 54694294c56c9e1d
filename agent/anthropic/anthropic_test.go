package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
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

const testKey = "sk-ant-test-secret-0123456789"

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
	f := newFake(t, stream(TextMessage(1, 1, "ok")...))
	t.Setenv("ANTHROPIC_API_KEY", "sk-from-env")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "tok-from-env")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-From-Env: yes")
	t.Setenv("ANTHROPIC_PROFILE", "nope")
	m, _ := newModel(t, f.URL, func(c *Config) { c.APIKey = "" })
	if _, _, err := modeltest.Respond(t.Context(), m, modeltest.UserRequest("hi")); err != nil {
		t.Fatal(err)
	}
	h := f.Header(0)
	for _, name := range []string{"Authorization", "X-Api-Key", "X-From-Env"} {
		if v := h.Get(name); v != "" {
			t.Errorf("%s = %q taken from the environment", name, v)
		}
	}
}

// What is the Messages API's own in a request: max_tokens, the system
// prompt as text blocks, content as blocks, the version header, and the key
// as the SDK sends it. The model contract suite checks the rest.
func TestRequestShape(t *testing.T) {
	f := newFake(t, stream(TextMessage(12, 3, "ok")...))
	m, _ := newModel(t, f.URL, nil)
	if _, _, err := modeltest.Respond(t.Context(), m, modeltest.UserRequest("hi")); err != nil {
		t.Fatal(err)
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
	// The SDK sends the key as a bearer token.
	if got := f.Header(0).Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got)
	}
	if f.Header(0).Get("Anthropic-Version") == "" {
		t.Errorf("no anthropic-version header: %v", f.Header(0))
	}
}

func TestNoKeyNoAuthorization(t *testing.T) {
	f := newFake(t, stream(TextStart(0), TextDelta(0, "ok"), BlockStop(0), MessageDelta("end_turn", 0), MessageStop()))
	m, _ := newModel(t, f.URL, func(c *Config) { c.APIKey = ""; c.System = "" })
	resp, _, err := modeltest.Respond(t.Context(), m, modeltest.UserRequest("hi"))
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

// The history maps onto alternating user and assistant messages: the
// results of several calls, an error result among them, go into one user
// message, and so do consecutive user messages.
func TestHistoryMapping(t *testing.T) {
	f := newFake(t, stream(TextMessage(1, 1, "ok")...))
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
	if _, _, err := modeltest.Respond(t.Context(), m, req); err != nil {
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

// Failures of Anthropic's own: its error types in the message, its 529,
// and its two ends of a stream. The model contract suite checks the rest.
func TestFailures(t *testing.T) {
	for _, tc := range []struct {
		name       string
		reply      http.HandlerFunc
		maxRetries int
		wantErr    string
		wantStatus int
		wantCount  int
	}{
		{name: "the error type is in the message",
			reply:      modeltest.Status(400, APIError("invalid_request_error", "messages: roles must alternate")),
			wantErr:    "anthropic: model fake-model: HTTP 400 Bad Request: invalid_request_error: messages: roles must alternate",
			wantStatus: 400, wantCount: 1},
		{name: "529 overloaded is retried",
			reply:      modeltest.Status(529, APIError("overloaded_error", "Overloaded")),
			maxRetries: 2,
			wantErr:    "HTTP 529 Overloaded: overloaded_error: Overloaded (after 3 attempts)",
			wantStatus: 529, wantCount: 3},
		{name: "an error event's type is in the message",
			reply:      stream(MessageStart(5), TextStart(0), TextDelta(0, "Hel"), ErrorEvent("overloaded_error", "Overloaded")),
			wantErr:    "anthropic: model fake-model: the server sent an error in the stream: overloaded_error: Overloaded",
			wantStatus: 200, wantCount: 1},
		{name: "a stream that ends without message_stop",
			reply:   stream(MessageStart(5), TextStart(0), TextDelta(0, "Hel"), BlockStop(0), MessageDelta("end_turn", 2)),
			wantErr: "the stream ended before the model finished", wantStatus: 200, wantCount: 1},
		{name: "a 200 that is not a stream",
			reply:   modeltest.Status(200, `{"id":"msg_1","type":"message","content":[]}`),
			wantErr: "the stream ended before the model finished", wantStatus: 200, wantCount: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, tc.reply)
			m, _ := newModel(t, f.URL, func(c *Config) { c.MaxRetries = tc.maxRetries })
			_, _, err := modeltest.Respond(t.Context(), m, modeltest.UserRequest("hi"))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v does not contain %q", err, tc.wantErr)
			}
			var e *Error
			if !errors.As(err, &e) || e.Status != tc.wantStatus {
				t.Errorf("error %#v: want an *Error with status %d", err, tc.wantStatus)
			}
			if got := f.Count(); got != tc.wantCount {
				t.Errorf("%d requests, want %d", got, tc.wantCount)
			}
		})
	}
}

// Anthropic's 529 is retried, and a successful stream never is, whatever
// its x-should-retry header says.
func TestRetriesThenSucceeds(t *testing.T) {
	t.Run("529 overloaded", func(t *testing.T) {
		f := newFake(t, modeltest.Status(529, APIError("overloaded_error", "Overloaded")), stream(TextMessage(3, 1, "ok")...))
		m, logs := newModel(t, f.URL, nil)
		resp, _, err := modeltest.Respond(t.Context(), m, modeltest.UserRequest("hi"))
		if err != nil || resp.Text != "ok" || f.Count() != 2 {
			t.Fatalf("response %+v, error %v after %d requests, want ok after 2", resp, err, f.Count())
		}
		if l := logs.String(); !strings.Contains(l, "model=fake-model status=529 attempt=1") {
			t.Errorf("want a retry line of the 529: %s", l)
		}
	})
	t.Run("a successful stream is never sent again", func(t *testing.T) {
		ok := stream(TextMessage(3, 1, "ok")...)
		f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Should-Retry", "true")
			ok(w, r)
		})
		m, _ := newModel(t, f.URL, nil)
		if resp, _, err := modeltest.Respond(t.Context(), m, modeltest.UserRequest("hi")); err != nil || resp.Text != "ok" || f.Count() != 1 {
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
			f := newFake(t, modeltest.Status(429, APIError("rate_limit_error", "slow down"), tc.header...),
				stream(TextMessage(1, 1, "ok")...))
			m, _ := newModel(t, f.URL, nil)
			m.maxDelay = 5 * time.Second
			if _, _, err := modeltest.Respond(t.Context(), m, modeltest.UserRequest("hi")); err != nil {
				t.Fatal(err)
			}
			if gap := f.Gap(1); gap < tc.min || gap > tc.max {
				t.Errorf("retried after %v, want %v to %v", gap, tc.min, tc.max)
			}
		})
	}
	t.Run("the SDK's backoff is capped", func(t *testing.T) {
		f := newFake(t, modeltest.Status(529, APIError("overloaded_error", "Overloaded")), stream(TextMessage(1, 1, "ok")...))
		m, _ := newModel(t, f.URL, nil)
		m.maxDelay = 30 * time.Millisecond
		if _, _, err := modeltest.Respond(t.Context(), m, modeltest.UserRequest("hi")); err != nil {
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
			f := newFake(t, modeltest.Status(429, APIError("rate_limit_error", "slow down"), header...),
				stream(TextMessage(1, 1, "ok")...))
			m, logs := newModel(t, f.URL, nil)
			m.maxDelay = 10 * time.Second
			// Bounded, so that a retry after the server's hour fails rather
			// than hangs.
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			start := time.Now()
			_, _, err := modeltest.Respond(ctx, m, modeltest.UserRequest("hi"))
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

// The API takes a tool_use's input as an object only.
func TestBadRequests(t *testing.T) {
	m, _ := newModel(t, "http://127.0.0.1:1", nil)
	for want, req := range map[string]agent.ModelRequest{
		"history message 0: tool call lookup: arguments are not a JSON object": {History: []*store.Message{
			{Role: store.RoleAssistant, ToolCalls: []store.ToolCall{{ID: "t", Name: "lookup", Arguments: `"x"`}}}}},
	} {
		if _, _, err := modeltest.Respond(t.Context(), m, req); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error = %v, want %q", err, want)
		}
	}
}

// A tool without parameters gets the empty object schema the API requires.
func TestToolWithoutParameters(t *testing.T) {
	f := newFake(t, stream(TextMessage(1, 1, "ok")...))
	m, _ := newModel(t, f.URL, nil)
	req := modeltest.UserRequest("hi")
	req.Tools = []agent.Tool{{Name: "list_plans"}}
	if _, _, err := modeltest.Respond(t.Context(), m, req); err != nil {
		t.Fatal(err)
	}
	if got, want := f.Request(t, 0)["tools"], jsonOf(t, `[{"name":"list_plans","input_schema":{"type":"object"}}]`); !reflect.DeepEqual(got, want) {
		t.Errorf("tools = %v, want %v", got, want)
	}
}
