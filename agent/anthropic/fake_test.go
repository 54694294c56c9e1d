package anthropic

// A fake Anthropic Messages API server for this package's tests and, being
// exported from a _test file, for the end-to-end tests of package
// anthropic_test. Its streams are server-sent events in the wire format
// Anthropic documents for POST /v1/messages with "stream": true:
//
//	event: message_start         data: {"type":"message_start","message":{…,"usage":{…}}}
//	event: content_block_start   data: {"type":"content_block_start","index":0,"content_block":{…}}
//	event: ping                  data: {"type":"ping"}
//	event: content_block_delta   data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta"|"input_json_delta",…}}
//	event: content_block_stop    data: {"type":"content_block_stop","index":0}
//	event: message_delta         data: {"type":"message_delta","delta":{"stop_reason":…},"usage":{"output_tokens":…}}
//	event: message_stop          data: {"type":"message_stop"}
//	event: error                 data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Reply answers one request.
type Reply func(w http.ResponseWriter, r *http.Request)

// FakeServer answers POST /v1/messages with its replies, one per request,
// the last one for every later request, and records the requests.
type FakeServer struct {
	URL string // the base URL, without /v1

	mu      sync.Mutex
	bodies  [][]byte
	headers []http.Header
	times   []time.Time
	replies []Reply
}

// NewFakeServer starts a fake server that stops when the test ends.
func NewFakeServer(t testing.TB, replies ...Reply) *FakeServer {
	t.Helper()
	if len(replies) == 0 {
		t.Fatal("a fake server needs a reply")
	}
	f := &FakeServer{replies: replies}
	hs := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(hs.Close)
	f.URL = hs.URL
	return f
}

func (f *FakeServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"type":"error","error":{"type":"not_found_error","message":"Not found"}}`)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	f.mu.Lock()
	n := len(f.bodies)
	f.bodies = append(f.bodies, body)
	f.headers = append(f.headers, r.Header.Clone())
	f.times = append(f.times, time.Now())
	reply := f.replies[min(n, len(f.replies)-1)]
	f.mu.Unlock()
	reply(w, r)
}

// Count is how many requests arrived.
func (f *FakeServer) Count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies)
}

// Request is request i's body, decoded.
func (f *FakeServer) Request(t testing.TB, i int) map[string]any {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if i >= len(f.bodies) {
		t.Fatalf("request %d: only %d arrived", i, len(f.bodies))
	}
	var v map[string]any
	if err := json.Unmarshal(f.bodies[i], &v); err != nil {
		t.Fatalf("request %d is not JSON: %v: %s", i, err, f.bodies[i])
	}
	return v
}

// Header is request i's headers.
func (f *FakeServer) Header(i int) http.Header {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.headers[i]
}

// Gap is the time between requests i-1 and i.
func (f *FakeServer) Gap(i int) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.times[i].Sub(f.times[i-1])
}

// writeSSE writes the events (each whole, as the helpers below make them),
// flushing each.
func writeSSE(w http.ResponseWriter, events []string) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	for _, e := range events {
		io.WriteString(w, e)
		if fl != nil {
			fl.Flush()
		}
	}
}

// Stream answers with the events; the connection then ends cleanly.
func Stream(events ...string) Reply {
	return func(w http.ResponseWriter, r *http.Request) { writeSSE(w, events) }
}

// Break sends the events and then drops the connection mid-stream.
func Break(events ...string) Reply {
	return func(w http.ResponseWriter, r *http.Request) {
		writeSSE(w, events)
		panic(http.ErrAbortHandler)
	}
}

// Hang sends the events and then waits until the client goes away.
func Hang(events ...string) Reply {
	return func(w http.ResponseWriter, r *http.Request) {
		writeSSE(w, events)
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	}
}

// Status answers with a status, a body and header pairs.
func Status(code int, body string, header ...string) Reply {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		if strings.HasPrefix(body, "{") {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

// APIError is the body of an error answer, e.g. APIError("rate_limit_error", "…").
func APIError(typ, message string) string {
	return `{"type":"error","error":{"type":` + quote(typ) + `,"message":` + quote(message) + `},"request_id":"req_011CTest"}`
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// event is one server-sent event.
func event(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }

// MessageStart opens the message, reporting its input tokens.
func MessageStart(inputTokens int) string {
	return event("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_01Test","type":"message","role":"assistant","content":[],"model":"fake-model","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`, inputTokens))
}

// Ping is the keep-alive event.
func Ping() string { return event("ping", `{"type": "ping"}`) }

// TextStart opens a text block.
func TextStart(index int) string {
	return event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, index))
}

// TextDelta is a piece of a text block.
func TextDelta(index int, s string) string {
	return event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%s}}`, index, quote(s)))
}

// ToolStart opens a tool_use block; its input arrives in InputDeltas.
func ToolStart(index int, id, name string) string {
	return event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%s,"name":%s,"input":{}}}`, index, quote(id), quote(name)))
}

// InputDelta is a piece of a tool_use block's input JSON.
func InputDelta(index int, partial string) string {
	return event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, index, quote(partial)))
}

// BlockStop closes a block.
func BlockStop(index int) string {
	return event("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, index))
}

// MessageDelta ends the message with a stop reason and the output tokens.
func MessageDelta(stopReason string, outputTokens int) string {
	return event("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%s,"stop_sequence":null},"usage":{"output_tokens":%d}}`, quote(stopReason), outputTokens))
}

// MessageStop is the last event.
func MessageStop() string { return event("message_stop", `{"type":"message_stop"}`) }

// ErrorEvent is an error in a stream, e.g. ErrorEvent("overloaded_error", "Overloaded").
func ErrorEvent(typ, message string) string {
	return event("error", `{"type":"error","error":{"type":`+quote(typ)+`,"message":`+quote(message)+`}}`)
}

// TextMessage is a whole streamed message of one text block in pieces.
func TextMessage(inputTokens, outputTokens int, pieces ...string) []string {
	evs := []string{MessageStart(inputTokens), TextStart(0), Ping()}
	for _, p := range pieces {
		evs = append(evs, TextDelta(0, p))
	}
	return append(evs, BlockStop(0), MessageDelta("end_turn", outputTokens), MessageStop())
}

// ToolMessage is a whole streamed message of one tool_use block whose input
// arrives in the pieces.
func ToolMessage(inputTokens, outputTokens int, id, name string, pieces ...string) []string {
	evs := []string{MessageStart(inputTokens), ToolStart(0, id, name)}
	for _, p := range pieces {
		evs = append(evs, InputDelta(0, p))
	}
	return append(evs, BlockStop(0), MessageDelta("tool_use", outputTokens), MessageStop())
}

// NewTestClient is a client of its own, whose idle connections close when
// the test ends (so goleak sees no transport goroutines).
func NewTestClient(t testing.TB) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// SetMaxRetryDelay caps m's retry delays (the SDK's backoff and the
// Retry-After it waits for) at d, shortening them for tests.
func SetMaxRetryDelay(m *Model, d time.Duration) { m.maxDelay = d }
