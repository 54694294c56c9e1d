package server_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/internal/syncbuf"
	"github.com/kindkit/kindkit/server"
)

// failSecond raises a card, and fails the model call after it.
type failSecond struct{}

func (m *failSecond) Respond(ctx context.Context, req agent.ModelRequest, onText func(string)) (agent.ModelResponse, error) {
	if req.Position == 0 {
		s, _ := agent.NewScripted([]agent.ScriptEntry{{Kind: "toolCall", Name: "request_choices", Arguments: raiseChoices}})
		return s.Respond(ctx, req, onText)
	}
	return agent.ModelResponse{}, errors.New("model down")
}

// TestLogsKeepSecrets: a signed-in session, a park, its expiry and a turn
// that fails log no token, secret, conversation id or session id, even at
// debug level.
func TestLogsKeepSecrets(t *testing.T) {
	sink := &syncbuf.Buffer{}
	secret := []byte("a-secret-of-the-host")
	clock := clockwork.NewFakeClock()
	_, url := startServer(t, servertest.Config{Model: &failSecond{}, AuthSecret: secret, Clock: clock, ParkTimeout: time.Hour,
		Logger: slog.New(slog.NewTextHandler(sink, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	token := server.SignToken(secret, server.Principal{Sub: "alice"}, time.Now().Add(time.Hour))
	c := dial(t, url+"?token="+token)
	c.Send(`{"action":"create_conversation_session","requestId":"r","agentId":"a","supports":["choice_chips"]}`)
	ack := c.Expect("immediate_response")[0]
	conv := path(ack, "data", "conversationId").(string)
	sid := path(ack, "data", "sessionId").(string)
	c.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"hi"}`)
	c.Expect("immediate_response", "interaction_required", "stream_chunk")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := clock.BlockUntilContext(ctx, 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour + time.Second) // the park expires; the resumed turn's model fails
	c.Expect("stream_chunk")
	if ev := c.Expect("error")[0]; errorCode(ev) != "INTERNAL_ERROR" {
		t.Fatalf("the failing turn ended with %v", ev)
	}
	// A forged token is refused, and its text is not logged either.
	forged := token[:len(token)-4] + "AAAA"
	bad := dial(t, url+"?token="+forged)
	bad.Send(`{"action":"ping","requestId":"p"}`)
	bad.Expect("pong")

	logs := sink.String()
	for what, s := range map[string]string{"token": token, "forged token": forged, "secret": string(secret),
		"conversation id": conv, "session id": sid, "principal": "alice"} {
		if strings.Contains(logs, s) {
			t.Errorf("the log holds the %s:\n%s", what, logs)
		}
	}
	if !strings.Contains(logs, "park expired") || !strings.Contains(logs, "turn failed") {
		t.Errorf("the log does not tell the expiry and the failure:\n%s", logs)
	}
}
