package server_test

import (
	"testing"
	"time"

	"github.com/kindkit/kindkit/server"
)

var secret = []byte("test-secret")

func TestVerifyToken(t *testing.T) {
	now := time.Now()
	good := server.SignToken(secret, server.Principal{Sub: "alice", Org: "acme"}, now.Add(time.Hour))
	if p, err := server.VerifyToken(good, secret, now); err != nil || p.Sub != "alice" || p.Org != "acme" {
		t.Fatalf("good token: %+v %v", p, err)
	}
	for name, tok := range map[string]string{
		"other secret": server.SignToken([]byte("other"), server.Principal{Sub: "alice"}, now.Add(time.Hour)),
		"expired":      server.SignToken(secret, server.Principal{Sub: "alice"}, now.Add(-time.Second)),
		"no sub":       server.SignToken(secret, server.Principal{}, now.Add(time.Hour)),
		"alg none":     "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9.",
		"garbage":      "a.b.c",
		"two parts":    "a.b",
		"empty":        "",
	} {
		if _, err := server.VerifyToken(tok, secret, now); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzVerifyToken(f *testing.F) {
	f.Add(server.SignToken(secret, server.Principal{Sub: "a"}, time.Now().Add(time.Hour)))
	f.Add("eyJhbGciOiJIUzI1NiJ9.e30.x")
	f.Fuzz(func(t *testing.T, tok string) {
		if p, err := server.VerifyToken(tok, secret, time.Now()); err == nil && p.Sub == "" {
			t.Fatal("accepted a token without sub")
		}
	})
}

// With -auth-secret a conversation is its owner's: another principal (or an
// anonymous one) cannot resume it, see its session or answer its card.
func TestConversationsAreScopedToTheirOwner(t *testing.T) {
	_, url := startServer(t, server.Config{Model: parkingScript(t), AuthSecret: secret})
	exp := time.Now().Add(time.Hour)
	alice := dial(t, url+"?token="+server.SignToken(secret, server.Principal{Sub: "alice"}, exp))
	alice.Send(`{"action":"create_conversation_session","requestId":"r","agentId":"a","supports":["choice_chips"]}`)
	ack := alice.Expect("immediate_response")[0]
	sid, convID := path(ack, "data", "sessionId").(string), path(ack, "data", "conversationId").(string)
	alice.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"quote"}`)
	iid := path(alice.Expect("immediate_response", "interaction_required", "stream_chunk")[1], "data", "data", "interactionId").(string)

	for name, u := range map[string]string{
		"bob":       url + "?token=" + server.SignToken(secret, server.Principal{Sub: "bob"}, exp),
		"anonymous": url + "?token=forged",
	} {
		t.Run(name, func(t *testing.T) {
			c := dial(t, u)
			c.Send(`{"action":"get_session","requestId":"g","sessionId":"` + sid + `"}`)
			if ev := c.Expect("error")[0]; errorCode(ev) != "SESSION_NOT_FOUND" {
				t.Errorf("get_session of alice's session: %v", ev)
			}
			submitPlan(c, sid, iid)
			if ev := c.Expect("error")[0]; errorCode(ev) != "NO_PENDING_INTERACTION" {
				t.Errorf("submit to alice's card: %v", ev)
			}
			c.Send(`{"action":"create_conversation_session","requestId":"r","agentId":"a","conversationId":"` + convID + `","supports":["choice_chips"]}`)
			if ev := c.Expect("immediate_response")[0]; path(ev, "data", "conversationId") == convID {
				t.Errorf("resumed alice's conversation: %v", ev)
			}
		})
	}
	again := dial(t, url+"?token="+server.SignToken(secret, server.Principal{Sub: "alice"}, exp))
	sid2 := resumeConversation(again, convID, "")
	again.Expect("interaction_required")
	submitPlan(again, sid2, iid)
	again.Expect("immediate_response")
	expectResumed(again)
}
