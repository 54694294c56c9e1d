package modeltest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is a fake provider API: a real HTTP server on a loopback port
// that answers the POSTs to one path, the n-th with the n-th handler and
// every later one with the last, and records each request.
type Server struct {
	URL string // http://127.0.0.1:port, without a path

	path     string
	mu       sync.Mutex
	bodies   [][]byte
	headers  []http.Header
	times    []time.Time
	handlers []http.HandlerFunc
}

// NewServer starts a server answering POST path with the handlers, which
// stops when the test ends.
func NewServer(t testing.TB, path string, handlers ...http.HandlerFunc) *Server {
	t.Helper()
	if len(handlers) == 0 {
		t.Fatal("modeltest: a fake server needs a handler")
	}
	s := &Server{path: path, handlers: handlers}
	hs := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(hs.Close)
	s.URL = hs.URL
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != s.path {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	s.mu.Lock()
	n := len(s.bodies)
	s.bodies = append(s.bodies, body)
	s.headers = append(s.headers, r.Header.Clone())
	s.times = append(s.times, time.Now())
	h := s.handlers[min(n, len(s.handlers)-1)]
	s.mu.Unlock()
	h(w, r)
}

// Count is how many requests arrived.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

// Body is request i's body.
func (s *Server) Body(t testing.TB, i int) []byte {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= len(s.bodies) {
		t.Fatalf("request %d: only %d arrived", i, len(s.bodies))
	}
	return s.bodies[i]
}

// Request is request i's body, decoded.
func (s *Server) Request(t testing.TB, i int) map[string]any {
	t.Helper()
	body := s.Body(t, i)
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("request %d is not JSON: %v: %s", i, err, body)
	}
	return v
}

// Header is request i's headers.
func (s *Server) Header(i int) http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.headers[i]
}

// Gap is the time between requests i-1 and i.
func (s *Server) Gap(i int) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.times[i].Sub(s.times[i-1])
}

// WriteSSE answers 200 with a server-sent event stream of the frames, each
// written as it is (whole events, "data: …\n\n") and flushed.
func WriteSSE(w http.ResponseWriter, frames []string) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	for _, f := range frames {
		io.WriteString(w, f)
		if fl != nil {
			fl.Flush()
		}
	}
}

// Stream answers with the frames; the connection then ends cleanly.
func Stream(frames ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { WriteSSE(w, frames) }
}

// Break sends the frames and then drops the connection mid-stream.
func Break(frames ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		WriteSSE(w, frames)
		panic(http.ErrAbortHandler)
	}
}

// Hang sends the frames and then holds the stream open until the client
// goes away (or a minute passes, so a test that fails does not hang).
func Hang(frames ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		WriteSSE(w, frames)
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	}
}

// Status answers with a status, a body and header pairs (name, value, …).
func Status(code int, body string, header ...string) http.HandlerFunc {
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

// Client is an HTTP client of its own, whose idle connections close when
// the test ends (so goleak sees no transport goroutines).
func Client(t testing.TB) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}
