package link_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"
	"go.uber.org/goleak"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/link"
	"github.com/kindkit/kindkit/server"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
	"github.com/kindkit/kindkit/store/sqlstore"
	"github.com/kindkit/kindkit/store/storetest"
	"github.com/kindkit/kindkit/web"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	raise = `{"questions":[{"question":"Which plan?","header":"Plan","options":["Basic","Pro"]}],"reason":"to quote"}`
	pro   = `{"answers":[{"header":"Plan","options":["Pro"]}]}`
	basic = `{"answers":[{"header":"Plan","options":["Basic"]}]}`
)

var authSecret = []byte("link-test-auth-secret-0123456789")

func stores(t *testing.T) map[string]func(t *testing.T) store.Store {
	return map[string]func(t *testing.T) store.Store{
		"memory":   func(t *testing.T) store.Store { return memstore.New() },
		"sqlite":   func(t *testing.T) store.Store { return openStore(t, "sqlite:"+filepath.Join(t.TempDir(), "k.db")) },
		"postgres": func(t *testing.T) store.Store { return openStore(t, storetest.PostgresDB(t)) },
	}
}

func openStore(t *testing.T, dsn string) store.Store {
	t.Helper()
	s, err := sqlstore.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// rig is an engine with links served on a real port.
type rig struct {
	t      *testing.T
	eng    *agent.Engine
	st     store.Store
	clock  *clockwork.FakeClock
	signer *link.Signer
	url    string
	events chan agent.Event
}

type rigOptions struct {
	auth    bool
	confirm bool
}

func newRig(t *testing.T, st store.Store, o rigOptions) *rig {
	t.Helper()
	clock := clockwork.NewFakeClock()
	entries := []agent.ScriptEntry{{Kind: "toolCall", Name: "request_choices", Arguments: raise}, {Kind: "text", Text: "Pro it is."}}
	cfg := servertest.Config{Store: st, Clock: clock, ParkTimeout: time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if o.confirm {
		entries = []agent.ScriptEntry{{Kind: "toolCall", Name: "send_refund", Arguments: `{"amount":120}`}, {Kind: "text", Text: "Refunded."}}
		refund, err := agent.NewTool("send_refund", "Refund an order.", func(context.Context, struct {
			Amount float64 `json:"amount"`
		}) (any, error) {
			return "refunded", nil
		})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Tools = []agent.HostTool{refund}
		cfg.ConfirmTools = []string{"refund"}
	}
	model, err := agent.NewScripted(entries)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Model = model
	_, eng := servertest.New(t, cfg)
	r := &rig{t: t, eng: eng, st: st, clock: clock, signer: signer(t, secretA), events: make(chan agent.Event, 256)}
	opts := link.Options{Signer: r.signer}
	if o.auth {
		opts.AuthSecret = authSecret
	}
	mux := http.NewServeMux()
	answers := link.NewHandler(eng, opts)
	mux.Handle("/answer/ask", answers)
	mux.Handle("/answer/submit", answers)
	mux.Handle("/", web.Handler(eng.Catalog()))
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	r.url = hs.URL
	return r
}

// park starts a conversation of owner, sends a message and waits for its
// ask; it returns the conversation, its session and the park.
func (r *rig) park(owner string) (string, *store.Session, *store.Park) {
	r.t.Helper()
	ctx := context.Background()
	conv := uuid.NewString()
	sess := &store.Session{ID: uuid.NewString(), ConversationID: conv}
	if err := r.st.CreateConversation(ctx, &store.Conversation{ID: conv, Owner: owner, Supports: []string{"choice_chips"}, CreatedAt: r.clock.Now()}, sess); err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(r.eng.Subscribe(ctx, conv, agent.Position{}, func(ev agent.Event) { r.events <- ev }))
	if err := r.eng.Send(agent.WithPrincipal(ctx, owner), sess, agent.Message{RequestID: "r1", Text: "hi"}, nil); err != nil {
		r.t.Fatal(err)
	}
	r.next(agent.EventPrompt)
	p, err := r.eng.PendingAsk(ctx, conv)
	if err != nil || p == nil {
		r.t.Fatalf("PendingAsk = %v, %v", p, err)
	}
	return conv, sess, p
}

// next is the conversation's next event of kind.
func (r *rig) next(kind agent.EventKind) agent.Event {
	r.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-r.events:
			if ev.Kind == kind {
				return ev
			}
		case <-timeout:
			r.t.Fatalf("no event %v", kind)
		}
	}
}

func (r *rig) token(conv, ask string) string {
	return r.signer.Mint(link.Claims{ConversationID: conv, AskID: ask, Expires: r.clock.Now().Add(30 * time.Minute)})
}

// post posts body to the handler's call what, with a bearer token when
// bearer is not empty, and decodes the reply.
func (r *rig) post(what, bearer string, body any) (int, map[string]any) {
	r.t.Helper()
	var b []byte
	switch v := body.(type) {
	case []byte:
		b = v
	default:
		b, _ = json.Marshal(v)
	}
	req, _ := http.NewRequest(http.MethodPost, r.url+"/answer/"+what, bytes.NewReader(b))
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer res.Body.Close()
	var reply map[string]any
	raw, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(raw, &reply); err != nil {
		r.t.Fatalf("%s: %d %s: not JSON", what, res.StatusCode, raw)
	}
	return res.StatusCode, reply
}

func submit(token, values string) map[string]any {
	return map[string]any{"token": token, "values": json.RawMessage(values)}
}

// An approver answers by link: the answer is validated as any other (an
// invalid one leaves the ask pending), the turn resumes, the record says
// by link, and the link then shows the ask answered. The same answer
// again gets the first result; another gets "already answered", with when
// and how.
func TestAnswerByLink(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			r := newRig(t, open(t), rigOptions{})
			conv, _, p := r.park("")
			tok := r.token(conv, p.ID)

			code, ask := r.post("ask", "", map[string]any{"token": tok})
			if code != 200 || ask["state"] != "pending" || ask["kind"] != "choices" || ask["interactionId"] != p.ID || ask["spec"] == nil {
				t.Fatalf("ask: %d %v", code, ask)
			}
			code, bad := r.post("submit", "", submit(tok, `{"answers":[{"header":"Plan","options":["Gold"]}]}`))
			if code != http.StatusUnprocessableEntity || bad["code"] != "invalid_answer" || bad["errors"] == nil {
				t.Fatalf("an invalid answer: %d %v", code, bad)
			}
			if q, _ := r.eng.PendingAsk(context.Background(), conv); q == nil || q.ID != p.ID {
				t.Fatal("an invalid answer ended the ask")
			}

			code, done := r.post("submit", "", submit(tok, pro))
			if code != 200 || done["state"] != "ended" || done["status"] != "submitted" || done["via"] != agent.ViaLink || done["at"] == nil || done["repeated"] != nil {
				t.Fatalf("submit: %d %v", code, done)
			}
			if reply := r.next(agent.EventReply); reply.Reply == nil || !strings.Contains(reply.Reply.Text, "Pro it is.") {
				t.Errorf("the turn resumed with %+v", reply.Reply)
			}
			r.eng.Wait()
			recs, err := r.eng.Records(context.Background(), conv, time.Time{}, "", 10)
			if err != nil || len(recs) != 1 || recs[0].Record == nil || recs[0].Record.Via != agent.ViaLink || recs[0].Record.SessionID != "" {
				t.Fatalf("records: %+v %v", recs, err)
			}

			code, again := r.post("submit", "", submit(tok, pro))
			if code != 200 || again["repeated"] != true || again["at"] != done["at"] || again["status"] != "submitted" {
				t.Errorf("the same answer again: %d %v, want the first result (%v)", code, again, done)
			}
			code, other := r.post("submit", "", submit(tok, basic))
			ended, _ := other["ended"].(map[string]any)
			if code != http.StatusConflict || other["code"] != "already_answered" || !strings.Contains(other["error"].(string), "was answered at") ||
				!strings.Contains(other["error"].(string), "by an answer link") || ended["at"] != done["at"] || ended["via"] != agent.ViaLink {
				t.Errorf("another answer after: %d %v", code, other)
			}
			code, declined := r.post("submit", "", map[string]any{"token": tok, "declined": true})
			if code != http.StatusConflict {
				t.Errorf("a decline after: %d %v", code, declined)
			}
			code, shown := r.post("ask", "", map[string]any{"token": tok})
			if code != 200 || shown["state"] != "ended" || shown["status"] != "submitted" || shown["via"] != agent.ViaLink || shown["at"] != done["at"] {
				t.Errorf("the link after: %d %v", code, shown)
			}
		})
	}
}

// Bad links and bad requests each get a clear 4xx and change nothing: the
// ask still waits, and its real link still answers it.
func TestBadLinks(t *testing.T) {
	r := newRig(t, memstore.New(), rigOptions{})
	conv, _, p := r.park("")
	tok := r.token(conv, p.ID)
	pay, mac, _ := strings.Cut(tok, ".")
	flip := func(s string) string { // a character in the middle: the ids, not the version
		i := len(s) / 2
		if s[i] == 'A' {
			return s[:i] + "B" + s[i+1:]
		}
		return s[:i] + "A" + s[i+1:]
	}
	expired := r.signer.Mint(link.Claims{ConversationID: conv, AskID: p.ID, Expires: r.clock.Now().Add(-time.Second)})
	cases := []struct {
		name string
		what string
		body any
		code int
		want string
	}{
		{"tampered payload", "submit", submit(flip(pay)+"."+mac, pro), 403, "invalid_link"},
		{"tampered signature", "submit", submit(pay+"."+flip(mac), pro), 403, "invalid_link"},
		{"foreign", "submit", submit(signer(t, secretB).Mint(link.Claims{ConversationID: conv, AskID: p.ID, Expires: r.clock.Now().Add(time.Hour)}), pro), 403, "invalid_link"},
		{"expired", "submit", submit(expired, pro), 410, "link_expired"},
		{"expired, shown", "ask", map[string]any{"token": expired}, 410, "link_expired"},
		{"malformed", "ask", map[string]any{"token": "hello"}, 400, "malformed_link"},
		{"no token", "submit", map[string]any{"values": json.RawMessage(pro)}, 400, "malformed_link"},
		{"another ask", "submit", submit(r.token(conv, uuid.NewString()), pro), 404, "not_found"},
		{"another conversation", "ask", map[string]any{"token": r.token(uuid.NewString(), p.ID)}, 404, "not_found"},
		{"no answer", "submit", map[string]any{"token": tok}, 400, "bad_request"},
		{"not JSON", "submit", []byte("token=" + tok), 400, "bad_request"},
		{"unknown field", "submit", []byte(`{"token":"` + tok + `","value":{}}`), 400, "bad_request"},
		{"huge", "submit", []byte(`{"token":"` + tok + `","values":{"x":"` + strings.Repeat("x", link.MaxBody) + `"}}`), 413, "too_large"},
	}
	for _, c := range cases {
		code, reply := r.post(c.what, "", c.body)
		if code != c.code || reply["code"] != c.want || reply["error"] == "" {
			t.Errorf("%s: %d %v, want %d %s", c.name, code, reply, c.code, c.want)
		}
	}
	res, err := http.Get(r.url + "/answer/submit")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", res.StatusCode)
	}
	if q, _ := r.eng.PendingAsk(context.Background(), conv); q == nil || q.ID != p.ID {
		t.Fatal("a bad request ended the ask")
	}
	if code, done := r.post("submit", "", submit(tok, pro)); code != 200 || done["status"] != "submitted" {
		t.Errorf("then the real link: %d %v", code, done)
	}
}

// A link dies with its ask: once its deadline passes, or a message
// withdraws it, the link shows how it ended and answers nothing. (A
// link made for a webhook expires with the ask's deadline; these live
// longer, to see the ask's end alone.)
func TestLinkDiesWithAsk(t *testing.T) {
	r := newRig(t, memstore.New(), rigOptions{})
	long := func(conv, ask string) string {
		return r.signer.Mint(link.Claims{ConversationID: conv, AskID: ask, Expires: r.clock.Now().Add(3 * time.Hour)})
	}

	conv, sess, p := r.park("")
	tok := long(conv, p.ID)
	if err := r.eng.Send(context.Background(), sess, agent.Message{RequestID: "r2", Text: "never mind", Withdraw: p.ID}, nil); err != nil {
		t.Fatal(err)
	}
	r.next(agent.EventCancelled)
	r.next(agent.EventReply) // the message's own turn
	r.eng.Wait()
	code, shown := r.post("ask", "", map[string]any{"token": tok})
	if code != 200 || shown["state"] != "ended" || shown["status"] != "withdrawn" {
		t.Errorf("withdrawn ask: %d %v", code, shown)
	}
	if code, late := r.post("submit", "", submit(tok, pro)); code != http.StatusConflict || !strings.Contains(late["error"].(string), "withdrawn") {
		t.Errorf("an answer after its withdrawal: %d %v", code, late)
	}

	conv, _, p = r.park("")
	tok = long(conv, p.ID)
	r.clock.Advance(time.Hour + time.Second) // past the park's deadline, not the link's
	r.next(agent.EventReply)
	r.eng.Wait()
	code, shown = r.post("ask", "", map[string]any{"token": tok})
	if code != 200 || shown["state"] != "ended" || shown["status"] != "no_response" || shown["via"] != agent.ViaDeadline {
		t.Errorf("expired ask: %d %v", code, shown)
	}
	if code, late := r.post("submit", "", submit(tok, pro)); code != http.StatusConflict || !strings.Contains(late["error"].(string), "expired") {
		t.Errorf("an answer after its deadline: %d %v", code, late)
	}
}

// With auth on, a link answers only for the conversation's owner: no
// bearer, or another's, is told there is no such ask, as for an ask that
// does not exist; the owner's answer is recorded as theirs.
func TestLinkWithAuth(t *testing.T) {
	r := newRig(t, memstore.New(), rigOptions{auth: true})
	conv, _, p := r.park("ada")
	tok := r.token(conv, p.ID)
	exp := time.Now().Add(time.Hour)
	eve := server.SignToken(authSecret, server.Principal{Sub: "eve"}, exp)
	ada := server.SignToken(authSecret, server.Principal{Sub: "ada"}, exp)
	forged := server.SignToken([]byte("another-secret-0123456789abcdefgh"), server.Principal{Sub: "ada"}, exp)
	_, missing := r.post("ask", "", map[string]any{"token": r.token(conv, uuid.NewString())})
	for _, bearer := range []string{"", eve, forged} {
		for _, what := range []string{"ask", "submit"} {
			code, reply := r.post(what, bearer, submit(tok, pro))
			if code != 404 || reply["error"] != missing["error"] {
				t.Errorf("%s with bearer %.10q: %d %v, want as for no ask (%v)", what, bearer, code, reply, missing)
			}
		}
	}
	if code, ask := r.post("ask", ada, map[string]any{"token": tok}); code != 200 || ask["state"] != "pending" {
		t.Fatalf("the owner: %d %v", code, ask)
	}
	if code, done := r.post("submit", ada, submit(tok, pro)); code != 200 || done["by"] != "ada" || done["via"] != agent.ViaLink {
		t.Errorf("the owner's answer: %d %v", code, done)
	}
}

// A tool call's confirmation is answered by link too: approved, the call
// runs; the same decision again gets the first result, the other is
// refused.
func TestConfirmByLink(t *testing.T) {
	r := newRig(t, memstore.New(), rigOptions{confirm: true})
	conv, _, p := r.park("")
	tok := r.token(conv, p.ID)
	if code, ask := r.post("ask", "", map[string]any{"token": tok}); code != 200 || ask["ask"] != "confirmation" || ask["tool"] != "send_refund" {
		t.Fatalf("ask: %d %v", code, ask)
	}
	if code, done := r.post("submit", "", map[string]any{"token": tok, "approved": true}); code != 200 || done["status"] != "approved" || done["via"] != agent.ViaLink {
		t.Fatalf("approve: %d %v", code, done)
	}
	r.next(agent.EventReply)
	if code, again := r.post("submit", "", map[string]any{"token": tok, "approved": true}); code != 200 || again["repeated"] != true {
		t.Errorf("approve again: %d %v", code, again)
	}
	if code, other := r.post("submit", "", map[string]any{"token": tok, "approved": false}); code != http.StatusConflict {
		t.Errorf("reject after: %d %v", code, other)
	}
}
