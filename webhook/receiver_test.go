package webhook_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/readmetest"
	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/store/memstore"
	"github.com/kindkit/kindkit/webhook"
)

// receive is a receiver of kindkit's webhooks (docs/webhooks.md shows
// it): it checks the signature and the timestamp, then acts.
func receive(secret string, act func(id string, body []byte)) (http.HandlerFunc, error) {
	wh, err := standardwebhooks.NewWebhook(secret) // whsec_…
	if err != nil {
		return nil, err
	}
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<10))
		if err != nil {
			http.Error(w, "too large", http.StatusRequestEntityTooLarge)
			return
		}
		if err := wh.Verify(body, r.Header); err != nil { // the signature, and a timestamp within 5 minutes
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		act(r.Header.Get("webhook-id"), body) // once per id: a retry sends the same one again
		w.WriteHeader(http.StatusNoContent)
	}, nil
}

// verifyV1a checks a v1a (Ed25519) signature of a webhook with the
// sender's public key (whpk_…, which kindserver logs at start).
func verifyV1a(public ed25519.PublicKey, h http.Header, body []byte) bool {
	signed := h.Get("webhook-id") + "." + h.Get("webhook-timestamp") + "." + string(body)
	for _, sig := range strings.Fields(h.Get("webhook-signature")) {
		if b64, ok := strings.CutPrefix(sig, "v1a,"); ok {
			raw, err := base64.StdEncoding.DecodeString(b64)
			if err == nil && ed25519.Verify(public, []byte(signed), raw) {
				return true
			}
		}
	}
	return false
}

func TestDocsShowTheReceiver(t *testing.T) {
	readmetest.HasFunc(t, "../docs/webhooks.md", "receiver_test.go", "func receive(")
	readmetest.HasFunc(t, "../README.md", "receiver_test.go", "func receive(")
	readmetest.HasFunc(t, "../docs/webhooks.md", "receiver_test.go", "func verifyV1a(")
}

// The docs' receiver takes kindkit's events, and refuses a forged
// signature (401), a replayed old request (401) and a huge body (413),
// acting on none of them.
func TestReceiver(t *testing.T) {
	secret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("receiver-secret-0123456789"))
	seed := []byte("receiver-ed25519-seed-0123456789")
	keys, err := webhook.ParseKeys(secret + " whsk_" + base64.StdEncoding.EncodeToString(seed))
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		acted []string
	)
	h, err := receive(secret, func(id string, body []byte) {
		mu.Lock()
		defer mu.Unlock()
		acted = append(acted, id)
	})
	if err != nil {
		t.Fatal(err)
	}
	var (
		lastMu sync.Mutex
		last   *http.Request
		body   []byte
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		lastMu.Lock()
		last, body = r.Clone(context.Background()), b
		lastMu.Unlock()
		r.Body = io.NopCloser(strings.NewReader(string(b)))
		h(w, r)
	}))
	defer srv.Close()

	s, err := webhook.New(webhook.Config{Endpoints: []webhook.Endpoint{{URL: srv.URL, Keys: keys}}, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	model, err := agent.NewScripted([]agent.ScriptEntry{{Kind: "toolCall", Name: "request_choices",
		Arguments: `{"questions":[{"question":"Which plan?","header":"Plan","options":["Basic","Pro"]}]}`}})
	if err != nil {
		t.Fatal(err)
	}
	e, err := agent.NewEngine(agent.Config{Catalog: catalog, Store: memstore.New(), Model: model, Outbox: s.Consumers(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := s.Start(e); err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	ctx := context.Background()
	_, sess, err := e.NewConversation(ctx, "", []string{"choice_chips"}, agent.Opening{})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Send(ctx, sess, agent.Message{RequestID: "r", Text: "hi"}, nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n := len(acted)
		mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the receiver never took the ask.parked event")
		}
		time.Sleep(10 * time.Millisecond)
	}
	lastMu.Lock()
	genuine, genuineBody := last, body
	lastMu.Unlock()
	if !verifyV1a(ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey), genuine.Header, genuineBody) {
		t.Error("the v1a signature does not verify")
	}

	post := func(header http.Header, b string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(b))
		req.Header = header
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	forged := genuine.Header.Clone()
	forged.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(make([]byte, 32)))
	tampered := strings.Replace(string(genuineBody), "ask.parked", "ask.resolved", 1)
	replayed := genuine.Header.Clone()
	replayed.Set("webhook-timestamp", strconv.FormatInt(time.Now().Add(-time.Hour).Unix(), 10))
	for name, c := range map[string]struct {
		header http.Header
		body   string
		want   int
	}{
		"forged signature": {forged, string(genuineBody), http.StatusUnauthorized},
		"tampered body":    {genuine.Header.Clone(), tampered, http.StatusUnauthorized},
		"replayed":         {replayed, string(genuineBody), http.StatusUnauthorized},
		"huge body":        {genuine.Header.Clone(), strings.Repeat("x", 1<<20), http.StatusRequestEntityTooLarge},
	} {
		if got := post(c.header, c.body); got != c.want {
			t.Errorf("%s: %d, want %d", name, got, c.want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(acted) != 1 {
		t.Errorf("the receiver acted %d times, want once (the genuine event)", len(acted))
	}
}
