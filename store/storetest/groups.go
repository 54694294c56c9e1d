package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kindkit/kindkit/store"
)

// groupParks are n parks of conversation conv opened together by one model
// step, in their calls' order (saved a nanosecond apart, as the engine
// saves them).
func groupParks(conv, prefix string, n int) []*store.Park {
	ps := make([]*store.Park, n)
	for i := range ps {
		ps[i] = newPark(conv, fmt.Sprintf("%s%d", prefix, i+1), at(400))
		ps[i].Group = prefix
		ps[i].CreatedAt = at(10).Add(time.Duration(i))
	}
	return ps
}

func pendingIDs(t *testing.T, s store.Store, conv string) []string {
	t.Helper()
	ps, err := s.PendingParks(context.Background(), conv)
	must(t, err)
	return ids(ps)
}

// testParkGroups: the parks of one step are pending together, in their
// order; each take stores its answer; only the take that leaves none of the
// group pending gets the lease, and the turn is owed from then on.
func testParkGroups(t *testing.T, s store.Store) {
	ctx := context.Background()
	newConv(t, s, "c1")
	if ps, err := s.PendingParks(ctx, "c1"); err != nil || len(ps) != 0 {
		t.Errorf("PendingParks of an idle conversation = %v, %v; want none", ids(ps), err)
	}
	if ps, err := s.PendingParks(ctx, "nope"); err != nil || len(ps) != 0 {
		t.Errorf("PendingParks of an unknown conversation = %v, %v; want none", ids(ps), err)
	}
	savePark(t, s, newPark("c1", "alone", at(400)))
	group := groupParks("c1", "g", 3)
	replaced, err := s.SaveParks(ctx, group, nil, &store.Message{ID: "step", ConversationID: "c1", Role: store.RoleAssistant, Text: "the step", CreatedAt: at(10)})
	must(t, err)
	if d := cmp.Diff([]string{"alone"}, replaced); d != "" {
		t.Errorf("SaveParks replaced (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"g1", "g2", "g3"}, pendingIDs(t, s, "c1")); d != "" {
		t.Errorf("PendingParks (-want +got):\n%s", d)
	}
	first, err := s.PendingPark(ctx, "c1")
	must(t, err)
	if first.ID != "g1" || first.Group != "g" {
		t.Errorf("PendingPark = %s of group %q, want g1 of group g", first.ID, first.Group)
	}
	lease := func(id string) *store.Lease { return &store.Lease{ParkID: id, Owner: "me", Until: at(60)} }
	for _, id := range []string{"g3", "g1"} {
		p, ok, err := s.TakePark(ctx, id, store.Answer{State: store.ParkResolved, Lease: lease(id),
			Messages: []*store.Message{toolResult(&store.Park{ID: id, ConversationID: "c1"}, "answer "+id)}})
		must(t, err)
		if !ok || p.Owed || p.LeaseOwner != "" {
			t.Errorf("take of %s, not the group's last = ok %v, owed %v, lease %q; want ok, not owed", id, ok, p.Owed, p.LeaseOwner)
		}
		if _, err := s.OwedTurn(ctx, "c1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("OwedTurn after the take of %s: %v, want ErrNotFound", id, err)
		}
	}
	if d := cmp.Diff([]string{"g2"}, pendingIDs(t, s, "c1")); d != "" {
		t.Errorf("PendingParks after two takes (-want +got):\n%s", d)
	}
	p, ok, err := s.TakePark(ctx, "g2", store.Answer{State: store.ParkResolved, Lease: lease("g2"),
		Messages: []*store.Message{toolResult(&store.Park{ID: "g2", ConversationID: "c1"}, "answer g2")}})
	must(t, err)
	if !ok || !p.Owed || p.LeaseOwner != "me" {
		t.Errorf("take of the group's last = ok %v, owed %v, lease %q; want ok, owed by me", ok, p.Owed, p.LeaseOwner)
	}
	if owed, err := s.OwedTurn(ctx, "c1"); err != nil || owed.ID != "g2" {
		t.Errorf("OwedTurn after the last take = %v, %v; want g2", owed, err)
	}
	ms, _, err := s.Messages(ctx, "c1", []store.Role{store.RoleTool}, "", 10)
	must(t, err)
	var texts []string
	for _, m := range ms {
		texts = append(texts, m.Text)
	}
	if d := cmp.Diff([]string{"answer g2", "answer g1", "answer g3"}, texts); d != "" {
		t.Errorf("every answer is stored at its take (-want +got):\n%s", d)
	}

	// A take that ends the turn (cancelled) leaves the rest pending,
	// and no later take of the group resumes it; a new step's parks
	// replace what is pending.
	newConv(t, s, "c2")
	g := groupParks("c2", "h", 2)
	_, err = s.SaveParks(ctx, g, nil)
	must(t, err)
	if p, ok, err := s.TakePark(ctx, "h1", store.Answer{State: store.ParkCancelled}); err != nil || !ok || p.Owed {
		t.Errorf("cancel of h1 = %v, %v, %v", p, ok, err)
	}
	if p, ok, err := s.TakePark(ctx, "h2", store.Answer{State: store.ParkResolved, Lease: lease("h2")}); err != nil || !ok || p.Owed {
		t.Errorf("the last take of a group one of which was cancelled = %v, %v, %v; want taken, not owed", p, ok, err)
	}
	if _, err := s.OwedTurn(ctx, "c2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("OwedTurn of a group one of which was cancelled: %v, want ErrNotFound", err)
	}
	savedAgain := groupParks("c2", "h", 2)
	savedAgain[0].ID, savedAgain[1].ID = "h3", "h4"
	_, err = s.SaveParks(ctx, savedAgain, nil)
	must(t, err)
	next := groupParks("c2", "k", 2)
	replaced, err = s.SaveParks(ctx, next, nil)
	must(t, err)
	if d := cmp.Diff([]string{"h3", "h4"}, replaced); d != "" {
		t.Errorf("SaveParks replaced (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"k1", "k2"}, pendingIDs(t, s, "c2")); d != "" {
		t.Errorf("PendingParks (-want +got):\n%s", d)
	}
	if _, ok, _ := s.TakePark(ctx, "h4", store.Answer{State: store.ParkResolved}); ok {
		t.Error("take of a replaced park = ok")
	}

	// A message withdraws every park of the group, in one write.
	var asked []string
	l := store.Lease{ParkID: "t-c2", Owner: "me", Until: at(60)}
	withdrawn, ok, err := s.StartTurn(ctx, &store.Message{ID: "m-c2", ConversationID: "c2", Role: store.RoleUser, Text: "instead", CreatedAt: at(20)},
		turnRecord("c2", l), nil, func(p *store.Park) *store.Answer {
			asked = append(asked, p.ID)
			if p.ID == "k2" && len(asked) == 2 {
				return nil // the first time: refused
			}
			return &store.Answer{State: store.ParkCancelled}
		})
	must(t, err)
	if ok || len(withdrawn) != 0 {
		t.Errorf("StartTurn refused for k2 = %v, %v; want nothing withdrawn", ids(withdrawn), ok)
	}
	if d := cmp.Diff([]string{"k1", "k2"}, pendingIDs(t, s, "c2")); d != "" {
		t.Errorf("PendingParks after a refused StartTurn (-want +got):\n%s", d)
	}
	withdrawn, ok, err = s.StartTurn(ctx, &store.Message{ID: "m-c2", ConversationID: "c2", Role: store.RoleUser, Text: "instead", CreatedAt: at(20)},
		turnRecord("c2", l), nil, func(p *store.Park) *store.Answer { return &store.Answer{State: store.ParkCancelled} })
	must(t, err)
	if d := cmp.Diff([]string{"k1", "k2"}, ids(withdrawn)); !ok || d != "" {
		t.Errorf("StartTurn withdrew (-want +got), ok %v:\n%s", ok, d)
	}
	if ps := pendingIDs(t, s, "c2"); len(ps) != 0 {
		t.Errorf("PendingParks after the withdrawal = %v, want none", ps)
	}
}

// testParkGroupResumesOnce: the last two parks of a group taken at once,
// many times over: exactly one take resumes the turn.
func testParkGroupResumesOnce(t *testing.T, s store.Store) {
	ctx := context.Background()
	for round := range 10 {
		conv := fmt.Sprintf("c%d", round)
		newConv(t, s, conv)
		g := groupParks(conv, conv+"-p", 3)
		_, err := s.SaveParks(ctx, g, nil)
		must(t, err)
		if _, ok, err := s.TakePark(ctx, g[1].ID, store.Answer{State: store.ParkResolved,
			Lease: &store.Lease{ParkID: g[1].ID, Owner: "a", Until: at(60)}}); err != nil || !ok {
			t.Fatalf("take of %s: %v, %v", g[1].ID, ok, err)
		}
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			owed  []string
			fails []error
		)
		start := make(chan struct{})
		for _, p := range []*store.Park{g[0], g[2]} {
			wg.Go(func() {
				<-start
				taken, ok, err := s.TakePark(ctx, p.ID, store.Answer{State: store.ParkResolved,
					Lease: &store.Lease{ParkID: p.ID, Owner: p.ID, Until: at(60)}})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					fails = append(fails, err)
				case !ok:
					fails = append(fails, fmt.Errorf("take of %s: not pending", p.ID))
				case taken.Owed:
					owed = append(owed, p.ID)
				}
			})
		}
		close(start)
		wg.Wait()
		if len(owed) != 1 || len(fails) > 0 {
			t.Errorf("round %d: the last two takes at once: owed %v, errors %v; want exactly one owed", round, owed, fails)
		}
		if p, err := s.OwedTurn(ctx, conv); err != nil || len(owed) == 1 && p.ID != owed[0] {
			t.Errorf("round %d: OwedTurn = %v, %v; want %v", round, p, err, owed)
		}
	}
}
