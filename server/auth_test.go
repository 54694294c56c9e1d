package server_test

import (
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/jonboulle/clockwork"

	"github.com/kindkit/kindkit/internal/demo"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/server"
)

var secret = []byte("test-secret")

func TestVerifyToken(t *testing.T) {
	now := time.Now()
	good := server.SignToken(secret, server.Principal{Sub: "alice", Org: "acme"}, now.Add(time.Hour))
	if p, err := server.VerifyToken(good, secret, now, server.TokenRules{}); err != nil || p.Sub != "alice" || p.Org != "acme" ||
		p.Expires.Unix() != now.Add(time.Hour).Unix() {
		t.Fatalf("good token: %+v %v", p, err)
	}
	sign := func(method jwt.SigningMethod, key any, c jwt.MapClaims) string {
		s, err := jwt.NewWithClaims(method, c).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	exp := now.Add(time.Hour).Unix()
	for name, tok := range map[string]string{
		"other secret":  server.SignToken([]byte("other"), server.Principal{Sub: "alice"}, now.Add(time.Hour)),
		"expired":       server.SignToken(secret, server.Principal{Sub: "alice"}, now.Add(-time.Minute)),
		"no sub":        server.SignToken(secret, server.Principal{}, now.Add(time.Hour)),
		"no exp":        sign(jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": "alice"}),
		"nbf to come":   sign(jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": "alice", "exp": exp, "nbf": now.Add(10 * time.Minute).Unix()}),
		"HS512":         sign(jwt.SigningMethodHS512, secret, jwt.MapClaims{"sub": "alice", "exp": exp}),
		"alg none":      sign(jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, jwt.MapClaims{"sub": "alice", "exp": exp}),
		"alg none hand": "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9.",
		"garbage":       "a.b.c",
		"two parts":     "a.b",
		"empty":         "",
	} {
		if _, err := server.VerifyToken(tok, secret, now, server.TokenRules{}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// Within the leeway, a token just expired still counts.
	if _, err := server.VerifyToken(server.SignToken(secret, server.Principal{Sub: "a"}, now.Add(-10*time.Second)), secret, now, server.TokenRules{}); err != nil {
		t.Errorf("a token 10s past exp: %v, want accepted within the leeway", err)
	}
	// Audience and issuer, when the rules ask for them.
	rules := server.TokenRules{Audience: "kindkit", Issuer: "https://auth.example"}
	right := sign(jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": "alice", "exp": exp, "aud": "kindkit", "iss": "https://auth.example"})
	if _, err := server.VerifyToken(right, secret, now, rules); err != nil {
		t.Errorf("right audience and issuer: %v", err)
	}
	for name, c := range map[string]jwt.MapClaims{
		"no aud":    {"sub": "alice", "exp": exp, "iss": "https://auth.example"},
		"other aud": {"sub": "alice", "exp": exp, "aud": "other", "iss": "https://auth.example"},
		"other iss": {"sub": "alice", "exp": exp, "aud": "kindkit", "iss": "https://evil.example"},
	} {
		if _, err := server.VerifyToken(sign(jwt.SigningMethodHS256, secret, c), secret, now, rules); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzVerifyToken(f *testing.F) {
	f.Add(server.SignToken(secret, server.Principal{Sub: "a"}, time.Now().Add(time.Hour)))
	f.Add("eyJhbGciOiJIUzI1NiJ9.e30.x")
	f.Fuzz(func(t *testing.T, tok string) {
		if p, err := server.VerifyToken(tok, secret, time.Now(), server.TokenRules{}); err == nil && (p.Sub == "" || p.Expires.IsZero()) {
			t.Fatal("accepted a token without sub")
		}
	})
}

// With -auth-secret a conversation is its owner's: another principal (or an
// anonymous one) cannot resume it, see its session or answer its card.
func TestConversationsAreScopedToTheirOwner(t *testing.T) {
	_, url := startServer(t, servertest.Config{Model: parkingScript(t), AuthSecret: secret})
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

// TestIdentityEndsWithToken: once the connection's token expires, it acts
// anonymously: its owner's conversation is as unknown to it as anyone's.
func TestIdentityEndsWithToken(t *testing.T) {
	clock := clockwork.NewFakeClock()
	_, url := startServer(t, servertest.Config{Model: demo.Model{}, AuthSecret: secret, Clock: clock})
	c := dial(t, url+"?token="+server.SignToken(secret, server.Principal{Sub: "alice"}, clock.Now().Add(time.Hour)))
	c.Send(`{"action":"create_conversation_session","requestId":"r1","agentId":"a"}`)
	conv := path(c.Expect("immediate_response")[0], "data", "conversationId").(string)
	resume := `{"action":"create_conversation_session","requestId":"r2","agentId":"a","conversationId":"` + conv + `"}`
	c.Send(resume)
	if got := path(c.Expect("immediate_response")[0], "data", "conversationId"); got != conv {
		t.Fatalf("alice could not resume her conversation: %v", got)
	}
	clock.Advance(2 * time.Hour)
	c.Send(resume)
	if got := path(c.Expect("immediate_response")[0], "data", "conversationId"); got == conv {
		t.Error("after the token expired the connection still resumed alice's conversation")
	}
}
