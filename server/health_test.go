package server_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/kindkit/kindkit/internal/demo"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/store/memstore"
)

// flakyStore is a memory store whose Ping fails while down is set.
type flakyStore struct {
	*memstore.Store
	down atomic.Bool
}

func (s *flakyStore) Ping(ctx context.Context) error {
	if s.down.Load() {
		return errors.New("disk on fire")
	}
	return nil
}

func status(t *testing.T, url string) int {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// TestHealth: /healthz says whether the store answers; /readyz also says
// no while the server drains.
func TestHealth(t *testing.T) {
	st := &flakyStore{Store: memstore.New()}
	s := servertest.Start(t, servertest.Config{Model: demo.Model{}, Store: st}, nil)
	if h, r := status(t, s.URL+"/healthz"), status(t, s.URL+"/readyz"); h != 200 || r != 200 {
		t.Errorf("healthy: /healthz %d, /readyz %d; want 200, 200", h, r)
	}
	st.down.Store(true)
	if h, r := status(t, s.URL+"/healthz"), status(t, s.URL+"/readyz"); h != 503 || r != 503 {
		t.Errorf("store down: /healthz %d, /readyz %d; want 503, 503", h, r)
	}
	st.down.Store(false)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.Shutdown(ctx)
	if h, r := status(t, s.URL+"/healthz"), status(t, s.URL+"/readyz"); h != 200 || r != 503 {
		t.Errorf("draining: /healthz %d, /readyz %d; want 200, 503", h, r)
	}
}

// TestAllowedOrigins: a browser page from another origin cannot open a
// socket, unless AllowedOrigins names it ("*": any); the server's own page
// and a client that sends no Origin always can.
func TestAllowedOrigins(t *testing.T) {
	for _, c := range []struct {
		allowed []string
		want    map[string]int // by Origin
	}{
		{nil, map[string]int{"https://chat.example.com": 403, "https://evil.example": 403, "http://localhost:3000": 403}},
		{[]string{"chat.example.com"}, map[string]int{"https://chat.example.com": 101, "https://evil.example": 403}},
		{[]string{"*"}, map[string]int{"https://chat.example.com": 101, "https://evil.example": 101, "http://localhost:3000": 101}},
	} {
		s := servertest.Start(t, servertest.Config{Model: demo.Model{}, AllowedOrigins: c.allowed}, nil)
		c.want[""] = 101
		c.want["http://"+s.Addr()] = 101 // the server's own page
		for origin, want := range c.want {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			h := http.Header{}
			if origin != "" {
				h.Set("Origin", origin)
			}
			ws, res, err := websocket.Dial(ctx, s.WS(), &websocket.DialOptions{HTTPHeader: h})
			cancel()
			got := 0
			if res != nil {
				got = res.StatusCode
			}
			if got != want {
				t.Errorf("allowed %q, Origin %q: status %d (%v), want %d", c.allowed, origin, got, err, want)
			}
			if ws != nil {
				ws.CloseNow()
			}
		}
	}
}
