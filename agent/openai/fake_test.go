package openai

// A fake OpenAI-compatible chat-completions server for this package's tests
// and, being exported from a _test file, for the end-to-end tests of
// package openai_test.

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

// FakeServer answers POST /v1/chat/completions with its replies, one per
// request, the last one for every later request, and records the requests.
type FakeServer struct {
	URL string // the base URL, ending in /v1

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
	f.URL = hs.URL + "/v1"
	return f
}

func (f *FakeServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
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

// writeSSE writes the chunks as server-sent events, flushing each.
func writeSSE(w http.ResponseWriter, chunks []string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	for _, c := range chunks {
		fmt.Fprintf(w, "data: %s\n\n", c)
		if fl != nil {
			fl.Flush()
		}
	}
}

// Stream answers with the chunks, then data: [DONE].
func Stream(chunks ...string) Reply {
	return func(w http.ResponseWriter, r *http.Request) {
		writeSSE(w, append(chunks, "[DONE]"))
	}
}

// Break sends the chunks and then drops the connection mid-stream.
func Break(chunks ...string) Reply {
	return func(w http.ResponseWriter, r *http.Request) {
		writeSSE(w, chunks)
		panic(http.ErrAbortHandler)
	}
}

// Hang sends the chunks and then waits until the client goes away.
func Hang(chunks ...string) Reply {
	return func(w http.ResponseWriter, r *http.Request) {
		writeSSE(w, chunks)
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

// chunkJSON is one chunk; like OpenAI's with include_usage, a chunk
// without usage says "usage":null.
func chunkJSON(choices string, extra string) string {
	if extra == "" {
		extra = `,"usage":null`
	}
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"fake","choices":[` + choices + `]` + extra + `}`
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// RoleChunk is the usual first chunk: the role and empty content.
func RoleChunk() string {
	return chunkJSON(`{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}`, "")
}

// TextChunk is one text delta.
func TextChunk(s string) string {
	return chunkJSON(`{"index":0,"delta":{"content":`+quote(s)+`},"finish_reason":null}`, "")
}

// ToolChunk is one tool-call delta; id and name are left out when empty.
func ToolChunk(index int, id, name, args string) string {
	call := fmt.Sprintf(`{"index":%d`, index)
	if id != "" {
		call += `,"id":` + quote(id) + `,"type":"function"`
	}
	fn := `"arguments":` + quote(args)
	if name != "" {
		fn = `"name":` + quote(name) + `,` + fn
	}
	call += `,"function":{` + fn + `}}`
	return chunkJSON(`{"index":0,"delta":{"tool_calls":[`+call+`]},"finish_reason":null}`, "")
}

// FinishChunk ends the choice.
func FinishChunk(reason string) string {
	return chunkJSON(`{"index":0,"delta":{},"finish_reason":`+quote(reason)+`}`, "")
}

// UsageChunk is the include_usage chunk: no choices, the usage.
func UsageChunk(prompt, completion int) string {
	return chunkJSON("", fmt.Sprintf(`,"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}`,
		prompt, completion, prompt+completion))
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
