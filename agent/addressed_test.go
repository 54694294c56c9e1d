package agent_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/gen/choicesgen"
	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/kinds/choices"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
)

// An ask addressed to a group (kindkit.AddressedTo) is answered only by a
// principal of that group: anyone else, the conversation's own session
// included, gets what an ask that does not exist gets (false, no error),
// before and after it ends; the record names who answered. The addressee
// is kept with the park, on every store.
func TestAddressedAsk(t *testing.T) {
	ctx := context.Background()
	slot := `{"answers":[{"header":"Slot","options":["Wed 14:30"]}]}`
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			tool, err := agent.NewTool("book_demo", "Book a demo.", func(ctx context.Context, _ struct{}) (any, error) {
				v, err := choicesgen.Ask(ctx, question("Slot", "Tue 10:00", "Wed 14:30"), "to book", kindkit.AddressedTo("group:managers"))
				if err != nil {
					return nil, err
				}
				return "booked " + pick(v), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			s := askTurn(t, open(t), tool, []string{"choice_chips"})
			s.f.next(t, agent.EventPrompt)
			p, err := s.st.PendingPark(ctx, "c1")
			if err != nil {
				t.Fatal(err)
			}
			if got := s.e.AddressedTo(p); got != "group:managers" || p.Addressee != "group:managers" {
				t.Fatalf("AddressedTo = %q, the park's Addressee %q", got, p.Addressee)
			}
			answer := agent.Answer{Values: []byte(slot)}
			ada := agent.WithGroups(agent.WithPrincipal(ctx, "ada"), []string{"staff"})
			bob := agent.WithGroups(agent.WithPrincipal(ctx, "bob"), []string{"staff", "managers"})
			nobody := agent.WithGroups(ctx, []string{"managers"}) // a group without a principal is no one's
			// The inbox of a manager lists it; of anyone else, not.
			if got := inboxIDs(t, s.e, bob); len(got) != 1 || got[0] != p.ID {
				t.Errorf("bob's inbox = %q, want [%s]", got, p.ID)
			}
			if got := inboxIDs(t, s.e, ada); len(got) != 0 {
				t.Errorf("ada's inbox = %q, want none", got)
			}
			for _, c := range []context.Context{ctx, nobody} {
				if _, err := s.e.Inbox(c, agent.InboxQuery{}); !errors.Is(err, agent.ErrNoPrincipal) {
					t.Errorf("Inbox without a principal: err = %v, want ErrNoPrincipal", err)
				}
			}
			missing := func(c context.Context) (bool, error) {
				return s.e.Submit(c, s.sess, store.NewID(), answer, nil)
			}
			wantOK, wantErr := missing(ada)
			for who, c := range map[string]context.Context{"anonymous": ctx, "ada (staff)": ada, "groups, no principal": nobody} {
				if ok, err := s.e.Submit(c, s.sess, p.ID, answer, nil); ok != wantOK || err != wantErr {
					t.Errorf("%s: Submit = %v, %v; want as for no ask: %v, %v", who, ok, err, wantOK, wantErr)
				}
				if ok, err := s.e.Decide(c, s.sess, p.ID, agent.Decided{Decision: agent.Approve}, nil); ok || err != nil {
					t.Errorf("%s: Decide = %v, %v", who, ok, err)
				}
			}
			if q, _ := s.st.PendingPark(ctx, "c1"); q == nil || q.ID != p.ID {
				t.Fatal("a refused answer ended the ask")
			}
			if ok, err := s.e.Submit(bob, s.sess, p.ID, answer, nil); !ok || err != nil {
				t.Fatalf("bob (managers): Submit = %v, %v", ok, err)
			}
			if got := s.result(t); got != "booked Wed 14:30" {
				t.Errorf("result %q", got)
			}
			if got := inboxIDs(t, s.e, bob); len(got) != 0 {
				t.Errorf("bob's inbox once answered = %q, want none", got)
			}
			// Ended: the addressee hears how; anyone else, nothing.
			var ended *agent.AskEndedError
			if ok, err := s.e.Submit(bob, s.sess, p.ID, answer, nil); ok || !errors.As(err, &ended) {
				t.Errorf("bob again: %v, %v; want AskEndedError", ok, err)
			}
			if ok, err := s.e.Submit(ada, s.sess, p.ID, answer, nil); ok || err != nil {
				t.Errorf("ada after: %v, %v; want as for no ask", ok, err)
			}
			recs, err := s.e.Records(ctx, "c1", p.CreatedAt.Add(-1), "", 10)
			if err != nil || len(recs) != 1 || recs[0].Record == nil || recs[0].Record.By != "bob" || recs[0].Record.Via != agent.ViaCard {
				t.Errorf("records %+v, %v", recs, err)
			}
		})
	}
}

// MayAnswer: an empty addressee is anyone's; a principal only its own; a
// group its members'.
func TestMayAnswer(t *testing.T) {
	ctx := context.Background()
	ada := agent.WithGroups(agent.WithPrincipal(ctx, "ada"), []string{"legal"})
	for _, c := range []struct {
		ctx  context.Context
		to   string
		want bool
	}{
		{ctx, "", true}, {ada, "", true}, {ada, "ada", true}, {ada, "bob", false}, {ctx, "ada", false},
		{ada, "group:legal", true}, {ada, "group:ops", false}, {ada, "group:", false}, {ada, "legal", false},
		{agent.WithGroups(ctx, []string{"legal"}), "group:legal", false},
	} {
		if got := agent.MayAnswer(c.ctx, c.to); got != c.want {
			t.Errorf("MayAnswer(%v, %q) = %v", c.ctx, c.to, got)
		}
	}
}

// A kind whose x-kind names an addressee (Descriptor.Addressee) addresses
// every card of it, the model's raise included; an Ask's own AddressedTo
// comes first.
func TestKindAddressee(t *testing.T) {
	ctx := context.Background()
	all, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	base, _ := all.Kind(choicesgen.Name)
	d := base.Descriptor()
	d.Addressee = "group:legal"
	legal, err := kindkit.NewKind[choicesgen.Spec, choicesgen.Values](d, choices.Rules{})
	if err != nil {
		t.Fatal(err)
	}
	catalog, err := kindkit.NewCatalog(legal)
	if err != nil {
		t.Fatal(err)
	}
	st := memstore.New()
	e, err := agent.NewEngine(agent.Config{Catalog: catalog, Store: st, Model: script(t, "Pro it is."), ParkTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Shutdown(ctx) })
	sess := conversation(t, st, "", "choice_chips")
	f := newFollower()
	f.start(e, sess, "hi")
	p := f.next(t, agent.EventPrompt).Park
	if got := e.AddressedTo(p); got != "group:legal" {
		t.Fatalf("the model's raise is addressed to %q, want the kind's group:legal", got)
	}
	values := agent.Answer{Values: []byte(`{"answers":[{"header":"Plan","options":["Pro"]}]}`)}
	if ok, err := e.Submit(agent.WithPrincipal(ctx, "ada"), sess, p.ID, values, nil); ok || err != nil {
		t.Errorf("ada, not of legal: %v, %v", ok, err)
	}
	if ok, err := e.Submit(agent.WithGroups(agent.WithPrincipal(ctx, "lee"), []string{"legal"}), sess, p.ID, values, nil); !ok || err != nil {
		t.Errorf("lee, of legal: %v, %v", ok, err)
	}
	f.next(t, agent.EventReply)
}
