package webhook

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/kindkit/kindkit/link"
	"github.com/kindkit/kindkit/store/memstore"
)

// With Config.AnswerURL, an ask.parked carries an absolute answer link to
// its ask, the same on every attempt (made from the event, not the
// clock), expiring with the ask's deadline; an ask.resolved carries none.
func TestAnswerURL(t *testing.T) {
	r := newReceiver(t, func(n int, w http.ResponseWriter) {
		if n == 1 {
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
	signer, err := link.NewSigner([]byte("webhook-test-link-secret-0123456789"))
	if err != nil {
		t.Fatal(err)
	}
	clock := clockwork.NewFakeClockAt(time.Now())
	s, ep := attached(t, r.URL, Config{AnswerURL: signer.AnswerURL("https://chat.example.com/p/", 0)})
	e := newEngine(t, memstore.New(), clock, s.Consumers(), 1)
	if err := s.attach(e); err != nil {
		t.Fatal(err)
	}
	sess, p := park(t, e)
	ctx := context.Background()
	s.deliverDue(ctx, ep)
	clock.Advance(5 * time.Second)
	s.deliverDue(ctx, ep)
	answer(t, e, sess, p)
	s.deliverDue(ctx, ep)
	got := r.requests()
	if len(got) != 3 {
		t.Fatalf("%d requests, want 3", len(got))
	}
	if string(got[0].body) != string(got[1].body) {
		t.Errorf("the retry's body differs:\n%s\n%s", got[0].body, got[1].body)
	}
	parked, resolved := decode(t, got[1]), decode(t, got[2])
	u, found := strings.CutPrefix(parked.Data.AnswerURL, "https://chat.example.com/p/answer#")
	if parked.Type != "ask.parked" || !found {
		t.Fatalf("ask.parked's answerUrl: %q", parked.Data.AnswerURL)
	}
	c, err := signer.Parse(u, clock.Now())
	if err != nil || c.AskID != p.ID || c.ConversationID != p.ConversationID || !c.Expires.Equal(p.Deadline.Truncate(time.Second)) {
		t.Errorf("the link's claims %+v (%v); the ask %s of %s, deadline %v", c, err, p.ID, p.ConversationID, p.Deadline)
	}
	if resolved.Type != "ask.resolved" || resolved.Data.AnswerURL != "" {
		t.Errorf("ask.resolved: %+v", resolved)
	}
}
