package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/server"
)

// With auth on, an ask addressed to bob (kindkit.AddressedTo) reaches
// ada, the conversation's owner, over SSE waiting for bob, and her answer
// is refused exactly as an answer to no card is, before and after bob
// answers; bob's own token opens nothing of her conversation. Bob answers
// where he may (here the engine, as an answer link or an inbox does), and
// ada's stream sees her turn resume.
func TestAddressedAsk(t *testing.T) {
	tool, model := servertest.ApproveRefund(t, "bob"), servertest.ApproveRefundModel(t)
	secret := []byte("an HS256 secret of 32 bytes or more")
	srv, eng := serve(t, "sqlite:"+filepath.Join(t.TempDir(), "sse.db"), agent.Config{Model: model, Tools: []agent.HostTool{tool}}, secret)
	exp := time.Now().Add(time.Hour)
	ada := server.SignToken(secret, server.Principal{Sub: "ada"}, exp)
	bob := server.SignToken(secret, server.Principal{Sub: "bob"}, exp)

	if code, _ := call(t, srv, "", "/conversations", `{}`); code != http.StatusUnauthorized {
		t.Errorf("no token: %d, want 401", code)
	}
	_, created := call(t, srv, ada, "/conversations", `{"supports":["choice_chips"]}`)
	conv, sid := field(created, "conversationId"), field(created, "sessionId")
	events := listenAs(t, srv, conv, "", ada)
	if code, body := call(t, srv, ada, "/sessions/"+sid+"/messages", `{"text":"refund"}`); code != http.StatusAccepted {
		t.Fatalf("send: %d %s", code, body)
	}
	card := until(t, events, "prompt").Card
	if card.WaitingFor != "bob" {
		t.Errorf("ada's card: waitingFor %q, want bob", card.WaitingFor)
	}
	answer := func(token, session, id string) string {
		code, body := call(t, srv, token, "/sessions/"+session+"/answers",
			`{"interactionId":"`+id+`","values":{"answers":[{"header":"Plan","options":["Pro"]}]}}`)
		return http.StatusText(code) + ": " + body
	}
	none := answer(ada, sid, uuid.NewString())
	if got := answer(ada, sid, card.InteractionID); got != none || !strings.HasPrefix(none, "Conflict") {
		t.Errorf("ada's answer: %s; an answer to no card: %s", got, none)
	}
	// Bob's token opens nothing of ada's conversation: her session and
	// her stream are, to him, ones that do not exist.
	if got, unknown := answer(bob, sid, card.InteractionID), answer(bob, uuid.NewString(), card.InteractionID); got != unknown || !strings.HasPrefix(got, "Not Found") {
		t.Errorf("bob on ada's session: %s; on no session: %s", got, unknown)
	}
	if code := get(t, srv, bob, "/conversations/"+conv+"/events"); code != http.StatusNotFound {
		t.Errorf("bob's stream of ada's conversation: %d, want 404", code)
	}

	sess, err := eng.Store().Session(context.Background(), sid)
	if err != nil {
		t.Fatal(err)
	}
	asBob := agent.ByLink(agent.WithPrincipal(context.Background(), "bob"))
	if ok, err := eng.Submit(asBob, sess, card.InteractionID, agent.Answer{Values: []byte(`{"answers":[{"header":"Plan","options":["Pro"]}]}`)}, nil); !ok || err != nil {
		t.Fatalf("bob's answer: %v %v", ok, err)
	}
	if reply := until(t, events, "reply"); reply.Reply != "Pro it is." {
		t.Errorf("reply %q", reply.Reply)
	}
	if got := answer(ada, sid, card.InteractionID); got != none {
		t.Errorf("ada's answer once bob answered: %s; an answer to no card: %s", got, none)
	}
}

// call POSTs body to path with token as its bearer ("" none), and
// returns the status and the body.
func call(t *testing.T, srv *httptest.Server, token, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
	return send(t, req, token)
}

// get GETs path with token as its bearer, and returns the status.
func get(t *testing.T, srv *httptest.Server, token, path string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	code, _ := send(t, req, token)
	return code
}

func send(t *testing.T, req *http.Request, token string) (int, string) {
	t.Helper()
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK && resp.Header.Get("Content-Type") == "text/event-stream" {
		return resp.StatusCode, "" // a stream: its status is the answer
	}
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// field is key of a JSON object body.
func field(body, key string) string {
	var v map[string]string
	json.Unmarshal([]byte(body), &v)
	return v[key]
}
