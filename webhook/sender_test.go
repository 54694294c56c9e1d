package webhook

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"go.uber.org/goleak"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/syncbuf"
	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
	"github.com/kindkit/kindkit/store/sqlstore"
	"github.com/kindkit/kindkit/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Keys of the tests: two HMAC secrets (a rotation) and an Ed25519 key.
var (
	secretA = "whsec_" + base64.StdEncoding.EncodeToString([]byte("secret-A-0123456789abcdef"))
	secretB = "whsec_" + base64.StdEncoding.EncodeToString([]byte("secret-B-0123456789abcdef-longer"))
	seed    = []byte("ed25519-seed-0123456789abcdefghi")[:ed25519.SeedSize]
	signing = "whsk_" + base64.StdEncoding.EncodeToString(seed)
)

func testKeys(t *testing.T) []Key {
	t.Helper()
	keys, err := ParseKeys(secretA + " " + secretB + "\n" + signing)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// secretWords are a person's free-text answer: no webhook body may hold
// them, nor the model's reply, nor the person's message.
const (
	secretWords = "Zebra-Sekret-42"
	modelReply  = "Pro it is, said the model"
	userMessage = "quote me a plan, privately"
)

// request is one request a receiver got.
type request struct {
	header http.Header
	body   []byte
}

// receiver is a real HTTP server on a real port that records every
// request and answers each with what answer says (by its number, from 1).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []request
	answer func(n int, w http.ResponseWriter)
	seen   chan struct{}
}

func newReceiver(t *testing.T, answer func(n int, w http.ResponseWriter)) *receiver {
	r := &receiver{answer: answer, seen: make(chan struct{}, 1000)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, request{req.Header.Clone(), b})
		n := len(r.got)
		r.mu.Unlock()
		if r.answer != nil {
			r.answer(n, w)
		}
		r.seen <- struct{}{}
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) requests() []request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]request(nil), r.got...)
}

// verify checks every signature of q independently of this package: v1
// with the Standard Webhooks Go library for each HMAC secret, v1a with
// crypto/ed25519.
func verify(t *testing.T, q request) {
	t.Helper()
	for _, secret := range []string{secretA, secretB} {
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			t.Fatal(err)
		}
		if err := wh.Verify(q.body, q.header); err != nil {
			t.Errorf("v1 with %s: %v", secret[:10], err)
		}
	}
	pub := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
	signed := []byte(q.header.Get("webhook-id") + "." + q.header.Get("webhook-timestamp") + "." + string(q.body))
	n := 0
	for _, sig := range strings.Fields(q.header.Get("webhook-signature")) {
		if b64, ok := strings.CutPrefix(sig, "v1a,"); ok {
			raw, err := base64.StdEncoding.DecodeString(b64)
			if err != nil || !ed25519.Verify(pub, signed, raw) {
				t.Errorf("v1a signature %q does not verify", sig)
			}
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d v1a signatures, want 1: %q", n, q.header.Get("webhook-signature"))
	}
}

func decode(t *testing.T, q request) Body {
	t.Helper()
	var b Body
	if err := json.Unmarshal(q.body, &b); err != nil {
		t.Fatalf("body %s: %v", q.body, err)
	}
	return b
}

// scriptModel raises a choices card and replies, n times over.
func scriptModel(t *testing.T, n int) agent.Model {
	t.Helper()
	var entries []agent.ScriptEntry
	for range n {
		entries = append(entries,
			agent.ScriptEntry{Kind: "toolCall", Name: "request_choices", Arguments: `{"questions":[{"question":"Which plan?","header":"Plan","options":["Basic","Pro"]}],"reason":"to quote"}`},
			agent.ScriptEntry{Kind: "text", Text: modelReply})
	}
	m, err := agent.NewScripted(entries)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func newEngine(t *testing.T, st store.Store, clock clockwork.Clock, consumers []string, turns int) *agent.Engine {
	t.Helper()
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	e, err := agent.NewEngine(agent.Config{Catalog: catalog, Store: st, Model: scriptModel(t, turns), Clock: clock, Outbox: consumers,
		ParkTimeout: time.Hour, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Shutdown(context.Background()); e.Close() })
	return e
}

// park starts a turn on a new conversation and returns it once its card
// waits.
func park(t *testing.T, e *agent.Engine) (*store.Session, *store.Park) {
	t.Helper()
	ctx := context.Background()
	conv, sess, err := e.NewConversation(ctx, "", []string{"choice_chips"}, agent.Opening{})
	if err != nil {
		t.Fatal(err)
	}
	prompted := make(chan struct{}, 1)
	stop := e.Subscribe(ctx, conv.ID, agent.Position{}, func(ev agent.Event) {
		if ev.Kind == agent.EventPrompt {
			prompted <- struct{}{}
		}
	})
	defer stop()
	if err := e.Send(ctx, sess, agent.Message{RequestID: "r1", Text: userMessage}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-prompted:
	case <-time.After(10 * time.Second):
		t.Fatal("the turn never parked")
	}
	p, err := e.Store().PendingPark(ctx, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	return sess, p
}

// answer submits a free-text answer to p and waits for the turn to end.
func answer(t *testing.T, e *agent.Engine, sess *store.Session, p *store.Park) {
	t.Helper()
	values := `{"answers":[{"header":"Plan","options":[],"other":"` + secretWords + `"}]}`
	if ok, err := e.Submit(context.Background(), sess, p.ID, agent.Answer{Values: []byte(values)}, nil); !ok || err != nil {
		t.Fatalf("Submit = %v, %v", ok, err)
	}
	e.Wait()
}

// attached is a sender for one endpoint at url, attached to e without its
// workers: the test runs deliverDue itself, on the fake clock.
func attached(t *testing.T, url string, cfg Config) (*Sender, *endpoint) {
	t.Helper()
	cfg.Endpoints = []Endpoint{{URL: url, Keys: testKeys(t)}}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.jitter = func(d time.Duration) time.Duration { return d }
	return s, s.endpoints[0]
}

// Every event is signed v1 with every secret and v1a with the Ed25519
// key, each checked by an implementation that is not this package's; an
// ask's events come parked, then resolved, and hold no message, no words
// of the model and no answer's values. On memory, SQLite and PostgreSQL,
// through the sender's own workers.
func TestSignedEvents(t *testing.T) {
	stores := map[string]func(t *testing.T) store.Store{
		"memory": func(t *testing.T) store.Store { return memstore.New() },
		"sqlite": func(t *testing.T) store.Store {
			return openStore(t, "sqlite:"+filepath.Join(t.TempDir(), "k.db"))
		},
		"postgres": func(t *testing.T) store.Store { return openStore(t, storetest.PostgresDB(t)) },
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			r := newReceiver(t, nil)
			s, err := New(Config{Endpoints: []Endpoint{{URL: r.URL + "/hooks", Keys: testKeys(t)}}, PollInterval: 10 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			e := newEngine(t, open(t), clockwork.NewRealClock(), s.Consumers(), 1)
			if err := s.Start(e); err != nil {
				t.Fatal(err)
			}
			defer s.Stop()
			sess, p := park(t, e)
			answer(t, e, sess, p)
			waitRequests(t, r, 2)
			got := r.requests()
			if len(got) != 2 {
				t.Fatalf("%d requests, want 2", len(got))
			}
			for i, q := range got {
				verify(t, q)
				for _, leak := range []string{secretWords, modelReply, userMessage, "Which plan?", "to quote"} {
					if strings.Contains(string(q.body), leak) {
						t.Errorf("request %d's body holds %q: %s", i+1, leak, q.body)
					}
				}
			}
			parked, resolved := decode(t, got[0]), decode(t, got[1])
			if parked.Type != "ask.parked" || parked.Data.InteractionID != p.ID || parked.Data.Kind != "choices" || parked.Data.Ask != "interaction" ||
				parked.Data.ConversationID != sess.ConversationID || parked.Data.Deadline == nil || !parked.Data.Deadline.Equal(p.Deadline) || parked.Data.Status != "" {
				t.Errorf("ask.parked: %s", got[0].body)
			}
			if resolved.Type != "ask.resolved" || resolved.Data.InteractionID != p.ID || resolved.Data.Status != "submitted" {
				t.Errorf("ask.resolved: %s", got[1].body)
			}
			if id0, id1 := got[0].header.Get("webhook-id"), got[1].header.Get("webhook-id"); id0 == id1 || strings.Contains(id0+id1, ".") {
				t.Errorf("webhook-ids %q and %q: want two, without a '.'", id0, id1)
			}
		})
	}
}

func openStore(t *testing.T, dsn string) *sqlstore.Store {
	t.Helper()
	s, err := sqlstore.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func waitRequests(t *testing.T, r *receiver, n int) {
	t.Helper()
	for range n {
		select {
		case <-r.seen:
		case <-time.After(20 * time.Second):
			t.Fatalf("%d requests, want %d", len(r.requests()), n)
		}
	}
}

// A forged or tampered request fails the same independent checks: the
// receiver's verification is not a formality.
func TestForgedSignatureFails(t *testing.T) {
	r := newReceiver(t, nil)
	clock := clockwork.NewFakeClockAt(time.Now())
	s, ep := attached(t, r.URL, Config{})
	e := newEngine(t, memstore.New(), clock, s.Consumers(), 1)
	if err := s.attach(e); err != nil {
		t.Fatal(err)
	}
	park(t, e)
	s.deliverDue(context.Background(), ep)
	q := r.requests()[0]
	wh, _ := standardwebhooks.NewWebhook(secretA)
	if err := wh.Verify(q.body, q.header); err != nil {
		t.Fatalf("the genuine request: %v", err)
	}
	tampered := append([]byte(nil), q.body...)
	tampered[len(tampered)-3] ^= 1
	if err := wh.Verify(tampered, q.header); err == nil {
		t.Error("a tampered body verified")
	}
	other, _ := standardwebhooks.NewWebhook("whsec_" + base64.StdEncoding.EncodeToString([]byte("not-the-secret-0123456789")))
	if err := other.Verify(q.body, q.header); err == nil {
		t.Error("another secret verified")
	}
	replayed := q.header.Clone()
	replayed.Set("webhook-timestamp", strconv.FormatInt(time.Now().Add(-time.Hour).Unix(), 10))
	if err := wh.Verify(q.body, replayed); err == nil {
		t.Error("an hour-old timestamp verified")
	}
}

// A receiver that answers 500 three times gets the event a fourth time,
// with the same webhook-id and body; each retry waits its backoff (5s,
// 10s, 20s) on the fake clock, and none comes before it.
func TestRetriesKeepTheID(t *testing.T) {
	r := newReceiver(t, func(n int, w http.ResponseWriter) {
		if n <= 3 {
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
	clock := clockwork.NewFakeClockAt(time.Now())
	metrics := &countMetrics{}
	s, ep := attached(t, r.URL, Config{Metrics: metrics})
	e := newEngine(t, memstore.New(), clock, s.Consumers(), 1)
	if err := s.attach(e); err != nil {
		t.Fatal(err)
	}
	park(t, e)
	ctx := context.Background()
	s.deliverDue(ctx, ep)
	for i, wait := range []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second} {
		clock.Advance(wait - time.Second)
		s.deliverDue(ctx, ep)
		if n := len(r.requests()); n != i+1 {
			t.Fatalf("%d requests a second before retry %d is due, want %d", n, i+1, i+1)
		}
		clock.Advance(time.Second)
		s.deliverDue(ctx, ep)
	}
	got := r.requests()
	if len(got) != 4 {
		t.Fatalf("%d requests, want 4", len(got))
	}
	for _, q := range got {
		verify(t, q)
		if q.header.Get("webhook-id") != got[0].header.Get("webhook-id") || string(q.body) != string(got[0].body) {
			t.Errorf("attempt with id %q body %s; the first had %q %s", q.header.Get("webhook-id"), q.body, got[0].header.Get("webhook-id"), got[0].body)
		}
	}
	if got[3].header.Get("webhook-timestamp") == got[0].header.Get("webhook-timestamp") {
		t.Error("the fourth attempt has the first's timestamp: want the attempt's own")
	}
	if m := metrics.counts(); m[ResultFailed] != 3 || m[ResultDelivered] != 1 {
		t.Errorf("metrics %v, want 3 failed, 1 delivered", m)
	}
	s.deliverDue(ctx, ep)
	if n := len(r.requests()); n != 4 {
		t.Errorf("%d requests after delivery, want 4", n)
	}
}

// Retry-After is honoured when it asks for longer than the backoff.
func TestRetryAfter(t *testing.T) {
	r := newReceiver(t, func(n int, w http.ResponseWriter) {
		if n == 1 {
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	clock := clockwork.NewFakeClockAt(time.Now())
	s, ep := attached(t, r.URL, Config{})
	e := newEngine(t, memstore.New(), clock, s.Consumers(), 1)
	if err := s.attach(e); err != nil {
		t.Fatal(err)
	}
	park(t, e)
	ctx := context.Background()
	s.deliverDue(ctx, ep)
	clock.Advance(119 * time.Second)
	s.deliverDue(ctx, ep)
	if n := len(r.requests()); n != 1 {
		t.Fatalf("%d requests before Retry-After's 120s, want 1", n)
	}
	clock.Advance(time.Second)
	s.deliverDue(ctx, ep)
	if n := len(r.requests()); n != 2 {
		t.Fatalf("%d requests at Retry-After's 120s, want 2", n)
	}
}

// An ask's ask.resolved never goes before its ask.parked: while the
// parked event is being retried, the resolved one waits.
func TestOrderPerAsk(t *testing.T) {
	r := newReceiver(t, func(n int, w http.ResponseWriter) {
		if n <= 2 {
			w.WriteHeader(http.StatusBadGateway)
		}
	})
	clock := clockwork.NewFakeClockAt(time.Now())
	s, ep := attached(t, r.URL, Config{})
	e := newEngine(t, memstore.New(), clock, s.Consumers(), 1)
	if err := s.attach(e); err != nil {
		t.Fatal(err)
	}
	sess, p := park(t, e)
	ctx := context.Background()
	s.deliverDue(ctx, ep) // parked: 502
	answer(t, e, sess, p)
	for range 3 {
		s.deliverDue(ctx, ep)
		clock.Advance(time.Minute)
	}
	s.deliverDue(ctx, ep)
	var types []string
	for _, q := range r.requests() {
		types = append(types, decode(t, q).Type)
	}
	if want := "ask.parked ask.parked ask.parked ask.resolved"; strings.Join(types, " ") != want {
		t.Errorf("requests %v, want %s", types, want)
	}
}

// A 410 disables the endpoint: its events are dropped, no more are
// written for it, and it is never called again; another endpoint goes on.
func TestGoneDisables(t *testing.T) {
	gone := newReceiver(t, func(n int, w http.ResponseWriter) { w.WriteHeader(http.StatusGone) })
	ok := newReceiver(t, nil)
	clock := clockwork.NewFakeClockAt(time.Now())
	metrics := &countMetrics{}
	s, err := New(Config{Endpoints: []Endpoint{{URL: gone.URL, Keys: testKeys(t)}, {URL: ok.URL, Keys: testKeys(t)}}, Metrics: metrics})
	if err != nil {
		t.Fatal(err)
	}
	st := memstore.New()
	e := newEngine(t, st, clock, s.Consumers(), 2)
	if err := s.attach(e); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sess, p := park(t, e)
	answer(t, e, sess, p)
	for _, ep := range s.endpoints {
		s.deliverDue(ctx, ep)
	}
	if !s.endpoints[0].disabled.Load() || st.OutboxOpen(s.endpoints[0].consumer) {
		t.Fatal("the endpoint that answered 410 is not disabled")
	}
	park(t, e)
	clock.Advance(time.Hour)
	for _, ep := range s.endpoints {
		s.deliverDue(ctx, ep)
	}
	if n := len(gone.requests()); n != 1 {
		t.Errorf("the gone endpoint got %d requests, want 1", n)
	}
	if n := len(ok.requests()); n != 3 {
		t.Errorf("the other endpoint got %d requests, want 3 (2 asks parked, 1 resolved)", n)
	}
	if m := metrics.counts(); m[ResultDisabled] != 1 {
		t.Errorf("metrics %v, want 1 disabled", m)
	}
}

// An event that keeps failing is given up once older than MaxAge, and
// the next event of its ask goes out.
func TestGiveUp(t *testing.T) {
	r := newReceiver(t, func(n int, w http.ResponseWriter) {
		if n == 1 {
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
	clock := clockwork.NewFakeClockAt(time.Now())
	metrics := &countMetrics{}
	s, ep := attached(t, r.URL, Config{MaxAge: time.Minute, Metrics: metrics})
	e := newEngine(t, memstore.New(), clock, s.Consumers(), 1)
	if err := s.attach(e); err != nil {
		t.Fatal(err)
	}
	sess, p := park(t, e)
	ctx := context.Background()
	clock.Advance(2 * time.Minute)
	s.deliverDue(ctx, ep)
	answer(t, e, sess, p)
	s.deliverDue(ctx, ep)
	got := r.requests()
	if len(got) != 2 || decode(t, got[1]).Type != "ask.resolved" {
		t.Fatalf("%d requests, want the parked event once and then the resolved one", len(got))
	}
	if m := metrics.counts(); m[ResultGaveUp] != 1 {
		t.Errorf("metrics %v, want 1 gave_up", m)
	}
}

// A failure is logged and counted with the endpoint's scheme and host
// only: not its path or query (which may hold a token), nor a key.
func TestFailuresNameNoSecret(t *testing.T) {
	r := newReceiver(t, func(n int, w http.ResponseWriter) { w.WriteHeader(http.StatusInternalServerError) })
	clock := clockwork.NewFakeClockAt(time.Now())
	logs := &syncbuf.Buffer{}
	metrics := &countMetrics{}
	refused := "http://127.0.0.1:1/hook/PathToken77?token=QueryToken88"
	s, err := New(Config{Endpoints: []Endpoint{{URL: r.URL + "/hook/PathToken77?token=QueryToken88", Keys: testKeys(t)}, {URL: refused, Keys: testKeys(t)}},
		Metrics: metrics, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, memstore.New(), clock, s.Consumers(), 1)
	if err := s.attach(e); err != nil {
		t.Fatal(err)
	}
	park(t, e)
	for _, ep := range s.endpoints {
		s.deliverDue(context.Background(), ep)
	}
	out := logs.String()
	if strings.Count(out, "webhook delivery failed") != 2 {
		t.Errorf("want a failure line per endpoint:\n%s", out)
	}
	keyMaterial := []string{secretA[6:], secretB[6:], signing[5:], "PathToken77", "QueryToken88"}
	for _, leak := range keyMaterial {
		if strings.Contains(out, leak) {
			t.Errorf("the log holds %q:\n%s", leak, out)
		}
		for _, label := range metrics.labels() {
			if strings.Contains(label, leak) {
				t.Errorf("a metric label holds %q: %s", leak, label)
			}
		}
	}
	if m := metrics.counts(); m[ResultFailed] != 2 {
		t.Errorf("metrics %v, want 2 failed", m)
	}
}

// A receiver that answers with a huge body does not hold the sender: it
// reads a bounded part, closes the connection and goes on.
func TestHugeResponse(t *testing.T) {
	var written atomic.Int64 // MiB the receiver got out before the sender hung up
	r := newReceiver(t, func(n int, w http.ResponseWriter) {
		chunk := strings.Repeat("x", 1<<20)
		for range 256 {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
			written.Add(1)
		}
	})
	clock := clockwork.NewFakeClockAt(time.Now())
	metrics := &countMetrics{}
	s, ep := attached(t, r.URL, Config{Metrics: metrics})
	e := newEngine(t, memstore.New(), clock, s.Consumers(), 1)
	if err := s.attach(e); err != nil {
		t.Fatal(err)
	}
	park(t, e)
	s.deliverDue(context.Background(), ep)
	if m := metrics.counts(); m[ResultDelivered] != 1 {
		t.Errorf("metrics %v, want the event delivered", m)
	}
	r.Close() // waits for the handler
	if n := written.Load(); n >= 64 {
		t.Errorf("the sender read %d MiB of the response, want it bounded", n)
	}
}

// Start refuses an engine that writes no events for the sender.
func TestStartNeedsTheOutbox(t *testing.T) {
	s, err := New(Config{Endpoints: []Endpoint{{URL: "https://example.com/hook", Keys: testKeys(t)}}})
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, memstore.New(), clockwork.NewFakeClock(), nil, 1)
	if err := s.Start(e); err == nil || !strings.Contains(err.Error(), "agent.Config.Outbox") {
		t.Errorf("Start on an engine without the outbox = %v", err)
	}
}

func TestNewRefusesBadEndpoints(t *testing.T) {
	keys := testKeys(t)
	for _, tc := range []struct {
		name string
		eps  []Endpoint
		want string
	}{
		{"none", nil, "no endpoint"},
		{"relative", []Endpoint{{URL: "/hook", Keys: keys}}, "endpoint 1: want an absolute"},
		{"ftp", []Endpoint{{URL: "ftp://example.com/x", Keys: keys}}, "endpoint 1: want an absolute"},
		{"no key", []Endpoint{{URL: "https://example.com/x"}}, "no signing key"},
		{"twice", []Endpoint{{URL: "https://example.com/x", Keys: keys}, {URL: "https://example.com/x", Keys: keys}}, "endpoint 2 (https://example.com) is given twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(Config{Endpoints: tc.eps})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New = %v, want %q", err, tc.want)
			}
		})
	}
}

// countMetrics counts WebhookAttempt's results, and keeps its labels.
type countMetrics struct {
	mu sync.Mutex
	n  map[string]int
	l  map[string]bool
}

func (m *countMetrics) WebhookAttempt(endpoint, result string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.n == nil {
		m.n, m.l = map[string]int{}, map[string]bool{}
	}
	m.n[result]++
	m.l[endpoint] = true
}

func (m *countMetrics) counts() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]int{}
	for k, v := range m.n {
		out[k] = v
	}
	return out
}

func (m *countMetrics) labels() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for l := range m.l {
		out = append(out, l)
	}
	return out
}
