package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kindkit/kindkit/store"
)

// testMixedKeys: a store that a kindkit with random (UUIDv4) keys filled
// goes on working when time-ordered ones (UUIDv7, store.NewID) join them,
// in new conversations and in the old ones. The old ids here all sort
// after every new one, the reverse of the order the rows were made in, so
// a store that ordered by id where it means time, or looked for a version
// in an id, answers wrong.
func testMixedKeys(t *testing.T, s store.Store) {
	ctx := context.Background()
	const (
		oldConv = "f1e2d3c4-b5a6-4978-8a9b-0c1d2e3f4a5b"
		oldSess = "f2e2d3c4-b5a6-4978-8a9b-0c1d2e3f4a5b"
		oldMsg  = "f3e2d3c4-b5a6-4978-8a9b-0c1d2e3f4a5b"
		oldPark = "f4e2d3c4-b5a6-4978-8a9b-0c1d2e3f4a5b"
	)
	newConv, newSess, newPark1, newMsg, laterMsg, laterPark := store.NewID(), store.NewID(), store.NewID(), store.NewID(), store.NewID(), store.NewID()
	for _, id := range []string{newConv, newSess, newPark1, newMsg, laterMsg, laterPark} {
		if id > oldConv {
			t.Fatalf("store.NewID() = %s sorts after the v4 ids; the test wants them the other way", id)
		}
	}

	// Made by the old kindkit: a conversation waiting on a card.
	must(t, s.CreateConversation(ctx, &store.Conversation{ID: oldConv, CreatedAt: at(0)},
		&store.Session{ID: oldSess, ConversationID: oldConv, UserName: "old"}))
	must(t, s.AppendMessages(ctx, &store.Message{ID: oldMsg, ConversationID: oldConv, Role: store.RoleUser, Text: "old", CreatedAt: at(1)}))
	savePark(t, s, mixedPark(oldConv, oldSess, oldPark, at(2), at(300)))

	// Made by the new one: another conversation waiting on a card, due
	// after the old one.
	must(t, s.CreateConversation(ctx, &store.Conversation{ID: newConv, CreatedAt: at(10)},
		&store.Session{ID: newSess, ConversationID: newConv, UserName: "new"}))
	must(t, s.AppendMessages(ctx, &store.Message{ID: newMsg, ConversationID: newConv, Role: store.RoleUser, Text: "new", CreatedAt: at(11)}))
	savePark(t, s, mixedPark(newConv, newSess, newPark1, at(12), at(600)))

	// Both answer by id.
	for _, id := range []string{oldConv, newConv} {
		if _, err := s.Conversation(ctx, id); err != nil {
			t.Errorf("Conversation(%s): %v", id, err)
		}
	}
	for _, id := range []string{oldSess, newSess} {
		if _, err := s.Session(ctx, id); err != nil {
			t.Errorf("Session(%s): %v", id, err)
		}
	}
	for conv, want := range map[string]string{oldConv: oldPark, newConv: newPark1} {
		if p, err := s.PendingPark(ctx, conv); err != nil || p.ID != want {
			t.Errorf("PendingPark(%s) = %v, %v; want %s", conv, p, err, want)
		}
	}
	// Due by deadline, not by id: the old park first.
	due, err := s.ExpiredParks(ctx, at(3600), 10)
	must(t, err)
	if want := []string{oldPark, newPark1}; !slices.Equal(unsorted(due), want) {
		t.Errorf("ExpiredParks = %v, want %v (earliest deadline first)", unsorted(due), want)
	}
	if due, err = s.ExpiredParks(ctx, at(3600), 1); err != nil || !slices.Equal(unsorted(due), []string{oldPark}) {
		t.Errorf("ExpiredParks(limit 1) = %v, %v; want [%s]", unsorted(due), err, oldPark)
	}

	// The new kindkit answers the old card: new keys in the old
	// conversation, whose history stays in the order it was written.
	for _, id := range []string{oldPark, newPark1} {
		if _, ok, err := s.TakePark(ctx, id, store.Answer{State: store.ParkResolved, Outcome: []byte(`{"status":"submitted"}`)}); err != nil || !ok {
			t.Errorf("TakePark(%s) = %v, %v; want taken", id, ok, err)
		}
	}
	must(t, s.AppendMessages(ctx, &store.Message{ID: laterMsg, ConversationID: oldConv, Role: store.RoleUser, Text: "later", CreatedAt: at(20)}))
	savePark(t, s, mixedPark(oldConv, oldSess, laterPark, at(21), at(900)))
	got, more, err := s.Messages(ctx, oldConv, nil, "", 10)
	must(t, err)
	if ids := messageIDs(got); !slices.Equal(ids, []string{laterMsg, oldMsg}) || more {
		t.Errorf("Messages(old conversation) = %v, more %v; want [%s %s] (newest first)", ids, more, laterMsg, oldMsg)
	}
	got, _, err = s.Messages(ctx, oldConv, nil, laterMsg, 10)
	must(t, err)
	if ids := messageIDs(got); !slices.Equal(ids, []string{oldMsg}) {
		t.Errorf("Messages(old conversation, before the new message) = %v, want [%s]", ids, oldMsg)
	}
	if p, err := s.PendingPark(ctx, oldConv); err != nil || p.ID != laterPark {
		t.Errorf("PendingPark(old conversation) = %v, %v; want %s", p, err, laterPark)
	}
	if _, ok, err := s.TakePark(ctx, laterPark, store.Answer{State: store.ParkResolved, Outcome: []byte(`{"status":"submitted"}`)}); err != nil || !ok {
		t.Errorf("TakePark(%s) = %v, %v; want taken", laterPark, ok, err)
	}
	// Its ended cards by time saved, the old one first.
	ended, err := s.EndedParks(ctx, oldConv, time.Time{}, "", 10)
	must(t, err)
	if want := []string{oldPark, laterPark}; !slices.Equal(unsorted(ended), want) {
		t.Errorf("EndedParks(old conversation) = %v, want %v", unsorted(ended), want)
	}
	if ended, err = s.EndedParks(ctx, oldConv, time.Time{}, laterMsg, 10); err != nil || !slices.Equal(unsorted(ended), []string{oldPark}) {
		t.Errorf("EndedParks(old conversation, before the new message) = %v, %v; want [%s]", unsorted(ended), err, oldPark)
	}
	// The newest conversation first, whatever its id.
	list, err := s.ListConversations(ctx, store.ConversationFilter{}, 10)
	must(t, err)
	var convs []string
	for _, c := range list {
		convs = append(convs, c.ID)
	}
	if want := []string{oldConv, newConv}; !slices.Equal(convs, want) {
		t.Errorf("ListConversations = %v, want %v (the old one has the newest message)", convs, want)
	}
}

func mixedPark(conv, sess, id string, created, deadline time.Time) *store.Park {
	p := newPark(conv, id, deadline)
	p.SessionID, p.CreatedAt = sess, created
	return p
}

func messageIDs(ms []*store.Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}
