package kindserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/kindkit/kindkit/internal/wstest"
)

// messagesAPI is a scripted Anthropic Messages API: request i gets
// streams[i], as server-sent events in Anthropic's wire format.
type messagesAPI struct {
	URL     string
	mu      sync.Mutex
	bodies  []map[string]any
	headers []http.Header
}

func newMessagesAPI(t *testing.T, streams ...[]string) *messagesAPI {
	f := &messagesAPI{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
			http.NotFound(w, r)
			return
		}
		var body map[string]any
		raw, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(raw, &body); err != nil {
			http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"not JSON"}}`, http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		n := len(f.bodies)
		f.bodies = append(f.bodies, body)
		f.headers = append(f.headers, r.Header.Clone())
		f.mu.Unlock()
		if n >= len(streams) {
			http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"unscripted"}}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		for _, ev := range streams[n] {
			io.WriteString(w, ev)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(hs.Close)
	f.URL = hs.URL
	return f
}

func (f *messagesAPI) request(i int) (map[string]any, http.Header) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i >= len(f.bodies) {
		return nil, nil
	}
	return f.bodies[i], f.headers[i]
}

func sse(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }

// dig reads v at a path of object keys and array indices; nil when absent.
func dig(v any, path ...any) any {
	for _, k := range path {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }

// -model anthropic runs a whole card cycle: the model raises
// request_choices by tool_use, the visitor submits, the model answers with
// text; the key comes from $ANTHROPIC_API_KEY and is never logged.
func TestAnthropicModel(t *testing.T) {
	const key = "sk-ant-kindserver-secret-42"
	args := `{"questions":[{"question":"Which plan fits best?","header":"Plan","options":[{"label":"Starter"},{"label":"Team"}]}],"reason":"to tailor the answer"}`
	start := func(in int) string {
		return sse("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-test","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"output_tokens":1}}}`, in))
	}
	api := newMessagesAPI(t,
		[]string{
			start(30),
			sse("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_ks","name":"request_choices","input":{}}}`),
			sse("ping", `{"type": "ping"}`),
			sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":`+jsonString(args[:40])+`}}`),
			sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":`+jsonString(args[40:])+`}}`),
			sse("content_block_stop", `{"type":"content_block_stop","index":0}`),
			sse("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":20}}`),
			sse("message_stop", `{"type":"message_stop"}`),
		},
		[]string{
			start(50),
			sse("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
			sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Team "}}`),
			sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"it is."}}`),
			sse("content_block_stop", `{"type":"content_block_stop","index":0}`),
			sse("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":4}}`),
			sse("message_stop", `{"type":"message_stop"}`),
		})
	t.Setenv("ANTHROPIC_API_KEY", key)
	base, stdout, logs := serveLogged(t, "-store", "memory", "-model", "anthropic", "-anthropic-base-url", api.URL,
		"-anthropic-model", "claude-test", "-system", "Be brief.")

	c := wstest.Dial(t, "ws"+strings.TrimPrefix(base, "http")+"ws")
	c.Send(`{"action":"create_conversation_session","requestId":"r1","agentId":"a","supports":["choice_chips"]}`)
	sid := wstest.Path(c.Expect("immediate_response")[0], "data", "sessionId").(string)
	c.Send(`{"action":"send_message","requestId":"r2","sessionId":"` + sid + `","message":"I'd like a quote"}`)
	evs := c.Expect("immediate_response", "interaction_required", "stream_chunk")
	card := wstest.Path(evs[1], "data", "data")
	if wstest.Path(card, "kind") != "choices" || wstest.Path(card, "reason") != "to tailor the answer" {
		t.Fatalf("card = %v", card)
	}
	iid := wstest.Path(card, "interactionId").(string)
	c.Send(`{"action":"submit_interaction","requestId":"r3","sessionId":"` + sid + `","interactionId":"` + iid + `","values":{"answers":[{"header":"Plan","options":["Team"]}]}}`)
	c.Expect("immediate_response", "stream_chunk")
	text, terminal := c.Turn()
	if terminal["type"] != "eventual_response" || text != "Team it is." {
		t.Fatalf("turn ended with %v after text %q", terminal, text)
	}
	if got := wstest.Path(terminal, "data", "data", "usage", "promptTokens"); got != float64(80) {
		t.Errorf("usage promptTokens = %v, want 30+50", got)
	}

	first, h := api.request(0)
	second, _ := api.request(1)
	if first == nil || second == nil {
		t.Fatal("the model was not called twice")
	}
	if h.Get("Authorization") != "Bearer "+key {
		t.Errorf("the key from $ANTHROPIC_API_KEY was not sent: Authorization %q", h.Get("Authorization"))
	}
	if first["model"] != "claude-test" || first["stream"] != true || dig(first, "system", 0, "text") != "Be brief." {
		t.Errorf("first request = %v", first)
	}
	var offered []string
	for _, tool := range first["tools"].([]any) {
		offered = append(offered, wstest.Path(tool, "name").(string))
	}
	if !strings.Contains(strings.Join(offered, ","), "request_choices") {
		t.Errorf("tools offered = %v", offered)
	}
	msgs, _ := second["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("second request messages = %v", msgs)
	}
	use, result := dig(msgs[1], "content", 0), dig(msgs[2], "content", 0)
	if wstest.Path(msgs[1], "role") != "assistant" || wstest.Path(use, "type") != "tool_use" || wstest.Path(use, "id") != "toolu_ks" ||
		wstest.Path(use, "input", "reason") != "to tailor the answer" {
		t.Errorf("assistant message = %v", msgs[1])
	}
	content, _ := dig(result, "content", 0, "text").(string)
	if wstest.Path(msgs[2], "role") != "user" || wstest.Path(result, "type") != "tool_result" || wstest.Path(result, "tool_use_id") != "toolu_ks" ||
		!strings.Contains(content, `"status":"submitted"`) {
		t.Errorf("tool result message = %v", msgs[2])
	}

	l := logs.String()
	if !strings.Contains(l, "kind=anthropic") || !strings.Contains(l, "model=claude-test") || !strings.Contains(l, "key=true") {
		t.Errorf("the model line does not say kind, model and that a key is set:\n%s", l)
	}
	if strings.Contains(l+stdout, key) {
		t.Errorf("the key is printed:\n%s", l)
	}
}
