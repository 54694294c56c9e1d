package storetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kindkit/kindkit/store"
)

// inboxParks saves, in conversations of ada, cy, bob and of nobody, parks
// addressed to bob, to group ops, to ada, to cy and to nobody.
func inboxParks(t *testing.T, s store.Store) {
	t.Helper()
	ctx := context.Background()
	for _, c := range []struct{ id, owner string }{{"c1", "ada"}, {"c2", "ada"}, {"c3", "cy"}, {"c4", ""}, {"c5", "bob"}} {
		must(t, s.CreateConversation(ctx, &store.Conversation{ID: c.id, Owner: c.owner, CreatedAt: at(0)}))
	}
	park := func(conv, id, kind, to string, deadline time.Time) *store.Park {
		p := newPark(conv, id, deadline)
		p.Kind, p.Addressee, p.Group = kind, to, conv
		return p
	}
	var never time.Time
	for _, ps := range [][]*store.Park{
		{park("c3", "p-a", "choices", "bob", at(300)), park("c3", "p-b", "approval", "group:ops", at(100)), park("c3", "p-c", "choices", "", at(50))},
		{park("c1", "p-d", "choices", "", at(200))},
		{park("c2", "p-e", "choices", "ada", never), park("c2", "p-f", "choices", "group:ops", at(100))},
		{park("c4", "p-g", "choices", "", at(10))},
		{park("c5", "p-h", "choices", "cy", at(20)), park("c5", "p-i", "approval", "", at(400)), park("c5", "p-j", "choices", "", never)},
	} {
		for i, p := range ps {
			p.CreatedAt = at(-60).Add(time.Duration(i))
			if len(ps) == 1 {
				p.Group = ""
			}
		}
		_, err := s.SaveParks(ctx, ps, nil)
		must(t, err)
	}
}

func inboxIDs(t *testing.T, s store.Store, q store.InboxQuery) []string {
	t.Helper()
	if q.Limit == 0 {
		q.Limit = 100
	}
	ps, err := s.Inbox(context.Background(), q)
	must(t, err)
	out := []string{}
	for _, p := range ps {
		out = append(out, p.ID)
	}
	return out
}

// testInbox: Inbox lists the pending parks addressed to the addressees,
// and the unaddressed ones of the owner's conversations, by deadline (none
// last) then id, filtered by kind and deadline, paged by its cursor.
func testInbox(t *testing.T, s store.Store) {
	ctx := context.Background()
	inboxParks(t, s)
	bob := store.InboxQuery{Addressees: []string{"bob", "group:ops"}, Owner: "bob"}
	for _, tc := range []struct {
		name string
		q    store.InboxQuery
		want []string
	}{
		{"bob and ops", bob, []string{"p-b", "p-f", "p-a", "p-i", "p-j"}},
		{"ada", store.InboxQuery{Addressees: []string{"ada"}, Owner: "ada"}, []string{"p-d", "p-e"}},
		{"addressed only", store.InboxQuery{Addressees: []string{"group:ops"}}, []string{"p-b", "p-f"}},
		{"owned only", store.InboxQuery{Owner: "cy"}, []string{"p-c"}},
		{"nobody's conversations are no one's", store.InboxQuery{Addressees: []string{""}}, []string{}},
		{"an unknown principal", store.InboxQuery{Addressees: []string{"eve"}, Owner: "eve"}, []string{}},
		{"kind", store.InboxQuery{Addressees: bob.Addressees, Owner: "bob", Kind: "approval"}, []string{"p-b", "p-i"}},
		{"before", store.InboxQuery{Addressees: bob.Addressees, Owner: "bob", Before: at(300)}, []string{"p-b", "p-f"}},
		{"before, inclusive of none", store.InboxQuery{Addressees: bob.Addressees, Owner: "bob", Before: at(100)}, []string{}},
		{"before, in another zone", store.InboxQuery{Addressees: bob.Addressees, Owner: "bob", Before: at(301).UTC()}, []string{"p-b", "p-f", "p-a"}},
		{"limit", store.InboxQuery{Addressees: bob.Addressees, Owner: "bob", Limit: 2}, []string{"p-b", "p-f"}},
		{"after a cursor", store.InboxQuery{Addressees: bob.Addressees, Owner: "bob", After: &store.InboxCursor{Deadline: at(100), ID: "p-b"}}, []string{"p-f", "p-a", "p-i", "p-j"}},
		{"after the last with a deadline", store.InboxQuery{Addressees: bob.Addressees, Owner: "bob", After: &store.InboxCursor{Deadline: at(400), ID: "p-i"}}, []string{"p-j"}},
		{"after one without", store.InboxQuery{Addressees: bob.Addressees, Owner: "bob", After: &store.InboxCursor{ID: "p-j"}}, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := inboxIDs(t, s, tc.q); !cmp.Equal(got, tc.want) {
				t.Errorf("Inbox = %q, want %q", got, tc.want)
			}
		})
	}

	// Paged one by one, the cursor of each page's last park begins the
	// next: every park once, in order.
	var paged []string
	q := bob
	q.Limit = 1
	for range 10 {
		ps, err := s.Inbox(ctx, q)
		must(t, err)
		if len(ps) == 0 {
			break
		}
		paged = append(paged, ps[0].ID)
		c := store.InboxCursorOf(ps[len(ps)-1])
		q.After = &c
	}
	if want := []string{"p-b", "p-f", "p-a", "p-i", "p-j"}; !cmp.Equal(paged, want) {
		t.Errorf("paged = %q, want %q", paged, want)
	}

	// The addressee comes back as saved, pending and once ended.
	ps, err := s.PendingParks(ctx, "c3")
	must(t, err)
	var to []string
	for _, p := range ps {
		to = append(to, p.Addressee)
	}
	if want := []string{"bob", "group:ops", ""}; !cmp.Equal(to, want) {
		t.Errorf("PendingParks' addressees = %q, want %q", to, want)
	}
	if _, ok, err := s.TakePark(ctx, "p-b", store.Answer{State: store.ParkResolved, Outcome: json.RawMessage(`{"status":"approved"}`)}); err != nil || !ok {
		t.Fatalf("TakePark(p-b) = %v, %v", ok, err)
	}
	ended, err := s.EndedPark(ctx, "c3", "p-b")
	must(t, err)
	if ended.Addressee != "group:ops" {
		t.Errorf("EndedPark's addressee = %q, want group:ops", ended.Addressee)
	}
	// An ended park, and a replaced one, are in no inbox.
	_, err = s.SavePark(ctx, newPark("c2", "p-k", at(500)), nil) // replaces p-e and p-f
	must(t, err)
	if got, want := inboxIDs(t, s, bob), []string{"p-a", "p-i", "p-j"}; !cmp.Equal(got, want) {
		t.Errorf("after a take and a replacement, Inbox = %q, want %q", got, want)
	}
	if got, want := inboxIDs(t, s, store.InboxQuery{Addressees: []string{"ada"}, Owner: "ada"}), []string{"p-d", "p-k"}; !cmp.Equal(got, want) {
		t.Errorf("ada's, after the replacement: Inbox = %q, want %q", got, want)
	}

	many := make([]string, store.MaxInboxAddressees+1)
	if _, err := s.Inbox(ctx, store.InboxQuery{Addressees: many, Limit: 1}); err == nil {
		t.Errorf("Inbox with %d addressees: no error", len(many))
	}
}
