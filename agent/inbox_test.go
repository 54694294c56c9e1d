package agent_test

import (
	"context"
	"testing"

	"github.com/jonboulle/clockwork"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/gen/choicesgen"
)

// inboxIDs lists the ids of ctx's caller's inbox, checking that it may
// answer every one (MayAnswer agrees with Inbox).
func inboxIDs(t *testing.T, e *agent.Engine, ctx context.Context) []string {
	t.Helper()
	page, err := e.Inbox(ctx, agent.InboxQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range page.Asks {
		if !agent.MayAnswer(ctx, a.Addressee) {
			t.Errorf("the inbox lists %s, addressed to %q, which its caller may not answer", a.ID, a.Addressee)
		}
		out = append(out, a.ID)
	}
	return out
}

// An unaddressed ask is in the inbox of its conversation's owner, no one
// else's; answered from there (ByInbox), its record says so and by whom,
// and the turn resumes.
func TestInboxOwnersAsk(t *testing.T) {
	ctx := context.Background()
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			tool, err := agent.NewTool("book_demo", "Book a demo.", func(ctx context.Context, _ struct{}) (any, error) {
				v, err := choicesgen.Ask(ctx, question("Slot", "Tue 10:00", "Wed 14:30"), "to book")
				if err != nil {
					return nil, err
				}
				return "booked " + pick(v), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			e := newEngine(t, agent.Config{Store: st, Tools: []agent.HostTool{tool}, Clock: clockwork.NewFakeClock(),
				Model: scripted(t, agent.ScriptEntry{Kind: "toolCall", Name: tool.Name, Arguments: `{}`, ID: "call-b"}, agent.ScriptEntry{Kind: "text", Text: "done"})})
			sess := conversation(t, st, "cy", "choice_chips")
			f := newFollower()
			f.start(e, sess, "book a demo")
			s := &askSetup{st, e, f, sess, nil}
			prompt := s.f.next(t, agent.EventPrompt)

			cy := agent.WithPrincipal(ctx, "cy")
			bob := agent.WithGroups(agent.WithPrincipal(ctx, "bob"), []string{"cy"})
			page, err := e.Inbox(cy, agent.InboxQuery{})
			if err != nil || len(page.Asks) != 1 || page.Next != nil {
				t.Fatalf("cy's inbox = %+v, %v; want one ask", page, err)
			}
			a := page.Asks[0]
			if a.ConversationID != "c1" || a.Kind != choicesgen.Name || a.Reason != "to book" || a.Addressee != "" || len(a.Spec) == 0 ||
				a.Deadline.IsZero() || a.CreatedAt.IsZero() || a.ID != prompt.Park.ID {
				t.Errorf("cy's ask = %+v (prompt %s)", a, prompt.Park.ID)
			}
			if got := inboxIDs(t, e, bob); len(got) != 0 {
				t.Errorf("bob's inbox = %q, want none: c1 is cy's", got)
			}
			for _, q := range []agent.InboxQuery{{Kind: "approval"}, {Before: a.Deadline}} {
				if page, err := e.Inbox(cy, q); err != nil || len(page.Asks) != 0 {
					t.Errorf("cy's inbox %+v = %+v, %v; want none", q, page, err)
				}
			}
			if page, err := e.Inbox(cy, agent.InboxQuery{Limit: 1}); err != nil || len(page.Asks) != 1 || page.Next == nil || page.Next.ID != a.ID {
				t.Errorf("a page of one: %+v, %v; want the ask and a cursor after it", page, err)
			}

			ok, err := e.Submit(agent.ByInbox(cy), sess, a.ID, agent.Answer{Values: []byte(`{"answers":[{"header":"Slot","options":["Wed 14:30"]}]}`)}, nil)
			if !ok || err != nil {
				t.Fatalf("Submit from the inbox = %v, %v", ok, err)
			}
			if got := s.result(t); got != "booked Wed 14:30" {
				t.Errorf("result %q", got)
			}
			if got := inboxIDs(t, e, cy); len(got) != 0 {
				t.Errorf("cy's inbox once answered = %q", got)
			}
			recs, err := e.Records(ctx, "c1", a.CreatedAt.Add(-1), "", 10)
			if err != nil || len(recs) != 1 || recs[0].Record == nil || recs[0].Record.By != "cy" || recs[0].Record.Via != agent.ViaInbox ||
				recs[0].Record.SessionID != "" {
				t.Errorf("records %+v, %v; want by cy, via inbox, no session", recs, err)
			}
		})
	}
}
