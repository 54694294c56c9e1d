package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/store"
)

// A poll kind changed between two deploys: version 1 takes a pick named
// "choice", one of the options; version 2 renamed it "pick". These tests
// raise a card with one engine on version 1, then answer it with another
// engine, on the same store, on version 2: as a deploy between the raise
// and the answer would.

const (
	pollV1 = `{"$defs":{
	  "Spec":{"type":"object","required":["question","options"],"additionalProperties":false,
	          "properties":{"question":{"type":"string","minLength":1},"options":{"type":"array","minItems":2,"items":{"type":"string"}}}},
	  "Values":{"type":"object","required":["choice"],"additionalProperties":false,"properties":{"choice":{"type":"string"}}}}}`
	pollV2 = `{"$defs":{
	  "Spec":{"type":"object","required":["question","options"],"additionalProperties":false,
	          "properties":{"question":{"type":"string","minLength":1},"options":{"type":"array","minItems":2,"items":{"type":"string"}}}},
	  "Values":{"type":"object","required":["pick"],"additionalProperties":false,"properties":{"pick":{"type":"string"}}}}}`
	pollRaise = `{"question":"Lunch?","options":["pizza","soup"],"reason":"to order"}`
)

type pollSpec struct {
	Question string   `json:"question"`
	Options  []string `json:"options"`
}

type pollV1Values struct {
	Choice string `json:"choice"`
}

type pollV2Values struct {
	Pick string `json:"pick"`
}

// pollV1Rules take a choice only among the options.
type pollV1Rules struct {
	kindkit.Unimplemented[pollSpec, pollV1Values]
}

func (pollV1Rules) Validate(spec *pollSpec, v *pollV1Values) (*pollV1Values, []kindkit.FieldError) {
	if spec != nil && !slices.Contains(spec.Options, v.Choice) {
		return nil, []kindkit.FieldError{{Field: "choice", Message: "not an option"}}
	}
	return v, nil
}

// pollV2Rules take a pick only among the options; upgrading, when set,
// they upgrade version 1's cards: its choice is their pick.
type pollV2Rules struct {
	kindkit.Unimplemented[pollSpec, pollV2Values]
}

func (pollV2Rules) Validate(spec *pollSpec, v *pollV2Values) (*pollV2Values, []kindkit.FieldError) {
	if spec != nil && !slices.Contains(spec.Options, v.Pick) {
		return nil, []kindkit.FieldError{{Field: "pick", Message: "not an option"}}
	}
	return v, nil
}

type upgradingV2Rules struct{ pollV2Rules }

func (upgradingV2Rules) Upgrade(_ string, spec, values json.RawMessage) (*pollSpec, *pollV2Values, error) {
	var s pollSpec
	var v pollV1Values
	if err := json.Unmarshal(spec, &s); err != nil {
		return nil, nil, err
	}
	if err := json.Unmarshal(values, &v); err != nil {
		return nil, nil, err
	}
	return &s, &pollV2Values{Pick: v.Choice}, nil
}

var _ kindkit.Upgrader[pollSpec, pollV2Values] = upgradingV2Rules{}

func pollKind[V any](t *testing.T, schema string, rules kindkit.Rules[pollSpec, V]) kindkit.Kind {
	t.Helper()
	k, err := kindkit.NewKind[pollSpec, V](kindkit.Descriptor{Name: "poll", Capability: "poll_card", ToolName: "request_poll",
		Source: "poll.schema.json", Schema: schema}, rules)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// deploy is one deploy: an engine on st with catalog and hooks, whose
// model raises a poll and then says "Noted.", until the test ends.
func deploy(t *testing.T, st store.Store, catalog *kindkit.Catalog, clock clockwork.Clock, hooks []kindkit.Hook) *agent.Engine {
	t.Helper()
	m := scripted(t, agent.ScriptEntry{Kind: "toolCall", Name: "request_poll", Arguments: pollRaise}, agent.ScriptEntry{Kind: "text", Text: "Noted."})
	e, err := agent.NewEngine(agent.Config{Catalog: catalog, Store: st, Model: m, Clock: clock, Hooks: hooks,
		ParkTimeout: time.Hour, LeaseTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Shutdown(context.Background()) })
	return e
}

func catalogOf(t *testing.T, k kindkit.Kind, earlier ...kindkit.Kind) *kindkit.Catalog {
	t.Helper()
	c, err := kindkit.NewCatalog(k)
	if err != nil {
		t.Fatal(err)
	}
	if c, err = c.KeepEarlier(earlier...); err != nil {
		t.Fatal(err)
	}
	return c
}

// pickHook records the picks version 2's hook is handed.
type pickHook struct {
	mu    sync.Mutex
	picks []string
}

func (h *pickHook) hook() kindkit.Hook {
	return kindkit.NewHook("poll", func(_ context.Context, _ kindkit.Answered, v *pollV2Values) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.picks = append(h.picks, v.Pick)
		return nil
	})
}

func (h *pickHook) got() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.picks)
}

// raiseOnV1 raises a poll card on a deploy of version 1 of the kind,
// which then goes away, and returns the card's session and park.
func raiseOnV1(t *testing.T, st store.Store, clock clockwork.Clock) (*store.Session, *store.Park) {
	t.Helper()
	v1 := deploy(t, st, catalogOf(t, pollKind(t, pollV1, pollV1Rules{})), clock, nil)
	sess := conversation(t, st, "", "poll_card")
	f := newFollower()
	f.start(v1, sess, "order lunch")
	f.next(t, agent.EventPrompt)
	if err := v1.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	p, err := st.PendingPark(context.Background(), "c1")
	if err != nil {
		t.Fatal(err)
	}
	return sess, p
}

// resumedOnce waits for the turn's one reply on e and checks that the
// history holds one answer and one reply, the raise's result being
// result; it returns that result.
func resumedOnce(t *testing.T, e *agent.Engine, st store.Store, f *follower) string {
	t.Helper()
	r := f.next(t, agent.EventToolResult)
	if r := f.next(t, agent.EventReply); r.Reply.Text != "Noted." {
		t.Errorf("reply %q", r.Reply.Text)
	}
	e.Wait()
	if got := history(t, st); !slices.Equal(got, wantHistory) {
		t.Errorf("history = %v, want %v: the turn resumed once", got, wantHistory)
	}
	return r.Text
}

// TestKindChangedBetweenRaiseAndSubmit: a card asked by version 1 of its
// kind and answered after a deploy of version 2 is validated as it was
// asked when version 2's catalog keeps version 1; its answer is upgraded
// when version 2 declares an upgrade; and with neither, its ask ends,
// expired for the reason "kind changed", and the turn resumes once. A
// park of an engine before versions is taken as it was. On every store.
func TestKindChangedBetweenRaiseAndSubmit(t *testing.T) {
	ctx := context.Background()
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			t.Run("kept", func(t *testing.T) {
				st, clock := open(t), clockwork.NewFakeClock()
				sess, p := raiseOnV1(t, st, clock)
				v1 := pollKind(t, pollV1, pollV1Rules{})
				var hook pickHook
				v2 := deploy(t, st, catalogOf(t, pollKind(t, pollV2, pollV2Rules{}), v1), clock, []kindkit.Hook{hook.hook()})
				f := newFollower()
				t.Cleanup(v2.Subscribe(ctx, "c1", agent.Position{}, func(ev agent.Event) { f.events <- ev }))
				if k, ok := v2.AskedKind(p); !ok || k != v1 {
					t.Errorf("AskedKind = %v, %v; want version 1, which asked the card", k, ok)
				}
				// Version 1's rules check the answer: its field, its options.
				var invalid *agent.InvalidAnswerError
				for _, bad := range []string{`{"pick":"soup"}`, `{"choice":"salad"}`} {
					if ok, err := v2.Submit(ctx, sess, p.ID, agent.Answer{Values: json.RawMessage(bad)}, nil); ok || !errors.As(err, &invalid) {
						t.Errorf("Submit(%s) = %v, %v; want version 1's field errors", bad, ok, err)
					}
				}
				var taken agent.Taken
				if ok, err := v2.Submit(ctx, sess, p.ID, agent.Answer{Values: json.RawMessage(`{"choice":"soup"}`)}, func(tk agent.Taken) { taken = tk }); !ok || err != nil {
					t.Fatalf("Submit of the card as asked = %v, %v", ok, err)
				}
				if string(taken.Values) != `{"choice":"soup"}` {
					t.Errorf("taken values %s, want the card's as asked", taken.Values)
				}
				if got := resumedOnce(t, v2, st, f); got != `{"status":"submitted","values":{"choice":"soup"}}` {
					t.Errorf("the model read %s, want the answer as asked", got)
				}
				if got := hook.got(); len(got) != 0 {
					t.Errorf("version 2's hook ran with %q: values of another shape", got)
				}
			})

			t.Run("kept and upgraded", func(t *testing.T) {
				st, clock := open(t), clockwork.NewFakeClock()
				sess, p := raiseOnV1(t, st, clock)
				var hook pickHook
				v2 := deploy(t, st, catalogOf(t, pollKind(t, pollV2, upgradingV2Rules{}), pollKind(t, pollV1, pollV1Rules{})), clock,
					[]kindkit.Hook{hook.hook()})
				f := newFollower()
				t.Cleanup(v2.Subscribe(ctx, "c1", agent.Position{}, func(ev agent.Event) { f.events <- ev }))
				if ok, err := v2.Submit(ctx, sess, p.ID, agent.Answer{Values: json.RawMessage(`{"choice":"soup"}`)}, nil); !ok || err != nil {
					t.Fatalf("Submit = %v, %v", ok, err)
				}
				if got := resumedOnce(t, v2, st, f); got != `{"status":"submitted","values":{"choice":"soup"}}` {
					t.Errorf("the model read %s, want the answer as asked", got)
				}
				if got := hook.got(); !slices.Equal(got, []string{"soup"}) {
					t.Errorf("version 2's hook got %q, want the answer upgraded", got)
				}
			})

			t.Run("upgraded", func(t *testing.T) {
				st, clock := open(t), clockwork.NewFakeClock()
				sess, p := raiseOnV1(t, st, clock)
				var hook pickHook
				v2 := deploy(t, st, catalogOf(t, pollKind(t, pollV2, upgradingV2Rules{})), clock, []kindkit.Hook{hook.hook()})
				f := newFollower()
				t.Cleanup(v2.Subscribe(ctx, "c1", agent.Position{}, func(ev agent.Event) { f.events <- ev }))
				// Upgraded, the answer is version 2's: its rules check it.
				var invalid *agent.InvalidAnswerError
				if ok, err := v2.Submit(ctx, sess, p.ID, agent.Answer{Values: json.RawMessage(`{"choice":"salad"}`)}, nil); ok || !errors.As(err, &invalid) ||
					invalid.Errors[0].Field != "pick" {
					t.Errorf("Submit of a pick that is no option = %v, %v; want version 2's field error", ok, err)
				}
				if ok, err := v2.Submit(ctx, sess, p.ID, agent.Answer{Values: json.RawMessage(`{"choice":"soup"}`)}, nil); !ok || err != nil {
					t.Fatalf("Submit = %v, %v", ok, err)
				}
				if got := resumedOnce(t, v2, st, f); got != `{"status":"submitted","values":{"pick":"soup"}}` {
					t.Errorf("the model read %s, want the answer upgraded", got)
				}
				if got := hook.got(); !slices.Equal(got, []string{"soup"}) {
					t.Errorf("version 2's hook got %q, want the answer upgraded", got)
				}
			})

			for _, how := range []string{"submit", "rejoin"} {
				t.Run("changed on "+how, func(t *testing.T) {
					st, clock := open(t), clockwork.NewFakeClock()
					sess, p := raiseOnV1(t, st, clock)
					var hook pickHook
					v2 := deploy(t, st, catalogOf(t, pollKind(t, pollV2, pollV2Rules{})), clock, []kindkit.Hook{hook.hook()})
					f := newFollower()
					t.Cleanup(v2.Subscribe(ctx, "c1", agent.Position{}, func(ev agent.Event) { f.events <- ev }))
					answer := agent.Answer{Values: json.RawMessage(`{"pick":"soup"}`)} // version 2's shape: valid now, not as asked
					if how == "rejoin" {
						conv, err := st.Conversation(ctx, "c1")
						if err != nil {
							t.Fatal(err)
						}
						if shown := v2.Rejoin(ctx, sess, conv); shown != nil {
							t.Errorf("Rejoin showed %d events; want none: a card nobody can answer", len(shown))
						}
					} else {
						ok, err := v2.Submit(ctx, sess, p.ID, answer, nil)
						var ended *agent.AskEndedError
						if ok || !errors.As(err, &ended) {
							t.Fatalf("Submit = %v, %v; want an *AskEndedError", ok, err)
						}
					}
					if got := resumedOnce(t, v2, st, f); !strings.Contains(got, `"status":"no_response"`) || !strings.Contains(got, "kind changed") {
						t.Errorf("the model read %s, want no_response saying the kind changed", got)
					}
					// A late answer learns what happened; the record says how.
					ok, err := v2.Submit(ctx, sess, p.ID, answer, nil)
					var ended *agent.AskEndedError
					if ok || !errors.As(err, &ended) || ended.Status != "no_response" || ended.Via != agent.ViaKindChanged ||
						!regexp.MustCompile(`^this card expired at \S+ \(kind changed\)$`).MatchString(ended.Error()) {
						t.Errorf("a late answer = %v, %v; want expired, kind changed", ok, err)
					}
					rs, err := v2.Records(ctx, "c1", time.Time{}, "", 10)
					if err != nil || len(rs) != 1 || rs[0].State != store.ParkExpired || rs[0].Record == nil ||
						rs[0].Record.Via != agent.ViaKindChanged || rs[0].Record.By != "" || rs[0].Record.SessionID != "" {
						t.Errorf("records = %+v, %v; want one, expired via %s by the engine", rs, err, agent.ViaKindChanged)
					}
					if got := hook.got(); len(got) != 0 {
						t.Errorf("a hook ran with %q", got)
					}
				})
			}

			t.Run("before versions", func(t *testing.T) {
				// A park that an engine before versions stored has none:
				// it is taken with the kind served now, as it was then.
				st, clock := open(t), clockwork.NewFakeClock()
				sess, p := raiseOnV1(t, versionless{st}, clock)
				v2 := deploy(t, st, catalogOf(t, pollKind(t, pollV2, pollV2Rules{})), clock, nil)
				f := newFollower()
				t.Cleanup(v2.Subscribe(ctx, "c1", agent.Position{}, func(ev agent.Event) { f.events <- ev }))
				if ok, err := v2.Submit(ctx, sess, p.ID, agent.Answer{Values: json.RawMessage(`{"pick":"soup"}`)}, nil); !ok || err != nil {
					t.Fatalf("Submit = %v, %v", ok, err)
				}
				if got := resumedOnce(t, v2, st, f); got != `{"status":"submitted","values":{"pick":"soup"}}` {
					t.Errorf("the model read %s", got)
				}
			})
		})
	}
}

// versionless is a store as an engine before versions wrote to it: its
// parks' turn states have no kind version.
type versionless struct{ store.Store }

func (s versionless) SavePark(ctx context.Context, p *store.Park, from *store.Lease, msgs ...*store.Message) (string, error) {
	var state map[string]any
	if err := json.Unmarshal(p.Turn, &state); err != nil {
		return "", fmt.Errorf("versionless: %w", err)
	}
	if _, ok := state["kindVersion"]; !ok {
		return "", errors.New("versionless: the park has no kind version to remove")
	}
	delete(state, "kindVersion")
	old := *p
	old.Turn, _ = json.Marshal(state)
	return s.Store.SavePark(ctx, &old, from, msgs...)
}

// lunchTool is a host tool that asks a poll and orders what the Ask
// returns, as the code of one deploy: typed with version 1's values or
// version 2's. An Ask with a deadline answers pizza when it passes.
func lunchTool[V any](t *testing.T, pick func(*V) string, deadline bool) agent.HostTool {
	t.Helper()
	tool, err := agent.NewTool("order_lunch", "Order lunch.", func(ctx context.Context, _ struct{}) (any, error) {
		var opts []kindkit.AskOption
		if deadline {
			opts = append(opts, kindkit.WithDeadline(kindkit.Deadline{After: time.Minute, OnExpiry: kindkit.ExpireDefault,
				Default: json.RawMessage(`{"choice":"pizza"}`)}))
		}
		v, err := kindkit.Ask[pollSpec, V](ctx, "poll", &pollSpec{Question: "Lunch?", Options: []string{"pizza", "soup"}}, "to order", opts...)
		switch {
		case errors.Is(err, kindkit.ErrNoResponse):
			return "not ordered: no answer", nil
		case err != nil:
			return nil, err
		}
		return "ordered " + pick(v), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// TestAskAcrossADeploy: a host tool's Ask is answered to the tool's
// code of the deploy that takes the answer, so an earlier version's
// answer reaches it only upgraded: kept and upgraded, it gets the
// answer in its own shape, from a person or from the deadline's
// default; kept but not upgraded, its ask ends as "kind changed" and
// the tool hears no answer. On every store.
func TestAskAcrossADeploy(t *testing.T) {
	ctx := context.Background()
	v1Tool := func(t *testing.T, deadline bool) agent.HostTool {
		return lunchTool(t, func(v *pollV1Values) string { return v.Choice }, deadline)
	}
	v2Tool := func(t *testing.T, deadline bool) agent.HostTool {
		return lunchTool(t, func(v *pollV2Values) string { return v.Pick }, deadline)
	}
	script := func(t *testing.T) agent.Model {
		return scripted(t, agent.ScriptEntry{Kind: "toolCall", Name: "order_lunch", Arguments: `{}`, ID: "call-l"}, agent.ScriptEntry{Kind: "text", Text: "Noted."})
	}
	on := func(t *testing.T, st store.Store, clock clockwork.Clock, c *kindkit.Catalog, tool agent.HostTool) *agent.Engine {
		t.Helper()
		e, err := agent.NewEngine(agent.Config{Catalog: c, Store: st, Model: script(t), Tools: []agent.HostTool{tool}, Clock: clock,
			ParkTimeout: time.Hour, LeaseTimeout: 3 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Shutdown(ctx) })
		return e
	}
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			for _, c := range []struct {
				name     string
				upgrades bool
				deadline bool
				rejoin   bool
				want     string
			}{
				{name: "upgraded", upgrades: true, want: "ordered soup"},
				{name: "not upgraded", want: "not ordered: no answer"},
				{name: "not upgraded, rejoined", rejoin: true, want: "not ordered: no answer"},
				{name: "default upgraded", upgrades: true, deadline: true, want: "ordered pizza"},
				{name: "default not upgraded", deadline: true, want: "not ordered: no answer"},
			} {
				t.Run(c.name, func(t *testing.T) {
					st, clock := open(t), clockwork.NewFakeClock()
					v1 := pollKind(t, pollV1, pollV1Rules{})
					first := on(t, st, clock, catalogOf(t, v1), v1Tool(t, c.deadline))
					sess := conversation(t, st, "", "poll_card")
					f := newFollower()
					f.start(first, sess, "lunch")
					f.next(t, agent.EventPrompt)
					if err := first.Shutdown(ctx); err != nil {
						t.Fatal(err)
					}
					p, err := st.PendingPark(ctx, "c1")
					if err != nil {
						t.Fatal(err)
					}
					var v2 kindkit.Kind = pollKind(t, pollV2, pollV2Rules{})
					if c.upgrades {
						v2 = pollKind(t, pollV2, upgradingV2Rules{})
					}
					second := on(t, st, clock, catalogOf(t, v2, v1), v2Tool(t, c.deadline))
					g := newFollower()
					t.Cleanup(second.Subscribe(ctx, "c1", agent.Position{}, func(ev agent.Event) { g.events <- ev }))
					switch {
					case c.rejoin:
						conv, err := st.Conversation(ctx, "c1")
						if err != nil {
							t.Fatal(err)
						}
						if shown := second.Rejoin(ctx, sess, conv); shown != nil {
							t.Errorf("Rejoin showed %d events; want none: the tool cannot take an answer of version 1", len(shown))
						}
					case c.deadline:
						waitFor(t, clock, func() bool { _, err := st.PendingPark(ctx, "c1"); return err != nil }, time.Minute)
					case c.upgrades:
						if ok, err := second.Submit(ctx, sess, p.ID, agent.Answer{Values: json.RawMessage(`{"choice":"soup"}`)}, nil); !ok || err != nil {
							t.Fatalf("Submit = %v, %v", ok, err)
						}
					default:
						ok, err := second.Submit(ctx, sess, p.ID, agent.Answer{Values: json.RawMessage(`{"choice":"soup"}`)}, nil)
						var ended *agent.AskEndedError
						if ok || !errors.As(err, &ended) || ended.Via != agent.ViaKindChanged {
							t.Fatalf("Submit = %v, %v; want the ask ended, kind changed", ok, err)
						}
					}
					if r := g.next(t, agent.EventToolResult); r.Text != c.want {
						t.Errorf("the tool said %q, want %q", r.Text, c.want)
					}
					g.next(t, agent.EventReply)
					second.Wait()
				})
			}
		})
	}
}
