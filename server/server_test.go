package server_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/kindkit/kindkit/internal/demo"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/internal/wstest"
	"github.com/kindkit/kindkit/server"
)

// TestMain checks every test for leaked goroutines, and every frame the
// tests' servers send against the reference schemas (the wire gate).
func TestMain(m *testing.M) {
	gate, err := loadWireGate(referenceSpec)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	server.SetFrameHook(gate.see)
	goleak.VerifyTestMain(gatedM{m, gate})
}

// gatedM fails a run whose tests passed when the wire gate found a frame
// that breaks the reference schemas.
type gatedM struct {
	m    *testing.M
	gate *wireGate
}

func (g gatedM) Run() int {
	code := g.m.Run()
	if !g.gate.report(os.Stdout) && code == 0 {
		code = 1
	}
	return code
}

// startServer runs a server with cfg's model and tools on a real port and
// returns it with its WebSocket URL.
func startServer(t *testing.T, cfg servertest.Config) (*server.Server, string) {
	t.Helper()
	s := servertest.Start(t, cfg, nil)
	return s.Server, s.WS()
}

type client = wstest.Client

func dial(t *testing.T, url string) *client { return wstest.Dial(t, url) }

var (
	path      = wstest.Path
	errorCode = wstest.ErrorCode
)

// errorMessage is an error event's message.
func errorMessage(ev map[string]any) string {
	msg, _ := path(ev, "error", "message").(string)
	return msg
}

func TestDemoFlow(t *testing.T) {
	_, url := startServer(t, servertest.Config{Model: demo.Model{}})
	c := dial(t, url)
	c.Send(`{"action":"create_conversation_session","requestId":"r1","agentId":"a","supports":["choice_chips"]}`)
	sid := path(c.Expect("immediate_response")[0], "data", "sessionId").(string)
	c.Send(`{"action":"send_message","requestId":"r2","sessionId":"` + sid + `","message":"hi"}`)
	evs := c.Expect("immediate_response", "interaction_required", "stream_chunk")
	iid := path(evs[1], "data", "data", "interactionId").(string)
	c.Send(`{"action":"submit_interaction","requestId":"r2","sessionId":"` + sid + `","interactionId":"` + iid + `","values":{"answers":[{"header":"Plan","options":["Team"]},{"header":"Topics","options":["Pricing"],"other":"SSO"}]}}`)
	c.Expect("immediate_response", "stream_chunk")
	var text string
	for {
		ev := c.Next()
		if ev["type"] == "stream_token" {
			text += ev["token"].(string)
			continue
		}
		if ev["type"] != "eventual_response" {
			t.Fatalf("got %v", ev)
		}
		break
	}
	if !strings.Contains(text, "Plan: Team; Topics: Pricing, SSO") {
		t.Errorf("reply %q does not answer from the picks", text)
	}
}

// The demo model finishes the conversational path too: without the card's
// capability it asks in words, reads the picks from the answer and submits
// them as the card would.
func TestDemoFallback(t *testing.T) {
	_, url := startServer(t, servertest.Config{Model: demo.Model{}})
	c := dial(t, url)
	sid := create(c, "")
	c.Send(`{"action":"send_message","requestId":"r1","sessionId":"` + sid + `","message":"hi"}`)
	c.Expect("immediate_response")
	if text, end := c.Turn(); end["type"] != "eventual_response" || !strings.Contains(text, "let me ask in words") {
		t.Fatalf("first turn: %q, %v", text, end)
	}
	c.Send(`{"action":"send_message","requestId":"r2","sessionId":"` + sid + `","message":"Team, and tell me about pricing and security"}`)
	c.Expect("immediate_response")
	if text, end := c.Turn(); end["type"] != "eventual_response" || !strings.Contains(text, "Plan: Team; Topics: Pricing, Security") {
		t.Errorf("the answer in words: %q, %v", text, end)
	}
}
