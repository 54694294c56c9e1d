package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/jonboulle/clockwork"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/server"
)

// TestFrameRateLimit: a connection over its frame bound gets RATE_LIMITED
// for each frame over it; another connection is unaffected, and the bound
// refills with time.
func TestFrameRateLimit(t *testing.T) {
	clock := clockwork.NewFakeClock()
	_, url := startServer(t, server.Config{Model: agent.Demo{}, FrameRate: 1, FrameBurst: 3, Clock: clock})
	noisy, quiet := dial(t, url), dial(t, url)
	for range 5 {
		noisy.Send(`{"action":"ping","requestId":"p"}`)
	}
	pongs, limited := 0, 0
	for range 5 {
		switch ev := noisy.Next(); {
		case ev["type"] == "pong":
			pongs++
		case errorCode(ev) == "RATE_LIMITED":
			limited++
		default:
			t.Fatalf("unexpected %v", ev)
		}
	}
	if pongs != 3 || limited != 2 {
		t.Errorf("5 pings at once with a burst of 3: %d pongs, %d RATE_LIMITED", pongs, limited)
	}
	quiet.Send(`{"action":"ping","requestId":"q"}`)
	quiet.Expect("pong")
	clock.Advance(2 * time.Second)
	noisy.Send(`{"action":"ping","requestId":"p"}`)
	noisy.Expect("pong")
}

// TestEchoBounds: a huge requestId is refused, not echoed; an unknown
// action's name is echoed cut short.
func TestEchoBounds(t *testing.T) {
	_, url := startServer(t, server.Config{Model: agent.Demo{}})
	c := dial(t, url)
	c.Send(`{"action":"ping","requestId":"` + strings.Repeat("r", 300) + `"}`)
	ev := c.Expect("error")[0]
	if msg, _ := path(ev, "error", "message").(string); errorCode(ev) != "VALIDATION_ERROR" || ev["requestId"] != nil || strings.Contains(msg, "rrrr") {
		t.Errorf("a 300-byte requestId: %v", ev)
	}
	c.Send(`{"action":"` + strings.Repeat("x", 5000) + `","requestId":"r"}`)
	ev = c.Expect("error")[0]
	if msg, _ := path(ev, "error", "message").(string); errorCode(ev) != "UNSUPPORTED_ACTION" || len(msg) > 100 {
		t.Errorf("a 5000-byte action: %d bytes of message", len(msg))
	}
}

// TestConnectionCap: upgrades over MaxConnections get 503; a place that
// frees up can be taken again.
func TestConnectionCap(t *testing.T) {
	s := servertest.Start(t, server.Config{Model: agent.Demo{}, MaxConnections: 2}, nil)
	a, b := dial(t, s.WS()), dial(t, s.WS())
	a.Send(`{"action":"ping","requestId":"a"}`)
	a.Expect("pong")
	b.Send(`{"action":"ping","requestId":"b"}`)
	b.Expect("pong")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, res, err := websocket.Dial(ctx, s.WS(), nil); err == nil || res == nil || res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a third connection: %v (%v), want 503", res, err)
	}
	a.WS.Close(websocket.StatusNormalClosure, "")
	deadline := time.Now().Add(5 * time.Second)
	for {
		ws, _, err := websocket.Dial(ctx, s.WS(), nil)
		if err == nil {
			ws.CloseNow()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the freed place was never given again: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
