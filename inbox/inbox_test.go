package inbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/goleak"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/gen/choicesgen"
	"github.com/kindkit/kindkit/inbox"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/server"
	"github.com/kindkit/kindkit/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var authSecret = []byte("inbox-test-auth-secret-0123456789")

const pro = `{"answers":[{"header":"Plan","options":["Pro"]}]}`

// addressees says whom the ask of a conversation of each owner is
// addressed to ("" or missing: anyone of it, so its owner's inbox).
var addressees = map[string]string{"cy": "bob", "dee": "group:ops", "eve": "ada"}

// rig is an engine whose every turn asks which plan, addressed by its
// conversation's owner (addressees), with the inbox served on a real port.
type rig struct {
	t   *testing.T
	eng *agent.Engine
	url string
}

func newRig(t *testing.T, auth bool) *rig {
	t.Helper()
	tool, err := agent.NewTool("pick_plan", "Ask which plan.", func(ctx context.Context, _ struct{}) (any, error) {
		call, _ := agent.CallFrom(ctx)
		q := &choicesgen.Spec{Questions: []choicesgen.Question{{Question: "Which plan?", Header: "Plan",
			Options: []choicesgen.Option{{Label: "Basic"}, {Label: "Pro"}}}}}
		v, err := choicesgen.Ask(ctx, q, "to quote "+call.Principal, kindkit.AddressedTo(addressees[call.Principal]))
		if err != nil {
			return nil, err
		}
		return "chose " + v.Answers[0].Options[0], nil
	})
	if err != nil {
		t.Fatal(err)
	}
	model, err := agent.NewScripted([]agent.ScriptEntry{{Kind: "toolCall", Name: "pick_plan", Arguments: `{}`}, {Kind: "text", Text: "Done."}})
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	mux := http.NewServeMux()
	cfg := servertest.Config{Model: model, Tools: []agent.HostTool{tool}, ParkTimeout: time.Hour, Logger: quiet}
	opts := inbox.Options{Logger: quiet}
	if auth {
		cfg.AuthSecret, opts.AuthSecret = authSecret, authSecret
	}
	srv := servertest.Start(t, cfg, mux)
	h := inbox.NewHandler(srv.Engine, opts)
	mux.Handle("/inbox/asks", h)
	mux.Handle("/inbox/submit", h)
	return &rig{t: t, eng: srv.Engine, url: srv.URL}
}

// ask starts a conversation of owner whose turn parks on its ask, and
// returns the conversation, the ask and the conversation's events.
func (r *rig) ask(owner string) (string, *store.Park, chan agent.Event) {
	r.t.Helper()
	ctx := agent.WithPrincipal(context.Background(), owner)
	conv, sess, err := r.eng.NewConversation(ctx, owner, []string{"choice_chips"}, agent.Opening{})
	if err != nil {
		r.t.Fatal(err)
	}
	events := make(chan agent.Event, 64)
	r.t.Cleanup(r.eng.Subscribe(ctx, conv.ID, agent.Position{}, func(ev agent.Event) { events <- ev }))
	if err := r.eng.Send(ctx, sess, agent.Message{RequestID: "r1", Text: "quote me"}, nil); err != nil {
		r.t.Fatal(err)
	}
	return conv.ID, next(r.t, events, agent.EventPrompt).Park, events
}

func next(t *testing.T, events chan agent.Event, kind agent.EventKind) agent.Event {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.Kind == kind {
				return ev
			}
		case <-timeout:
			t.Fatalf("no event %v", kind)
		}
	}
}

func token(sub string, groups ...string) string {
	return server.SignToken(authSecret, server.Principal{Sub: sub, Groups: groups}, time.Now().Add(time.Hour))
}

// do sends a request to the inbox and returns its status and raw body.
func (r *rig) do(method, path, bearer string, body []byte) (int, []byte) {
	r.t.Helper()
	req, err := http.NewRequest(method, r.url+path, bytes.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		r.t.Fatal(err)
	}
	return res.StatusCode, raw
}

func (r *rig) page(bearer, query string) inbox.Page {
	r.t.Helper()
	code, raw := r.do(http.MethodGet, "/inbox/asks?"+query, bearer, nil)
	if code != 200 {
		r.t.Fatalf("asks?%s: %d %s", query, code, raw)
	}
	var p inbox.Page
	if err := json.Unmarshal(raw, &p); err != nil {
		r.t.Fatal(err)
	}
	return p
}

func ids(p inbox.Page) []string {
	out := []string{}
	for _, a := range p.Asks {
		out = append(out, a.InteractionID)
	}
	return out
}

func submitBody(conv, id, values string) []byte {
	b, _ := json.Marshal(map[string]any{"conversationId": conv, "interactionId": id, "values": json.RawMessage(values)})
	return b
}

// Bob's inbox lists the asks addressed to him or to his group and the
// unaddressed ones of his own conversation, by deadline, a page at a time,
// and none of anyone else's. Bob answers one: validated as any other
// answer, it resumes its turn, recorded as from the inbox by bob, and
// leaves his inbox; answering it again says it was answered.
func TestInbox(t *testing.T) {
	r := newRig(t, true)
	cyConv, cyAsk, cyEvents := r.ask("cy") // to bob
	_, deeAsk, _ := r.ask("dee")           // to group:ops
	_, bobAsk, _ := r.ask("bob")           // bob's own, to anyone of it
	r.ask("eve")                           // to ada
	r.ask("fay")                           // fay's own
	bob := token("bob", "ops")
	want := []string{cyAsk.ID, deeAsk.ID, bobAsk.ID} // parked in this order, an hour each
	if got := ids(r.page(bob, "")); !equal(got, want) {
		t.Fatalf("bob's inbox = %q, want %q", got, want)
	}
	first := r.page(bob, "").Asks[0]
	if first.ConversationID != cyConv || first.Kind != "choices" || first.Reason != "to quote cy" || first.Addressee != "bob" ||
		first.Deadline == nil || len(first.Spec) == 0 || first.Ask != "interaction" {
		t.Errorf("cy's ask as listed: %+v", first)
	}
	// Paged: each page's nextCursor begins the next, until the last.
	var paged []string
	query := "limit=1"
	for range 5 {
		p := r.page(bob, query)
		paged = append(paged, ids(p)...)
		if p.NextCursor == "" {
			break
		}
		query = "limit=1&cursor=" + url.QueryEscape(p.NextCursor)
	}
	if !equal(paged, want) {
		t.Errorf("paged one by one: %q, want %q", paged, want)
	}
	for query, want := range map[string][]string{
		"kind=choices":  want,
		"kind=approval": {},
		"before=" + url.QueryEscape(time.Now().Add(-time.Minute).Format(time.RFC3339)): {},
		"before=" + url.QueryEscape(time.Now().Add(2*time.Hour).Format(time.RFC3339)):  want,
	} {
		if got := ids(r.page(bob, query)); !equal(got, want) {
			t.Errorf("bob's inbox ?%s = %q, want %q", query, got, want)
		}
	}
	if got := ids(r.page(token("bob"), "")); !equal(got, []string{cyAsk.ID, bobAsk.ID}) {
		t.Errorf("bob's inbox without his group = %q", got)
	}
	if got := ids(r.page(token("ada"), "")); !equal(got, []string{r.pending(t, "eve")}) {
		t.Errorf("ada's inbox = %q, want eve's ask only", got)
	}

	// An invalid answer is refused with its field errors; nothing taken.
	code, raw := r.do(http.MethodPost, "/inbox/submit", bob, submitBody(cyConv, cyAsk.ID, `{"answers":[{"header":"Plan","options":["Gold"]}]}`))
	var bad inbox.Problem
	if json.Unmarshal(raw, &bad); code != 422 || bad.Code != "invalid_answer" || len(bad.Errors) == 0 {
		t.Errorf("an invalid answer: %d %s", code, raw)
	}
	code, raw = r.do(http.MethodPost, "/inbox/submit", bob, submitBody(cyConv, cyAsk.ID, pro))
	var done inbox.Answered
	if json.Unmarshal(raw, &done); code != 200 || done.Status != "submitted" || done.Via != agent.ViaInbox || done.By != "bob" || done.InteractionID != cyAsk.ID {
		t.Fatalf("bob's answer: %d %s", code, raw)
	}
	if reply := next(t, cyEvents, agent.EventReply); reply.Reply == nil || reply.Reply.Text != "Done." {
		t.Errorf("cy's turn resumed with %+v", reply)
	}
	if got := ids(r.page(bob, "")); !equal(got, want[1:]) {
		t.Errorf("bob's inbox once he answered = %q, want %q", got, want[1:])
	}
	code, raw = r.do(http.MethodPost, "/inbox/submit", bob, submitBody(cyConv, cyAsk.ID, pro))
	if json.Unmarshal(raw, &bad); code != 409 || bad.Code != "already_answered" || !strings.Contains(bad.Message, "from an inbox") {
		t.Errorf("answered again: %d %s", code, raw)
	}
}

// pending is the pending ask of the one conversation of owner.
func (r *rig) pending(t *testing.T, owner string) string {
	t.Helper()
	p, err := r.eng.Inbox(agent.WithPrincipal(context.Background(), addressees[owner]), agent.InboxQuery{})
	if err != nil || len(p.Asks) == 0 {
		t.Fatalf("the ask of %s's conversation: %v", owner, err)
	}
	return p.Asks[0].ID
}

func equal(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }

// An answer from someone the ask is not for gets, byte for byte, what an
// answer to an ask that does not exist gets, and changes nothing: an ask
// addressed to another, or to a group the caller is not of, and an
// unaddressed ask of a conversation the caller does not own; before and
// after it ends.
func TestInboxRefusesAsForNoAsk(t *testing.T) {
	r := newRig(t, true)
	cyConv, cyAsk, _ := r.ask("cy")
	deeConv, deeAsk, _ := r.ask("dee")
	fayConv, fayAsk, _ := r.ask("fay")
	ada := token("ada", "staff")
	_, none := r.do(http.MethodPost, "/inbox/submit", ada, submitBody(cyConv, uuid.NewString(), pro))
	if !strings.Contains(string(none), `"not_found"`) {
		t.Fatalf("no ask: %s", none)
	}
	refused := func(when string) {
		t.Helper()
		for _, c := range []struct{ conv, id string }{{cyConv, cyAsk.ID}, {deeConv, deeAsk.ID}, {fayConv, fayAsk.ID}} {
			code, got := r.do(http.MethodPost, "/inbox/submit", ada, submitBody(c.conv, c.id, pro))
			if code != 404 || !bytes.Equal(got, none) {
				t.Errorf("%s: ada's answer to %s: %d %s; for no ask: %s", when, c.id, code, got, none)
			}
		}
	}
	refused("pending")
	for _, c := range []struct{ conv, id string }{{cyConv, cyAsk.ID}, {deeConv, deeAsk.ID}, {fayConv, fayAsk.ID}} {
		if p, _ := r.eng.PendingAsk(context.Background(), c.conv); p == nil || p.ID != c.id {
			t.Fatalf("a refused answer ended %s", c.id)
		}
	}
	if got := ids(r.page(ada, "")); len(got) != 0 {
		t.Errorf("ada's inbox = %q", got)
	}
	if code, raw := r.do(http.MethodPost, "/inbox/submit", token("bob"), submitBody(cyConv, cyAsk.ID, pro)); code != 200 {
		t.Fatalf("bob's answer: %d %s", code, raw)
	}
	if code, raw := r.do(http.MethodPost, "/inbox/submit", token("fay"), submitBody(fayConv, fayAsk.ID, pro)); code != 200 {
		t.Fatalf("fay's answer to her own: %d %s", code, raw)
	}
	r.eng.Wait()
	refused("ended")
}

// Bad input gets a clear 4xx and changes nothing; without auth the inbox
// is off, and says why.
func TestInboxBadInput(t *testing.T) {
	r := newRig(t, true)
	conv, p, _ := r.ask("cy")
	bob := token("bob")
	for _, c := range []struct {
		name, method, path, bearer string
		body                       []byte
		code                       int
		errCode                    string
	}{
		{"no token", "GET", "/inbox/asks", "", nil, 401, "unauthorized"},
		{"a forged token", "GET", "/inbox/asks", server.SignToken([]byte("another-secret-0123456789abcdef!"), server.Principal{Sub: "bob"}, time.Now().Add(time.Hour)), nil, 401, "unauthorized"},
		{"an expired token", "GET", "/inbox/asks", server.SignToken(authSecret, server.Principal{Sub: "bob"}, time.Now().Add(-time.Hour)), nil, 401, "unauthorized"},
		{"submit without a token", "POST", "/inbox/submit", "", submitBody(conv, p.ID, pro), 401, "unauthorized"},
		{"a bad cursor", "GET", "/inbox/asks?cursor=nope!", bob, nil, 400, "bad_request"},
		{"a cursor of no id", "GET", "/inbox/asks?cursor=" + inbox.FormatCursor(store.InboxCursor{}), bob, nil, 400, "bad_request"},
		{"a bad time", "GET", "/inbox/asks?before=tomorrow", bob, nil, 400, "bad_request"},
		{"a limit of 0", "GET", "/inbox/asks?limit=0", bob, nil, 400, "bad_request"},
		{"a huge limit", "GET", "/inbox/asks?limit=100000", bob, nil, 400, "bad_request"},
		{"a limit of words", "GET", "/inbox/asks?limit=ten", bob, nil, 400, "bad_request"},
		{"an unknown parameter", "GET", "/inbox/asks?owner=cy", bob, nil, 400, "bad_request"},
		{"a parameter twice", "GET", "/inbox/asks?kind=a&kind=b", bob, nil, 400, "bad_request"},
		{"a kind with a NUL", "GET", "/inbox/asks?kind=a%00b", bob, nil, 400, "bad_request"},
		{"a conversation id with a NUL", "POST", "/inbox/submit", bob, submitBody("c\u0000", p.ID, pro), 400, "bad_request"},
		{"a huge id", "POST", "/inbox/submit", bob, submitBody(conv, strings.Repeat("x", 300), pro), 400, "bad_request"},
		{"POST asks", "POST", "/inbox/asks", bob, nil, 405, "method_not_allowed"},
		{"GET submit", "GET", "/inbox/submit", bob, nil, 405, "method_not_allowed"},
		{"a huge body", "POST", "/inbox/submit", bob, bytes.Repeat([]byte(" "), inbox.MaxBody+1), 413, "too_large"},
		{"not JSON", "POST", "/inbox/submit", bob, []byte(`{"conversationId":`), 400, "bad_request"},
		{"an unknown field", "POST", "/inbox/submit", bob, []byte(`{"conversationId":"` + conv + `","interactionId":"` + p.ID + `","value":{}}`), 400, "bad_request"},
		{"no ids", "POST", "/inbox/submit", bob, []byte(`{"values":{}}`), 400, "bad_request"},
		{"no answer", "POST", "/inbox/submit", bob, []byte(`{"conversationId":"` + conv + `","interactionId":"` + p.ID + `"}`), 400, "bad_request"},
		{"values that are no object", "POST", "/inbox/submit", bob, submitBody(conv, p.ID, `"Pro"`), 422, "invalid_answer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, raw := r.do(c.method, c.path, c.bearer, c.body)
			var pr inbox.Problem
			if err := json.Unmarshal(raw, &pr); err != nil || code != c.code || pr.Code != c.errCode || pr.Message == "" {
				t.Errorf("%d %s; want %d %s with a message", code, raw, c.code, c.errCode)
			}
		})
	}
	if q, _ := r.eng.PendingAsk(context.Background(), conv); q == nil || q.ID != p.ID {
		t.Error("bad input ended the ask")
	}

	off := newRig(t, false)
	for _, c := range []struct{ method, path string }{{"GET", "/inbox/asks"}, {"POST", "/inbox/submit"}} {
		code, raw := off.do(c.method, c.path, bob, nil)
		var pr inbox.Problem
		if json.Unmarshal(raw, &pr); code != 404 || pr.Code != "inbox_off" || !strings.Contains(pr.Message, "needs auth") {
			t.Errorf("%s %s without auth: %d %s", c.method, c.path, code, raw)
		}
	}
}

// A tool call's confirmation, unaddressed, is in its conversation's
// owner's inbox with the call's tool and arguments; it is answered with
// approved (not values), recorded as from the inbox, and the tool runs.
func TestInboxConfirmation(t *testing.T) {
	refund, err := agent.NewTool("send_refund", "Refund an order.", func(context.Context, struct {
		Amount float64 `json:"amount"`
	}) (any, error) {
		return "refunded", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	model, err := agent.NewScripted([]agent.ScriptEntry{{Kind: "toolCall", Name: "send_refund", Arguments: `{"amount":120}`}, {Kind: "text", Text: "Refunded."}})
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	mux := http.NewServeMux()
	srv := servertest.Start(t, servertest.Config{Model: model, Tools: []agent.HostTool{refund}, ConfirmTools: []string{"refund"},
		ParkTimeout: time.Hour, AuthSecret: authSecret, Logger: quiet}, mux)
	h := inbox.NewHandler(srv.Engine, inbox.Options{AuthSecret: authSecret, Logger: quiet})
	mux.Handle("/inbox/asks", h)
	mux.Handle("/inbox/submit", h)
	r := &rig{t: t, eng: srv.Engine, url: srv.URL}
	conv, p, events := r.ask("fay")
	page := r.page(token("fay"), "")
	if len(page.Asks) != 1 || page.Asks[0].Ask != "confirmation" || page.Asks[0].Tool != "send_refund" ||
		string(page.Asks[0].Arguments) != `{"amount":120}` || page.Asks[0].InteractionID != p.ID {
		t.Fatalf("fay's inbox: %+v", page)
	}
	if code, raw := r.do(http.MethodPost, "/inbox/submit", token("fay"), submitBody(conv, p.ID, `{}`)); code != 400 || !strings.Contains(string(raw), "approved: true or false") {
		t.Errorf("a confirmation answered with values: %d %s, want 400", code, raw)
	}
	b, _ := json.Marshal(map[string]any{"conversationId": conv, "interactionId": p.ID, "approved": true})
	code, raw := r.do(http.MethodPost, "/inbox/submit", token("fay"), b)
	var done inbox.Answered
	if json.Unmarshal(raw, &done); code != 200 || done.Status != "approved" || done.Via != agent.ViaInbox || done.By != "fay" {
		t.Fatalf("fay's approval: %d %s", code, raw)
	}
	if reply := next(t, events, agent.EventReply); reply.Reply == nil || reply.Reply.Text != "Refunded." {
		t.Errorf("the turn resumed with %+v", reply)
	}
}
