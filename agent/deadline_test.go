package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
	deadlinekinds "github.com/kindkit/kindkit/cmd/kindgen/testdata/deadline/want/kinds"
	"github.com/kindkit/kindkit/gen/choicesgen"
	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
)

// slotTool is a host tool that asks for a slot with deadline d, and books
// what the Ask returns.
func slotTool(t *testing.T, d kindkit.Deadline) agent.HostTool {
	t.Helper()
	tool, err := agent.NewTool("book_demo", "Book a demo.", func(ctx context.Context, _ struct{}) (any, error) {
		slot, err := choicesgen.Ask(ctx, question("Slot", "Tue 10:00", "Wed 14:30"), "to book your demo", kindkit.WithDeadline(d))
		switch {
		case errors.Is(err, kindkit.ErrNoResponse):
			return "not booked: no answer", nil
		case err != nil:
			return nil, err
		}
		return "booked " + pick(slot), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// ended is the record of conversation c1's one ended ask.
func ended(t *testing.T, e *agent.Engine) agent.AskRecord {
	t.Helper()
	rs, err := e.Records(context.Background(), "c1", time.Time{}, "", 10)
	if err != nil || len(rs) != 1 || rs[0].Record == nil {
		t.Fatalf("Records = %+v, %v; want one, with its record", rs, err)
	}
	return rs[0]
}

// An ask's deadline policy, on the fake clock: a default answer the tool
// gets as if the person gave it, a turn that ends with its ask, and a
// default the kind refuses, refused when the ask is raised.
func TestDeadlinePolicy(t *testing.T) {
	slot := `{"answers":[{"header":"Slot","options":["Wed 14:30"]}]}`
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			t.Run("default answer", func(t *testing.T) {
				s := askTurn(t, open(t), slotTool(t, kindkit.Deadline{After: time.Minute, OnExpiry: kindkit.ExpireDefault, Default: json.RawMessage(slot)}), []string{"choice_chips"})
				prompt := s.f.next(t, agent.EventPrompt)
				if got := prompt.Park.Deadline.Sub(prompt.Park.CreatedAt); got != time.Minute {
					t.Errorf("the card waits %v, want its Ask's minute", got)
				}
				waitFor(t, s.clock, func() bool { _, err := s.st.PendingPark(context.Background(), "c1"); return err != nil }, time.Minute)
				if got := s.result(t); got != "booked Wed 14:30" {
					t.Errorf("the tool's result = %s, want the default slot booked", got)
				}
				a := ended(t, s.e)
				if a.Record.Via != agent.ViaDeadline || !strings.Contains(string(a.Outcome), `"status":"submitted"`) {
					t.Errorf("the ask ended %s, %+v; want submitted at the deadline", a.Outcome, a.Record)
				}
			})
			t.Run("end the turn", func(t *testing.T) {
				s := askTurn(t, open(t), slotTool(t, kindkit.Deadline{After: time.Minute, OnExpiry: kindkit.ExpireEndTurn}), []string{"choice_chips"})
				s.f.next(t, agent.EventPrompt)
				waitFor(t, s.clock, func() bool { _, err := s.st.PendingPark(context.Background(), "c1"); return err != nil }, time.Minute)
				if ev := s.f.next(t, agent.EventCancelled); ev.RequestID != "r1" {
					t.Errorf("cancelled %q, want r1", ev.RequestID)
				}
				s.e.Wait()
				if got := history(t, s.st); slices.Contains(got, store.RoleReply) || got[len(got)-1] != store.RoleEnded {
					t.Errorf("history %v: want the turn ended with no reply", got)
				}
				noOwedTurns(t, s.st, s.clock.Now(), "after the turn ended at its deadline")
				a := ended(t, s.e)
				if a.Record.Via != agent.ViaDeadline || a.State != store.ParkExpired || !strings.Contains(string(a.Outcome), "no_response") {
					t.Errorf("the ask ended %s %s, %+v", a.State, a.Outcome, a.Record)
				}
			})
			t.Run("default refused when raised", func(t *testing.T) {
				bad := `{"answers":[{"header":"Nope","options":["Wed 14:30"]}]}`
				s := askTurn(t, open(t), slotTool(t, kindkit.Deadline{OnExpiry: kindkit.ExpireDefault, Default: json.RawMessage(bad)}), []string{"choice_chips"})
				r := s.f.next(t, agent.EventToolResult)
				if !r.IsError || !strings.Contains(r.Text, "the deadline's default values are not a valid answer") {
					t.Errorf("the tool's result = %q (error %v), want the default refused", r.Text, r.IsError)
				}
				s.f.next(t, agent.EventReply)
				s.e.Wait()
				if _, err := s.st.PendingPark(context.Background(), "c1"); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("a card waits after its default was refused: %v", err)
				}
			})
		})
	}
}

// The engine's default policy applies to a model's raise, and a default
// with values is refused: values are an Ask's, per kind.
func TestEngineOnExpiry(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			clock := clockwork.NewFakeClock()
			e := newEngine(t, agent.Config{Store: st, Model: script(t, "never said"), Clock: clock, ParkTimeout: time.Minute, OnExpiry: kindkit.ExpireEndTurn})
			_, f, _ := parkOne(t, e, st, "hello")
			waitFor(t, clock, func() bool { _, err := st.PendingPark(context.Background(), "c1"); return err != nil }, time.Minute)
			f.next(t, agent.EventCancelled)
			e.Wait()
			if got := history(t, st); slices.Contains(got, store.RoleReply) {
				t.Errorf("history %v: the turn replied after its card's deadline ended it", got)
			}
		})
	}
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, on := range []kindkit.Expiry{kindkit.ExpireDefault, "later"} {
		e, err := agent.NewEngine(agent.Config{Catalog: catalog, Store: memstore.New(), Model: script(t, "hi"), OnExpiry: on})
		if err == nil || !strings.Contains(err.Error(), "OnExpiry") {
			t.Errorf("NewEngine with OnExpiry %q = %v", on, err)
		}
		if e != nil {
			e.Shutdown(context.Background())
		}
	}
}

// A kind's own deadline (x-kind deadline, here the golden poll kind's: 48
// hours, then its default answer) applies to a model's raise of it.
func TestKindDeadline(t *testing.T) {
	ctx := context.Background()
	polls, err := deadlinekinds.All()
	if err != nil {
		t.Fatal(err)
	}
	st := memstore.New()
	clock := clockwork.NewFakeClock()
	e, err := agent.NewEngine(agent.Config{Catalog: polls, Store: st, Clock: clock, Model: scripted(t,
		agent.ScriptEntry{Kind: "toolCall", Name: "request_poll", Arguments: `{"prompt":"Lunch?","choices":[{"id":"a","text":"Pizza"},{"id":"b","text":"Soup"}],"reason":"to order"}`},
		agent.ScriptEntry{Kind: "text", Text: "Noted."})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Shutdown(ctx) })
	sess := conversation(t, st, "", "poll_card")
	f := newFollower()
	f.start(e, sess, "lunch?")
	prompt := f.next(t, agent.EventPrompt)
	if got := prompt.Park.Deadline.Sub(prompt.Park.CreatedAt); got != 48*time.Hour {
		t.Errorf("the card waits %v, want the kind's 48h", got)
	}
	waitFor(t, clock, func() bool { _, err := st.PendingPark(ctx, "c1"); return err != nil }, 48*time.Hour)
	if r := f.next(t, agent.EventToolResult); !strings.Contains(r.Text, `"values":{"choice":"undecided"}`) {
		t.Errorf("the raise's result = %s, want the kind's default", r.Text)
	}
	f.next(t, agent.EventReply)
	e.Wait()
}
