package server_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/jonboulle/clockwork"

	"github.com/kindkit/kindkit/internal/demo"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/internal/syncbuf"
	"github.com/kindkit/kindkit/server"
)

// TestFrameRateLimit: a connection over its frame bound gets RATE_LIMITED
// for each frame over it; another connection is unaffected, and the bound
// refills with time.
func TestFrameRateLimit(t *testing.T) {
	clock := clockwork.NewFakeClock()
	_, url := startServer(t, servertest.Config{Model: demo.Model{}, FrameRate: 1, FrameBurst: 3, Clock: clock})
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
	_, url := startServer(t, servertest.Config{Model: demo.Model{}})
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
	s := servertest.Start(t, servertest.Config{Model: demo.Model{}, MaxConnections: 2}, nil)
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

// TestClientLimits: a client's frames and new conversations are bounded
// across all its connections (by principal; by address when anonymous); a
// resume is not a new conversation; another principal is unaffected; the
// bounds refill with time.
func TestClientLimits(t *testing.T) {
	clock := clockwork.NewFakeClockAt(time.Now())
	_, url := startServer(t, servertest.Config{Model: demo.Model{}, AuthSecret: secret, Clock: clock, FrameRate: -1,
		ClientFrameRate: 1, ClientFrameBurst: 5, ConversationRate: 1, ConversationBurst: 2})
	as := func(sub string) *client {
		return dial(t, url+"?token="+server.SignToken(secret, server.Principal{Sub: sub}, clock.Now().Add(time.Hour)))
	}
	alice1, alice2, bob := as("alice"), as("alice"), as("bob")
	create := `{"action":"create_conversation_session","requestId":"r","agentId":"a"}`
	alice1.Send(create)
	conv := path(alice1.Expect("immediate_response")[0], "data", "conversationId").(string)
	alice2.Send(create)
	alice2.Expect("immediate_response")
	alice2.Send(create) // alice's third conversation, on her second connection
	if ev := alice2.Expect("error")[0]; errorCode(ev) != "RATE_LIMITED" || ev["requestId"] != "r" {
		t.Errorf("a third conversation at once with a burst of 2: %v", ev)
	}
	alice1.Send(`{"action":"create_conversation_session","requestId":"r","agentId":"a","conversationId":"` + conv + `"}`)
	if got := path(alice1.Expect("immediate_response")[0], "data", "conversationId"); got != conv {
		t.Errorf("a resume while new conversations are limited: %v", got)
	}
	bob.Send(create)
	bob.Expect("immediate_response")

	// Alice has sent 4 of her 5 frames.
	alice1.Send(`{"action":"ping","requestId":"p"}`)
	alice1.Expect("pong")
	alice2.Send(`{"action":"ping","requestId":"p"}`)
	if ev := alice2.Expect("error")[0]; errorCode(ev) != "RATE_LIMITED" {
		t.Errorf("alice's 6th frame: %v", ev)
	}
	bob.Send(`{"action":"ping","requestId":"p"}`)
	bob.Expect("pong")
	clock.Advance(10 * time.Second)
	alice2.Send(create)
	alice2.Expect("immediate_response")
}

// TestIdleTimeout: a socket whose peer stops answering pings is closed;
// one that reads (and so answers them) stays, until it stops reading.
func TestIdleTimeout(t *testing.T) {
	logs := &syncbuf.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	_, url := startServer(t, servertest.Config{Model: demo.Model{}, IdleTimeout: 200 * time.Millisecond, Logger: log})
	dead, alive := dial(t, url), dial(t, url)
	ctx, cancel := context.WithCancel(context.Background())
	frames := make(chan []byte, 16)
	readerDone := make(chan struct{})
	go func() { // alive reads until its pong, which answers the server's pings
		defer close(readerDone)
		for {
			_, data, err := alive.WS.Read(ctx)
			if err != nil {
				return
			}
			frames <- data
			if strings.Contains(string(data), `"pong"`) {
				return
			}
		}
	}()
	defer func() { cancel(); <-readerDone }()
	// dead never reads until the server has given up on it: its read then
	// finds the connection closed.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), "no pong"); {
		if time.Now().After(deadline) {
			t.Fatal("the server never gave up on the silent socket")
		}
		time.Sleep(10 * time.Millisecond)
	}
	readCtx, readCancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer readCancel()
	if _, _, err := dead.WS.Read(readCtx); err == nil || readCtx.Err() != nil {
		t.Errorf("the silent socket is still open: %v", err)
	}
	alive.Send(`{"action":"ping","requestId":"p"}`)
	select {
	case data := <-frames:
		if !strings.Contains(string(data), `"pong"`) {
			t.Errorf("alive got %s", data)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reading socket was closed too")
	}
	// alive has answered pings until now, and reads no more: a later ping
	// goes unanswered.
	for deadline := time.Now().Add(10 * time.Second); strings.Count(logs.String(), "no pong") < 2; {
		if time.Now().After(deadline) {
			t.Fatal("the server never gave up on the socket that stopped reading")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
