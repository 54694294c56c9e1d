package main

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/kindkit/kindkit/store/storetest"
)

// The keys the processes sign with: an HMAC secret and an Ed25519 seed.
var (
	hookSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("kill-nine-secret-0123456789"))
	hookSeed   = []byte("kill-nine-ed25519-seed-012345678")
)

// hookRequest is a request the receiver got.
type hookRequest struct {
	header http.Header
	body   []byte
}

// hookReceiver records every request; while hold is set it answers none
// (it waits until its client goes away).
type hookReceiver struct {
	*httptest.Server
	mu   sync.Mutex
	got  []hookRequest
	hold bool
	seen chan struct{}
}

func newHookReceiver(t *testing.T) *hookReceiver {
	r := &hookReceiver{seen: make(chan struct{}, 100)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, hookRequest{req.Header.Clone(), b})
		hold := r.hold
		r.mu.Unlock()
		r.seen <- struct{}{}
		if hold {
			<-req.Context().Done() // the sender is killed meanwhile
		}
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *hookReceiver) next(t *testing.T) hookRequest {
	t.Helper()
	select {
	case <-r.seen:
	case <-time.After(30 * time.Second):
		t.Fatal("no webhook came")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got[len(r.got)-1]
}

// verifyHook checks q's signatures with implementations that are not
// kindkit's: the Standard Webhooks library (v1), crypto/ed25519 (v1a).
func verifyHook(t *testing.T, q hookRequest) {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(hookSecret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(q.body, q.header); err != nil {
		t.Errorf("v1: %v", err)
	}
	pub := ed25519.NewKeyFromSeed(hookSeed).Public().(ed25519.PublicKey)
	signed := []byte(q.header.Get("webhook-id") + "." + q.header.Get("webhook-timestamp") + "." + string(q.body))
	ok := false
	for _, sig := range strings.Fields(q.header.Get("webhook-signature")) {
		if b64, found := strings.CutPrefix(sig, "v1a,"); found {
			raw, err := base64.StdEncoding.DecodeString(b64)
			ok = err == nil && ed25519.Verify(pub, signed, raw)
		}
	}
	if !ok {
		t.Errorf("no v1a signature verifies: %q", q.header.Get("webhook-signature"))
	}
}

func hookBody(t *testing.T, q hookRequest) (typ, interactionID, status string) {
	t.Helper()
	var b struct {
		Type string
		Data struct {
			InteractionID string
			Status        string
		}
	}
	if err := json.Unmarshal(q.body, &b); err != nil {
		t.Fatalf("body %s: %v", q.body, err)
	}
	return b.Type, b.Data.InteractionID, b.Data.Status
}

// A park's ask.parked is committed with the park: a process killed -9
// while delivering it (the receiver has the request, and has not
// answered) leaves it in the store, and the next process delivers it,
// with the same webhook-id, then the ask.resolved of the answer it takes.
func TestWebhookSurvivesKill9(t *testing.T) {
	t.Setenv("KINDKIT_WEBHOOK_SECRET", hookSecret+" whsk_"+base64.StdEncoding.EncodeToString(hookSeed))
	for name, store := range stores(t) {
		t.Run(name, func(t *testing.T) {
			dsn := store(t)
			r := newHookReceiver(t)
			r.mu.Lock()
			r.hold = true
			r.mu.Unlock()
			flags := []string{"-webhook-url", r.URL + "/hooks?token=abc", "-webhook-timeout", "1s"}
			first := start(t, dsn, flags...)
			conv, iid := parkOn(t, first.url)
			held := r.next(t)
			first.kill9(t)

			r.mu.Lock()
			r.hold = false
			r.mu.Unlock()
			second := start(t, dsn, flags...)
			again := r.next(t)
			if typ, id, _ := hookBody(t, again); typ != "ask.parked" || id != iid {
				t.Fatalf("after the restart: %s of %s, want ask.parked of %s", typ, id, iid)
			}
			if again.header.Get("webhook-id") != held.header.Get("webhook-id") || string(again.body) != string(held.body) {
				t.Errorf("redelivery: id %q body %s; the killed attempt: %q %s",
					again.header.Get("webhook-id"), again.body, held.header.Get("webhook-id"), held.body)
			}
			verifyHook(t, held)
			verifyHook(t, again)

			resumeAndSubmit(t, second.url, conv, iid)
			resolved := r.next(t)
			verifyHook(t, resolved)
			if typ, id, status := hookBody(t, resolved); typ != "ask.resolved" || id != iid || status != "submitted" {
				t.Errorf("then: %s of %s (%s), want ask.resolved of %s (submitted)", typ, id, status, iid)
			}
			if strings.Contains(second.log.String(), "token=abc") || strings.Contains(second.log.String(), hookSecret[6:]) {
				t.Errorf("the log holds the endpoint's token or the secret:\n%s", second.log.String())
			}
		})
	}
}

// Two kindserver processes on one PostgreSQL both deliver webhooks: each
// event reaches the receiver once, an ask's ask.parked before its
// ask.resolved, whichever process parked or answered it.
func TestWebhookTwoProcessesOnePostgres(t *testing.T) {
	t.Setenv("KINDKIT_WEBHOOK_SECRET", hookSecret+" whsk_"+base64.StdEncoding.EncodeToString(hookSeed))
	dsn := storetest.PostgresDB(t)
	r := newHookReceiver(t)
	flags := []string{"-webhook-url", r.URL + "/hooks", "-v"}
	procs := []*proc{start(t, dsn, flags...), start(t, dsn, flags...)}
	const asks = 10
	for i := range asks {
		conv, iid := parkOn(t, procs[i%2].url)
		resumeAndSubmit(t, procs[(i+1)%2].url, conv, iid)
	}
	for range 2 * asks {
		r.next(t)
	}
	for _, p := range procs { // stopped, neither sends anything more
		p.cmd.Process.Signal(syscall.SIGTERM)
		p.cmd.Wait()
	}
	t.Logf("delivered by the first process: %d, by the second: %d",
		strings.Count(procs[0].log.String(), "webhook delivered"), strings.Count(procs[1].log.String(), "webhook delivered"))
	r.mu.Lock()
	got := slices.Clone(r.got)
	r.mu.Unlock()
	seen := map[string]int{}
	parked := map[string]bool{}
	for _, q := range got {
		verifyHook(t, q)
		seen[q.header.Get("webhook-id")]++
		switch typ, id, _ := hookBody(t, q); typ {
		case "ask.parked":
			parked[id] = true
		case "ask.resolved":
			if !parked[id] {
				t.Errorf("%s: ask.resolved before ask.parked", id)
			}
		}
	}
	if len(seen) != 2*asks || len(got) != 2*asks {
		t.Errorf("%d requests of %d events, want %d of %d", len(got), len(seen), 2*asks, 2*asks)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s delivered %d times", id, n)
		}
	}
}
