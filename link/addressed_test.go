package link_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/agui"
	"github.com/kindkit/kindkit/inbox"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/internal/wstest"
	"github.com/kindkit/kindkit/link"
	"github.com/kindkit/kindkit/server"
	"github.com/kindkit/kindkit/web"
)

// With auth on, an ask addressed to bob (kindkit.AddressedTo) is refused
// to ada, the conversation's owner, on every path she could answer it by,
// exactly as an ask that does not exist is: the socket (where her card
// says it waits for bob), AG-UI, the inbox (which does not list it) and
// the answer link. Bob answers it by link, and the record says so; ada
// then still hears nothing of it, and her history lists no card of it.
func TestAddresseeOnEveryPath(t *testing.T) {
	tool, model := servertest.ApproveRefund(t, "bob"), servertest.ApproveRefundModel(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	mux := http.NewServeMux()
	srv := servertest.Start(t, servertest.Config{Model: model, Tools: []agent.HostTool{tool}, AuthSecret: authSecret, Logger: quiet}, mux)
	signer := signer(t, secretA)
	answers := link.NewHandler(srv.Engine, link.Options{Signer: signer, AuthSecret: authSecret})
	mux.Handle("/answer/ask", answers)
	mux.Handle("/answer/submit", answers)
	ag := agui.New(srv.Engine, agui.Options{AuthSecret: authSecret, Logger: quiet})
	t.Cleanup(func() { ag.Shutdown(context.Background()) })
	mux.Handle("/agui", http.StripPrefix("/agui", ag))
	asks := inbox.NewHandler(srv.Engine, inbox.Options{AuthSecret: authSecret, Logger: quiet})
	mux.Handle("/inbox/asks", asks)
	mux.Handle("/inbox/submit", asks)
	mux.Handle("/", web.Handler(srv.Engine.Catalog()))

	exp := time.Now().Add(time.Hour)
	adaToken := server.SignToken(authSecret, server.Principal{Sub: "ada"}, exp)
	bobToken := server.SignToken(authSecret, server.Principal{Sub: "bob"}, exp)

	// The socket: ada's card waits for bob, and her answer is refused as
	// one to no card.
	ada := wstest.Dial(t, srv.WS()+"?token="+adaToken)
	ada.Send(`{"action":"create_conversation_session","requestId":"r","agentId":"a","supports":["choice_chips"]}`)
	ack := ada.Expect("immediate_response")[0]
	sid, conv := wstest.Path(ack, "data", "sessionId").(string), wstest.Path(ack, "data", "conversationId").(string)
	ada.Send(`{"action":"send_message","requestId":"T","sessionId":"` + sid + `","message":"refund"}`)
	var card map[string]any
	for card == nil {
		if ev := ada.Next(); ev["type"] == "interaction_required" {
			card = ev
		}
	}
	iid := wstest.Path(card, "data", "data", "interactionId").(string)
	if got := wstest.Path(card, "data", "data", "waitingFor"); got != "bob" {
		t.Errorf("ada's card: waitingFor %v, want bob", got)
	}
	submit := func(id string) map[string]any {
		ada.Send(`{"action":"submit_interaction","requestId":"s","sessionId":"` + sid + `","interactionId":"` + id + `","kind":"choices","values":` + pro + `}`)
		for {
			if ev := ada.Next(); ev["requestId"] == "s" {
				return ev
			}
		}
	}
	// What a session with no card pending is told.
	missing := map[string]any{"code": "NO_PENDING_INTERACTION", "message": "no interaction is awaiting submission for session '" + sid + "'"}
	if refused := submit(iid); refused["type"] != "error" || wstest.Path(refused, "error", "code") != missing["code"] || wstest.Path(refused, "error", "message") != missing["message"] {
		t.Errorf("socket: ada's answer got %v; a session with no card is told %v", refused, missing)
	}

	// AG-UI: ada's resume of the interrupt is refused as one of an
	// interrupt the thread never had.
	aguiRun := func(resume string) string {
		in := `{"threadId":"` + conv + `","runId":"` + uuid.NewString() + `","messages":[],"tools":[],"context":[],"resume":[{"interruptId":"` +
			resume + `","status":"resolved","payload":` + pro + `}]}`
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/agui", strings.NewReader(in))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+adaToken)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode != 200 {
			b, _ := io.ReadAll(res.Body)
			t.Fatalf("AG-UI: %d %s", res.StatusCode, b)
		}
		var last string
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				last = data
			}
		}
		return timestamp.ReplaceAllString(strings.ReplaceAll(last, resume, "ID"), "")
	}
	if refused, missing := aguiRun(iid), aguiRun(uuid.NewString()); refused != missing || !strings.Contains(refused, "RUN_ERROR") {
		t.Errorf("AG-UI: ada's resume ended %s; a resume of no interrupt %s", refused, missing)
	}

	// The inbox: ada's lists no ask, bob's lists it; ada's answer is
	// refused, byte for byte, as an answer to no ask.
	inboxCall := func(method, path, bearer, body string) (int, string) {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+bearer)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, got := inboxCall("GET", "/inbox/asks", adaToken, ""); code != 200 || got != `{"asks":[]}`+"\n" {
		t.Errorf("inbox: ada's lists %d %s, want none", code, got)
	}
	if code, got := inboxCall("GET", "/inbox/asks", bobToken, ""); code != 200 || !strings.Contains(got, iid) {
		t.Errorf("inbox: bob's lists %d %s, want the ask", code, got)
	}
	inboxSubmit := func(id string) (int, string) {
		return inboxCall("POST", "/inbox/submit", adaToken, `{"conversationId":"`+conv+`","interactionId":"`+id+`","values":`+pro+`}`)
	}
	code, refused := inboxSubmit(iid)
	if noCode, none := inboxSubmit(uuid.NewString()); code != 404 || code != noCode || refused != none {
		t.Errorf("inbox: ada's answer got %d %s; an answer to no ask %d %s", code, refused, noCode, none)
	}

	// The link: ada is told there is no such ask; bob answers.
	r := &rig{t: t, eng: srv.Engine, url: srv.URL}
	tok := signer.Mint(link.Claims{ConversationID: conv, AskID: iid, Expires: time.Now().Add(time.Hour)})
	_, none := r.post("ask", adaToken, map[string]any{"token": signer.Mint(link.Claims{ConversationID: conv, AskID: uuid.NewString(), Expires: time.Now().Add(time.Hour)})})
	for _, what := range []string{"ask", "submit"} {
		if code, got := r.post(what, adaToken, submit0(tok)); code != 404 || got["error"] != none["error"] {
			t.Errorf("link, %s as ada: %d %v; for no ask: %v", what, code, got, none)
		}
	}
	if q, _ := srv.Engine.PendingAsk(context.Background(), conv); q == nil || q.ID != iid {
		t.Fatal("a refused answer ended the ask")
	}
	if code, done := r.post("submit", bobToken, submit0(tok)); code != 200 || done["by"] != "bob" || done["via"] != agent.ViaLink {
		t.Fatalf("link, as bob: %d %v", code, done)
	}
	srv.Engine.Wait()
	recs, err := srv.Engine.Records(context.Background(), conv, time.Time{}, "", 10)
	if err != nil || len(recs) != 1 || recs[0].Record.By != "bob" || recs[0].Record.Via != agent.ViaLink {
		t.Errorf("records %+v %v", recs, err)
	}
	// Ended, it is still nothing to ada, on every path.
	if code, got := r.post("ask", adaToken, submit0(tok)); code != 404 {
		t.Errorf("link after, as ada: %d %v", code, got)
	}
	if after := submit(iid); wstest.Path(after, "error", "code") != missing["code"] || wstest.Path(after, "error", "message") != missing["message"] {
		t.Errorf("socket after: %v; for no card: %v", after, missing)
	}
	code, refused = inboxSubmit(iid)
	if noCode, none := inboxSubmit(uuid.NewString()); code != 404 || code != noCode || refused != none {
		t.Errorf("inbox after: ada's answer got %d %s; an answer to no ask %d %s", code, refused, noCode, none)
	}
	// The history: ada's page, reloaded, lists bob's card as answered, by
	// bob, but not what he answered.
	reload := wstest.Dial(t, srv.WS()+"?token="+adaToken)
	reload.Send(`{"action":"create_conversation_session","requestId":"r","agentId":"a","conversationId":"` + conv + `","supports":["choice_chips","` + server.ExtHistoryCards + `"]}`)
	sid2 := wstest.Path(reload.Expect("immediate_response")[0], "data", "sessionId").(string)
	reload.Send(`{"action":"get_conversation_messages","requestId":"h","sessionId":"` + sid2 + `"}`)
	var history map[string]any
	for history == nil {
		if ev := reload.Next(); ev["requestId"] == "h" {
			history = ev
		}
	}
	msgs, _ := wstest.Path(history, "data", "messages").([]any)
	if len(msgs) != 2 {
		t.Fatalf("history: %v, want the message and its reply", history)
	}
	cards, _ := msgs[1].(map[string]any)["interactions"].([]any)
	if len(cards) != 1 {
		t.Fatalf("history: %v, want bob's card on ada's message", msgs)
	}
	shown := cards[0].(map[string]any)
	if outcome, _ := json.Marshal(shown["outcome"]); string(outcome) != `{"status":"submitted"}` || wstest.Path(shown, "record", "by") != "bob" {
		t.Errorf("history: ada is shown bob's card as %v, want its status and who answered, not the answer", shown)
	}
}

var timestamp = regexp.MustCompile(`"timestamp":[0-9]+,?`)

func submit0(token string) map[string]any { return submit(token, pro) }

// Without auth there are no principals: a link to an addressed ask shows
// and answers nothing, as for an ask that does not exist, and the ask
// waits for its deadline.
func TestAddressedLinkWithoutAuth(t *testing.T) {
	tool, model := servertest.ApproveRefund(t, "bob"), servertest.ApproveRefundModel(t)
	mux := http.NewServeMux()
	srv := servertest.Start(t, servertest.Config{Model: model, Tools: []agent.HostTool{tool}, Logger: slog.New(slog.DiscardHandler)}, mux)
	signer := signer(t, secretA)
	answers := link.NewHandler(srv.Engine, link.Options{Signer: signer})
	mux.Handle("/answer/ask", answers)
	mux.Handle("/answer/submit", answers)
	ctx := context.Background()
	conv, sess, err := srv.Engine.NewConversation(ctx, "", []string{"choice_chips"}, agent.Opening{})
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, eng: srv.Engine, url: srv.URL, events: make(chan agent.Event, 64)}
	t.Cleanup(srv.Engine.Subscribe(ctx, conv.ID, agent.Position{}, func(ev agent.Event) { r.events <- ev }))
	if err := srv.Engine.Send(ctx, sess, agent.Message{RequestID: "r1", Text: "refund"}, nil); err != nil {
		t.Fatal(err)
	}
	p := r.next(agent.EventPrompt).Park
	tok := signer.Mint(link.Claims{ConversationID: conv.ID, AskID: p.ID, Expires: time.Now().Add(time.Hour)})
	for _, what := range []string{"ask", "submit"} {
		if code, got := r.post(what, "", submit0(tok)); code != 404 || got["code"] != "not_found" {
			t.Errorf("%s: %d %v, want 404", what, code, got)
		}
	}
	if q, _ := srv.Engine.PendingAsk(ctx, conv.ID); q == nil || q.ID != p.ID {
		t.Error("the ask ended")
	}
}
