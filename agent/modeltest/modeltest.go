package modeltest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/syncbuf"
	"github.com/kindkit/kindkit/knowledge"
	"github.com/kindkit/kindkit/store"
)

// Run runs the suite against h's adapter.
func Run(t *testing.T, h Harness) {
	tests := []struct {
		name string
		f    func(t *testing.T, h Harness)
	}{
		{"StreamsText", testStreamsText},
		{"OneToolCall", testOneToolCall},
		{"SeveralToolCalls", testSeveralToolCalls},
		{"ErrorResult", testErrorResult},
		{"History", testHistory},
		{"Knowledge", testKnowledge},
		{"BadRequests", testBadRequests},
		{"Failures", testFailures},
		{"ConnectionRefused", testConnectionRefused},
		{"RetriesThenSucceeds", testRetriesThenSucceeds},
		{"CancelMidStream", testCancelMidStream},
		{"CancelDuringBackoff", testCancelDuringBackoff},
		{"EngineCard", testEngineCard},
		{"EngineHostTools", testEngineHostTools},
		{"EngineDecisions", testEngineDecisions},
		{"EngineModelFailure", testEngineModelFailure},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.f(t, h) })
	}
}

const (
	modelName = "fake-model"
	testKey   = "sk-modeltest-secret-0123456789"
	system    = "You are a test."
	// visitorText is a message that no error or log line may quote.
	visitorText = "my card number is 4111 1111 1111 1111"
)

// model is h's adapter calling url, with the suite's key, system prompt
// and a logger of its own, retry delays capped at 5ms; edit adjusts the
// config.
func (h Harness) model(t *testing.T, url string, edit func(*Config)) (agent.Model, *syncbuf.Buffer) {
	t.Helper()
	logs := &syncbuf.Buffer{}
	cfg := Config{Model: modelName, APIKey: testKey, System: system, MaxRetryDelay: 5 * time.Millisecond,
		HTTPClient: Client(t), Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	if edit != nil {
		edit(&cfg)
	}
	return h.New(t, url, cfg), logs
}

// UserRequest is a request of one user message, text, at position 7 of
// conversation c1.
func UserRequest(text string) agent.ModelRequest {
	return agent.ModelRequest{ConversationID: "c1", Position: 7,
		History: []*store.Message{{Role: store.RoleUser, Text: text}}}
}

// Respond calls m and collects the onText pieces.
func Respond(ctx context.Context, m agent.Model, req agent.ModelRequest) (agent.ModelResponse, []string, error) {
	var pieces []string
	resp, err := m.Respond(ctx, req, func(s string) { pieces = append(pieces, s) })
	return resp, pieces, err
}

// sent is request i of s, read by h.
func (h Harness) sent(t *testing.T, s *Server, i int) Request {
	t.Helper()
	return h.Read(t, s.Body(t, i))
}

// jsonEqual says whether a and b are the same JSON value.
func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// sameCalls says whether got are want, arguments compared as JSON.
func sameCalls(got, want []store.ToolCall) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].ID != want[i].ID || got[i].Name != want[i].Name || !jsonEqual(got[i].Arguments, want[i].Arguments) {
			return false
		}
	}
	return true
}

// checkAnswered checks that req sends calls back to the model as the
// assistant's, each followed, before any other message, by its result
// paired by call id: the result's text as it is, and the provider's error
// flag where its format has one. want holds each call's result.
func (h Harness) checkAnswered(t *testing.T, req Request, calls []store.ToolCall, want map[string]*store.Message) {
	t.Helper()
	at := -1
	for i, m := range req.Messages {
		if m.Role == store.RoleAssistant && len(m.ToolCalls) > 0 && m.ToolCalls[0].ID == calls[0].ID {
			at = i
		}
	}
	if at < 0 {
		t.Fatalf("no assistant message with the calls %+v in %+v", calls, req.Messages)
	}
	if got := req.Messages[at].ToolCalls; !sameCalls(got, calls) {
		t.Errorf("the assistant's calls sent back = %+v, want %+v", got, calls)
	}
	results := req.Messages[at+1:]
	if len(results) < len(calls) {
		t.Fatalf("%d messages after the calls, want a result for each of %d: %+v", len(results), len(calls), results)
	}
	answered := map[string]bool{}
	for _, got := range results[:len(calls)] {
		w := want[got.ToolCallID]
		switch {
		case got.Role != store.RoleTool:
			t.Errorf("a %s message among the results of the calls: %+v", got.Role, got)
		case w == nil:
			t.Errorf("a result for call %q, which is not one of the calls: %+v", got.ToolCallID, got)
		case answered[got.ToolCallID]:
			t.Errorf("two results for call %q", got.ToolCallID)
		default:
			answered[got.ToolCallID] = true
			if got.Text != w.Text {
				t.Errorf("call %s's result = %q, want %q", got.ToolCallID, got.Text, w.Text)
			}
			if wantFlag := h.ErrorFlag && w.IsError; got.IsError != wantFlag {
				t.Errorf("call %s's result has the error flag %v, want %v", got.ToolCallID, got.IsError, wantFlag)
			}
		}
	}
	for _, c := range calls {
		if !answered[c.ID] {
			t.Errorf("call %s's result did not follow the calls: %+v", c.ID, results)
		}
	}
}

func testStreamsText(t *testing.T, h Harness) {
	s := h.server(t, Reply{Text: []string{"Hel", "lo, ", "world"}, Usage: store.Usage{PromptTokens: 12, CompletionTokens: 3}})
	m, _ := h.model(t, s.URL, nil)
	resp, pieces, err := Respond(t.Context(), m, UserRequest("hi"))
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
	req := h.sent(t, s, 0)
	if req.Model != modelName || !req.Stream {
		t.Errorf("request model %q, stream %v; want %s, streamed", req.Model, req.Stream, modelName)
	}
	if !reflect.DeepEqual(req.System, []string{system}) {
		t.Errorf("system = %q, want the prompt", req.System)
	}
	if want := []Message{{Role: store.RoleUser, Text: "hi"}}; !reflect.DeepEqual(req.Messages, want) {
		t.Errorf("messages = %+v, want %+v", req.Messages, want)
	}
	if len(req.Tools) != 0 {
		t.Errorf("tools sent although none offered: %+v", req.Tools)
	}
}

const choicesSchema = `{"type":"object","properties":{"questions":{"type":"array","minItems":1,"maxItems":4,"items":{"type":"object"}},"reason":{"type":"string"}},"required":["questions"]}`

// One tool call, its arguments in pieces, and its result back to the
// model in the next request.
func testOneToolCall(t *testing.T, h Harness) {
	args := `{"questions":[{"question":"Which plan?","header":"Plan","options":["A","B"]}],"reason":"to help"}`
	s := h.server(t,
		Reply{Calls: []Call{{ID: "call_01", Name: "request_choices", Args: []string{args[:20], args[20:50], args[50:]}}},
			Usage: store.Usage{PromptTokens: 30, CompletionTokens: 9}},
		Reply{Text: []string{"Plan ", "B, noted."}, Usage: store.Usage{PromptTokens: 40, CompletionTokens: 4}},
	)
	m, _ := h.model(t, s.URL, nil)
	tools := []agent.Tool{{Name: "request_choices", Description: "Ask the visitor.", Parameters: json.RawMessage(choicesSchema)}}
	req := UserRequest("a quote please")
	req.Tools = tools
	resp, pieces, err := Respond(t.Context(), m, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(pieces) != 0 || resp.Text != "" {
		t.Errorf("text %q / pieces %q for a tool call", resp.Text, pieces)
	}
	calls := []store.ToolCall{{ID: "call_01", Name: "request_choices", Arguments: args}}
	if !reflect.DeepEqual(resp.ToolCalls, calls) {
		t.Errorf("tool calls = %+v, want %+v", resp.ToolCalls, calls)
	}
	if resp.Usage != (store.Usage{PromptTokens: 30, CompletionTokens: 9}) {
		t.Errorf("usage = %+v, want 30/9", resp.Usage)
	}

	result := &store.Message{Role: store.RoleTool, ToolCallID: "call_01", ToolName: "request_choices",
		Text: `{"status":"submitted","values":{"answers":[{"header":"Plan","options":["B"]}]}}`}
	req.History = append(req.History, &store.Message{Role: store.RoleAssistant, ToolCalls: resp.ToolCalls}, result)
	resp, pieces, err = Respond(t.Context(), m, req)
	if err != nil {
		t.Fatal(err)
	}
	want := agent.ModelResponse{Text: "Plan B, noted.", Usage: store.Usage{PromptTokens: 40, CompletionTokens: 4}, Position: 7}
	if !reflect.DeepEqual(resp, want) || !reflect.DeepEqual(pieces, []string{"Plan ", "B, noted."}) {
		t.Errorf("second response = %+v, pieces %q; want %+v", resp, pieces, want)
	}
	sent := h.sent(t, s, 1)
	if len(sent.Messages) != 3 || !reflect.DeepEqual(sent.Messages[0], Message{Role: store.RoleUser, Text: "a quote please"}) {
		t.Errorf("messages = %+v, want the user's, the call and its result", sent.Messages)
	}
	h.checkAnswered(t, sent, calls, map[string]*store.Message{"call_01": result})
	if len(sent.Tools) != 1 || sent.Tools[0].Name != "request_choices" || sent.Tools[0].Description != "Ask the visitor." ||
		!jsonEqual(string(sent.Tools[0].Parameters), choicesSchema) {
		t.Errorf("tools = %+v, want request_choices with its description and schema", sent.Tools)
	}
}

// Several tool calls of one step, after text, all come back in order (a
// call without arguments with {}); their results, an error among them, go
// back to the model in the next request, each paired with its call.
func testSeveralToolCalls(t *testing.T, h Harness) {
	s := h.server(t,
		Reply{Text: []string{"Let me ", "check."}, Calls: []Call{
			{ID: "call_a", Name: "lookup_order", Args: []string{`{"order`, `":"A-1"}`}},
			{ID: "call_b", Name: "list_plans"},
			{ID: "call_c", Name: "lookup_order", Args: []string{`{"order":"B-2"}`}},
		}, Usage: store.Usage{PromptTokens: 50, CompletionTokens: 60}},
		Reply{Text: []string{"A-1 has shipped."}},
	)
	m, _ := h.model(t, s.URL, nil)
	req := UserRequest("where are my orders?")
	resp, pieces, err := Respond(t.Context(), m, req)
	if err != nil {
		t.Fatal(err)
	}
	calls := []store.ToolCall{
		{ID: "call_a", Name: "lookup_order", Arguments: `{"order":"A-1"}`},
		{ID: "call_b", Name: "list_plans", Arguments: `{}`},
		{ID: "call_c", Name: "lookup_order", Arguments: `{"order":"B-2"}`},
	}
	want := agent.ModelResponse{Text: "Let me check.", ToolCalls: calls, Usage: store.Usage{PromptTokens: 50, CompletionTokens: 60}, Position: 7}
	if !reflect.DeepEqual(resp, want) || !reflect.DeepEqual(pieces, []string{"Let me ", "check."}) {
		t.Errorf("response = %+v, pieces %q; want %+v", resp, pieces, want)
	}

	results := map[string]*store.Message{
		"call_a": {Role: store.RoleTool, ToolCallID: "call_a", ToolName: "lookup_order", Text: `{"status":"shipped"}`},
		"call_b": {Role: store.RoleTool, ToolCallID: "call_b", ToolName: "list_plans", Text: "tool list_plans failed: plans are down", IsError: true},
		"call_c": {Role: store.RoleTool, ToolCallID: "call_c", ToolName: "lookup_order", Text: `{"status":"packed"}`},
	}
	req.History = append(req.History, &store.Message{Role: store.RoleAssistant, Text: resp.Text, ToolCalls: resp.ToolCalls},
		results["call_a"], results["call_b"], results["call_c"])
	if _, _, err := Respond(t.Context(), m, req); err != nil {
		t.Fatal(err)
	}
	sent := h.sent(t, s, 1)
	h.checkAnswered(t, sent, calls, results)
	if a := sent.Messages[1]; a.Role != store.RoleAssistant || a.Text != "Let me check." {
		t.Errorf("the assistant's text before its calls = %+v, want Let me check.", a)
	}
}

// A tool result that is an error (a failed tool, a rejected call with the
// person's message) reaches the model with its message as it is and the
// provider's error flag; a result that is not one has no flag.
func testErrorResult(t *testing.T, h Harness) {
	s := h.server(t, Reply{Text: []string{"Sorry, I will refund 20."}})
	m, _ := h.model(t, s.URL, nil)
	calls := []store.ToolCall{
		{ID: "call_refund", Name: "send_refund", Arguments: `{"amount":200}`},
		{ID: "call_note", Name: "add_note", Arguments: `{"note":"refund asked"}`},
	}
	results := map[string]*store.Message{
		"call_refund": {Role: store.RoleTool, ToolCallID: "call_refund", ToolName: "send_refund",
			Text: "Rejected by the person: the amount is wrong, refund 20, not 200", IsError: true},
		"call_note": {Role: store.RoleTool, ToolCallID: "call_note", ToolName: "add_note", Text: "noted"},
	}
	req := UserRequest("refund my order")
	req.History = append(req.History, &store.Message{Role: store.RoleAssistant, ToolCalls: calls}, results["call_refund"], results["call_note"])
	if _, _, err := Respond(t.Context(), m, req); err != nil {
		t.Fatal(err)
	}
	h.checkAnswered(t, h.sent(t, s, 0), calls, results)
}

// The history goes to the model in order, each message with its text, an
// empty stored argument list as {}; what is not the model's conversation
// (other roles, nil) is left out.
func testHistory(t *testing.T, h Harness) {
	s := h.server(t, Reply{Text: []string{"ok"}})
	m, _ := h.model(t, s.URL, nil)
	req := agent.ModelRequest{History: []*store.Message{
		{Role: store.RoleUser, Text: "one"},
		{Role: store.RoleAssistant, Text: "Let me check.", ToolCalls: []store.ToolCall{{ID: "a", Name: "lookup", Arguments: ""}}},
		{Role: store.RoleTool, ToolCallID: "a", ToolName: "lookup", Text: "found"},
		{Role: store.RoleAssistant, Text: "Found it."},
		{Role: store.RoleReply, Text: "Let me check. Found it."},
		nil,
		{Role: store.RoleUser, Text: "two"},
	}}
	if _, _, err := Respond(t.Context(), m, req); err != nil {
		t.Fatal(err)
	}
	got := h.sent(t, s, 0).Messages
	want := []Message{
		{Role: store.RoleUser, Text: "one"},
		{Role: store.RoleAssistant, Text: "Let me check.", ToolCalls: []store.ToolCall{{ID: "a", Name: "lookup", Arguments: "{}"}}},
		{Role: store.RoleTool, Text: "found", ToolCallID: "a"},
		{Role: store.RoleAssistant, Text: "Found it."},
		{Role: store.RoleUser, Text: "two"},
	}
	if len(got) == len(want) && len(got[1].ToolCalls) == 1 && jsonEqual(got[1].ToolCalls[0].Arguments, "{}") {
		got[1].ToolCalls[0].Arguments = "{}" // compared as JSON
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("messages =\n%+v\nwant\n%+v", got, want)
	}
}

// The turn's knowledge reaches the model as system text after the prompt,
// each document under its source and cut to a bounded size.
func testKnowledge(t *testing.T, h Harness) {
	s := h.server(t, Reply{Text: []string{"ok"}})
	m, _ := h.model(t, s.URL, nil)
	req := UserRequest("refund?")
	req.Knowledge = []knowledge.Doc{{Source: "returns.md", Content: "Returns within 30 days."}, {Source: "big.md", Content: strings.Repeat("é", 3000)}}
	if _, _, err := Respond(t.Context(), m, req); err != nil {
		t.Fatal(err)
	}
	sent := h.sent(t, s, 0)
	if len(sent.System) != 2 || sent.System[0] != system {
		t.Fatalf("system = %q, want the prompt, then the knowledge", sent.System)
	}
	prompt := sent.System[1]
	if !strings.Contains(prompt, "[returns.md]\nReturns within 30 days.") || !strings.Contains(prompt, "[big.md]\n") {
		t.Errorf("knowledge prompt = %q", prompt)
	}
	if big := prompt[strings.Index(prompt, "[big.md]"):]; len(big) > 4100 || !utf8.ValidString(big) || !strings.HasSuffix(big, " …") {
		t.Errorf("the big document is not cut cleanly: %d bytes, valid %v", len(big), utf8.ValidString(big))
	}
	if want := []Message{{Role: store.RoleUser, Text: "refund?"}}; !reflect.DeepEqual(sent.Messages, want) {
		t.Errorf("messages = %+v, want the user's only", sent.Messages)
	}
}

// A request the adapter cannot build is an error before any HTTP request.
func testBadRequests(t *testing.T, h Harness) {
	s := h.server(t, Reply{Text: []string{"ok"}})
	m, _ := h.model(t, s.URL, nil)
	for want, req := range map[string]agent.ModelRequest{
		"tool broken: parameters are not a JSON object": {Tools: []agent.Tool{{Name: "broken", Parameters: json.RawMessage(`[1,2]`)}}},
		"history message 1: a tool result without a tool call id": {History: []*store.Message{
			{Role: store.RoleUser, Text: "hi"}, {Role: store.RoleTool, Text: "r"}}},
	} {
		_, _, err := Respond(t.Context(), m, req)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), h.Provider+": ") {
			t.Errorf("error = %v, want %q", err, want)
		}
	}
	if s.Count() != 0 {
		t.Errorf("%d requests sent", s.Count())
	}
}

// Every failure is an error that names the provider and the model and says
// what happened (a status and the provider's message, a broken stream),
// never a panic, and never quotes the key or the visitor's text, in the
// error or the log. An answer is retried only before its stream begins.
func testFailures(t *testing.T, h Harness) {
	badArgs := `{"questions":[{"header":`
	for _, tc := range []struct {
		name       string
		reply      Reply
		maxRetries int
		wantErr    []string // substrings of the error
		wantStatus int      // the status the error carries; -1: not checked
		whole      bool     // the stream was whole: the error must not say it broke
		wantCount  int
		wantPieces []string
	}{
		{name: "400 is not retried",
			reply:      Reply{Status: 400, Error: "messages: something is wrong"},
			maxRetries: 3,
			wantErr:    []string{"model " + modelName, "HTTP 400 Bad Request", "messages: something is wrong"},
			wantStatus: 400, wantCount: 1},
		{name: "401 is not retried, and the echoed key is scrubbed",
			reply:      Reply{Status: 401, Error: "invalid API key " + testKey},
			maxRetries: 3,
			wantErr:    []string{"HTTP 401 Unauthorized", "invalid API key [redacted]"},
			wantStatus: 401, wantCount: 1},
		{name: "429 forever fails after MaxRetries+1 requests",
			reply:      Reply{Status: 429, Error: "slow down", Header: []string{"Retry-After", "0"}},
			maxRetries: 2,
			wantErr:    []string{"HTTP 429 Too Many Requests", "slow down", "(after 3 attempts)"},
			wantStatus: 429, wantCount: 3},
		{name: "500 forever fails after MaxRetries+1 requests",
			reply:      Reply{Status: 500, Error: "the server had an error"},
			maxRetries: 3,
			wantErr:    []string{"HTTP 500 Internal Server Error", "the server had an error", "(after 4 attempts)"},
			wantStatus: 500, wantCount: 4},
		{name: "502 from a proxy without a JSON body is retried",
			reply:      Reply{Status: 502, Body: "<html>Bad Gateway</html>"},
			maxRetries: 1,
			wantErr:    []string{"HTTP 502 Bad Gateway (after 2 attempts)"},
			wantStatus: 502, wantCount: 2},
		{name: "a stream cut after a delta is not retried",
			reply:      Reply{Text: []string{"Hello"}, End: Cut},
			maxRetries: 3,
			wantErr:    []string{"the stream broke", "unexpected EOF"},
			wantStatus: 200, wantCount: 1, wantPieces: []string{"Hello"}},
		{name: "a stream cut in a tool call",
			reply:      Reply{Calls: []Call{{ID: "call_1", Name: "lookup", Args: []string{`{"or`}}}, End: Cut},
			maxRetries: 3,
			wantErr:    []string{"the stream broke"},
			wantStatus: 200, wantCount: 1},
		{name: "a stream that ends before the answer",
			reply:      Reply{Text: []string{"Hel"}, End: Truncated},
			wantErr:    []string{"the stream ended before the model finished"},
			wantStatus: 200, wantCount: 1, wantPieces: []string{"Hel"}},
		{name: "a malformed stream",
			reply:      Reply{Text: []string{"Hel"}, End: Malformed},
			maxRetries: 3,
			wantErr:    []string{"model " + modelName},
			wantStatus: 200, wantCount: 1, wantPieces: []string{"Hel"}},
		{name: "an error event in the stream",
			reply:      Reply{Text: []string{"Hel"}, End: ErrorEvent, Error: "Overloaded"},
			maxRetries: 3,
			wantErr:    []string{"the server sent an error in the stream", "Overloaded"},
			wantStatus: -1, wantCount: 1, wantPieces: []string{"Hel"}},
		{name: "tool arguments that are not JSON",
			reply:      Reply{Calls: []Call{{ID: "call_1", Name: "request_choices", Args: []string{badArgs[:10], badArgs[10:]}}}},
			wantErr:    []string{h.Provider + ": tool call request_choices", "not JSON", strings.ReplaceAll(badArgs, `"`, `\"`)},
			wantStatus: -1, wantCount: 1, whole: true},
		{name: "a tool call without a name",
			reply:      Reply{Calls: []Call{{ID: "call_1", Args: []string{`{}`}}}},
			wantErr:    []string{h.Provider + `: tool call 0 (id "call_1") has no`, "name"},
			wantStatus: -1, wantCount: 1, whole: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := h.server(t, tc.reply)
			m, logs := h.model(t, s.URL, func(c *Config) { c.MaxRetries = tc.maxRetries })
			_, pieces, err := Respond(t.Context(), m, UserRequest(visitorText))
			if err == nil {
				t.Fatal("no error")
			}
			t.Log(err)
			if !strings.HasPrefix(err.Error(), h.Provider+": ") {
				t.Errorf("error %q does not name the provider %s", err, h.Provider)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if tc.whole && strings.Contains(err.Error(), "broke") {
				t.Errorf("error %q says the stream broke, which came whole", err)
			}
			l := logs.String()
			if strings.Contains(err.Error(), testKey) || strings.Contains(l, testKey) {
				t.Errorf("the API key leaked: error %q, logs %s", err, l)
			}
			if strings.Contains(err.Error(), visitorText) || strings.Contains(l, visitorText) {
				t.Errorf("the visitor's text leaked: error %q, logs %s", err, l)
			}
			if status, ok := h.Status(err); tc.wantStatus >= 0 && (!ok || status != tc.wantStatus) {
				t.Errorf("error %#v: status %d (the adapter's error: %v), want %d", err, status, ok, tc.wantStatus)
			}
			if got := s.Count(); got != tc.wantCount {
				t.Errorf("%d requests, want %d", got, tc.wantCount)
			}
			if !reflect.DeepEqual(pieces, tc.wantPieces) {
				t.Errorf("onText pieces = %q, want %q", pieces, tc.wantPieces)
			}
			if !strings.Contains(l, "model call failed") || !strings.Contains(l, "model="+modelName) ||
				!strings.Contains(l, fmt.Sprintf("attempt=%d", tc.wantCount)) {
				t.Errorf("no failure log line with the model and attempt %d: %s", tc.wantCount, l)
			}
			if n := strings.Count(l, "retrying"); n != tc.wantCount-1 {
				t.Errorf("%d retry log lines, want %d: %s", n, tc.wantCount-1, l)
			}
		})
	}
}

// A request that gets no answer is retried too, and its failure logged
// with status 0.
func testConnectionRefused(t *testing.T, h Harness) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	m, logs := h.model(t, "http://"+addr, func(c *Config) { c.MaxRetries = 1 })
	_, _, err = Respond(t.Context(), m, UserRequest("hi"))
	if err == nil || !strings.Contains(err.Error(), "connection refused") ||
		!strings.Contains(err.Error(), h.Provider+": model "+modelName+": request failed") || !strings.Contains(err.Error(), "(after 2 attempts)") {
		t.Fatalf("error = %v, want a connection refused after 2 attempts", err)
	}
	if status, ok := h.Status(err); !ok || status != 0 {
		t.Errorf("error %#v: status %d (the adapter's error: %v), want 0", err, status, ok)
	}
	l := logs.String()
	if strings.Count(l, "\n") != 2 || !strings.Contains(l, "retrying") || !strings.Contains(l, "status=0 attempt=1") ||
		!strings.Contains(l, "status=0 attempt=2") || strings.Contains(l, testKey) {
		t.Errorf("want a retry line for attempt 1 and a failure line for attempt 2, both status 0: %s", l)
	}
}

func testRetriesThenSucceeds(t *testing.T, h Harness) {
	ok := Reply{Text: []string{"ok"}}
	for _, first := range []Reply{
		{Status: 429, Error: "slow down", Header: []string{"Retry-After", "0"}},
		{Status: 503, Error: "unavailable"},
	} {
		t.Run(fmt.Sprint(first.Status), func(t *testing.T) {
			s := h.server(t, first, ok)
			m, logs := h.model(t, s.URL, nil)
			resp, _, err := Respond(t.Context(), m, UserRequest("hi"))
			if err != nil || resp.Text != "ok" || s.Count() != 2 {
				t.Fatalf("response %+v, error %v after %d requests; want ok after 2", resp, err, s.Count())
			}
			if l := logs.String(); strings.Count(l, "\n") != 1 || !strings.Contains(l, "retrying") ||
				!strings.Contains(l, fmt.Sprintf("model=%s status=%d attempt=1", modelName, first.Status)) || strings.Contains(l, testKey) {
				t.Errorf("want one retry line: %s", l)
			}
		})
	}
	t.Run("500 three times then success", func(t *testing.T) {
		fail := Reply{Status: 500, Error: "x"}
		s := h.server(t, fail, fail, fail, ok)
		m, logs := h.model(t, s.URL, func(c *Config) { c.MaxRetries = 3 })
		resp, _, err := Respond(t.Context(), m, UserRequest("hi"))
		if err != nil || resp.Text != "ok" || s.Count() != 4 {
			t.Fatalf("response %+v, error %v after %d requests; want ok after 4", resp, err, s.Count())
		}
		if n := strings.Count(logs.String(), "retrying"); n != 3 {
			t.Errorf("%d retry log lines, want 3: %s", n, logs)
		}
	})
	t.Run("no retries when MaxRetries is negative", func(t *testing.T) {
		s := h.server(t, Reply{Status: 500, Error: "x"}, ok)
		m, _ := h.model(t, s.URL, func(c *Config) { c.MaxRetries = -1 })
		if _, _, err := Respond(t.Context(), m, UserRequest("hi")); err == nil || s.Count() != 1 {
			t.Errorf("error %v after %d requests, want an error after 1", err, s.Count())
		}
	})
}

// Cancelling the call's context mid-stream ends it with the context's
// error, the text so far streamed, and no retry.
func testCancelMidStream(t *testing.T, h Harness) {
	s := h.server(t, Reply{Text: []string{"Hi"}, End: Stall})
	m, _ := h.model(t, s.URL, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var pieces []string
	_, err := m.Respond(ctx, UserRequest("hi"), func(piece string) {
		pieces = append(pieces, piece)
		cancel() // while the stream stalls
	})
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), h.Provider+": ") {
		t.Fatalf("error = %v, want the provider's context.Canceled", err)
	}
	if !reflect.DeepEqual(pieces, []string{"Hi"}) || s.Count() != 1 {
		t.Errorf("pieces %q, %d requests; want Hi, 1", pieces, s.Count())
	}
}

// Cancelling the call's context while it waits to retry ends it at once.
func testCancelDuringBackoff(t *testing.T, h Harness) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// The server asks for a retry in 50s, which the cap allows, and the
	// context is cancelled once the answer is written.
	fail := h.handler(Reply{Status: 500, Error: "x", Header: []string{"Retry-After", "50"}})
	s := NewServer(t, h.Path, func(w http.ResponseWriter, r *http.Request) {
		fail(w, r)
		w.(http.Flusher).Flush()
		cancel()
	})
	m, _ := h.model(t, s.URL, func(c *Config) { c.MaxRetries = 1; c.MaxRetryDelay = time.Minute })
	done := make(chan error, 1)
	go func() {
		_, _, err := Respond(ctx, m, UserRequest("hi"))
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error = %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second): // a guard against a hang, not a measure
		t.Fatal("Respond did not return within 30s of its context's cancellation, in a 50s backoff")
	}
	if s.Count() != 1 {
		t.Errorf("%d requests, want 1", s.Count())
	}
}

// quiet is a logger that drops everything.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))
