package storetest

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/kindkit/kindkit/store"
)

// Bench runs b.N interaction cycles against s: the store operations of one
// conversation whose turn parks on a card and resumes after a submit.
func Bench(b *testing.B, s store.Store) {
	// Cancellable, as the server's are.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if err := Cycle(ctx, s, "b"+strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
	}
}

var cycleSpec = json.RawMessage(`{"question":"Which plan?","options":[{"id":"basic","label":"Basic"},{"id":"pro","label":"Pro"}]}`)

// Cycle does, under ids prefixed with id, what the server does in one
// interaction cycle, in its five writes and no read (CycleSteps).
func Cycle(ctx context.Context, s store.Store, id string) error {
	for _, step := range CycleSteps(ctx, s, id) {
		if err := step.Run(); err != nil {
			return err
		}
	}
	return nil
}

// A CycleStep is one write of a cycle.
type CycleStep struct {
	Name string // the store's operation, as the debug stats name it
	Run  func() error
}

// CycleSteps are a cycle's writes, in order: create a conversation with
// its session, append the user's message as its first, park the turn with
// the model step that raised it, take the park (the submit) with its tool
// result, and store the model's answer and the reply as the turn's last
// step.
func CycleSteps(ctx context.Context, s store.Store, id string) []CycleStep {
	now := time.Now()
	conv := &store.Conversation{ID: id, Supports: []string{"choice_chips"}, CreatedAt: now}
	started := store.Lease{ParkID: id + "-t", Owner: "bench", Until: now.Add(time.Minute)}
	call := store.ToolCall{ID: id + "-call", Name: "raise_choices", Arguments: string(cycleSpec)}
	p := &store.Park{ID: id + "-p", Type: store.ParkInteraction, ConversationID: id, SessionID: id + "-s",
		Kind: "choices", Spec: cycleSpec, Reason: "to pick a plan", ToolCall: call, Deadline: now.Add(10 * time.Minute),
		State: store.ParkPending, Turn: json.RawMessage(`{"v":1,"requestId":"` + id + `-r","text":"Sure.","usage":{"promptTokens":10,"completionTokens":5}}`)}
	lease := store.Lease{ParkID: p.ID, Owner: "bench", Until: now.Add(time.Minute)}
	return []CycleStep{
		{"create_conversation", func() error {
			return s.CreateConversation(ctx, conv, &store.Session{ID: id + "-s", ConversationID: id,
				AgentID: "agent", AgentName: "Agent", UserParticipantID: id + "-up", AgentParticipantID: id + "-ap"})
		}},
		{"start_turn", func() error {
			if _, ok, err := s.StartTurn(ctx, &store.Message{ID: id + "-m1", ConversationID: id, Role: store.RoleUser,
				Text: "I want to upgrade my plan", CreatedAt: now}, turnRecord(id, started), conv, nil); err != nil || !ok {
				return cmp.Or(err, errors.New("StartTurn on a new conversation: not ok"))
			}
			return nil
		}},
		{"save_park", func() error {
			_, err := s.SavePark(ctx, p, &started,
				&store.Message{ID: id + "-m2", ConversationID: id, Role: store.RoleAssistant, ToolCalls: []store.ToolCall{call}, CreatedAt: now})
			return err
		}},
		{"take_park", func() error {
			if _, ok, err := s.TakePark(ctx, p.ID, store.Answer{State: store.ParkResolved, Lease: &lease,
				Messages: []*store.Message{{ID: id + "-m3", ConversationID: id, Role: store.RoleTool,
					Text: `{"status":"submitted","values":{"choice":"pro"}}`, ToolCallID: call.ID, ToolName: call.Name, CreatedAt: now}}}); err != nil {
				return err
			} else if !ok {
				return store.ErrNotFound
			}
			return nil
		}},
		{"save_step", func() error {
			return s.SaveStep(ctx, lease, store.Step{Turn: p.Turn, Done: true, Messages: []*store.Message{
				{ID: id + "-m4", ConversationID: id, Role: store.RoleAssistant, Text: "Done: you are on Pro now.", CreatedAt: now},
				{ID: id + "-m5", ConversationID: id, Role: store.RoleReply, Text: "Sure. Done: you are on Pro now.", CreatedAt: now}}})
		}},
	}
}

// turnRecord is the record of a turn of conversation conv that starts
// under lease l.
func turnRecord(conv string, l store.Lease) *store.Park {
	return &store.Park{ID: l.ParkID, Type: store.ParkTurn, ConversationID: conv, SessionID: conv + "-s",
		State: store.ParkRunning, Turn: json.RawMessage(`{"requestId":"` + conv + `-r"}`), Owed: true,
		LeaseOwner: l.Owner, LeaseUntil: l.Until, CreatedAt: l.Until}
}

// BenchOps benchmarks, one by one, the store operations of the hot path:
// what a cycle, a resume and the sweep ask of the store. Each
// sub-benchmark opens a fresh store with open and, where an operation
// needs records to act on, makes them before the timer starts.
func BenchOps(b *testing.B, open func(b *testing.B) store.Store) {
	ctx, cancel := context.WithCancel(context.Background()) // as the server's
	defer cancel()
	now := time.Now()
	call := store.ToolCall{ID: "call", Name: "request_choices", Arguments: string(cycleSpec)}
	park := func(conv string) *store.Park {
		return &store.Park{ID: conv + "-p", Type: store.ParkInteraction, ConversationID: conv, SessionID: conv + "-s", Kind: "choices",
			Spec: cycleSpec, Reason: "to pick a plan", ToolCall: call, Deadline: now.Add(time.Hour), State: store.ParkPending,
			Turn: json.RawMessage(`{"requestId":"` + conv + `-r","usage":{"promptTokens":10,"completionTokens":5}}`)}
	}
	msg := func(conv, id string, role store.Role) *store.Message {
		return &store.Message{ID: id, ConversationID: conv, Role: role, Text: "I want to upgrade my plan", CreatedAt: now}
	}
	// conv makes conversation id with a session; with parked, its pending
	// park too.
	conv := func(b *testing.B, s store.Store, id string, parked bool) {
		if err := s.CreateConversation(ctx, &store.Conversation{ID: id, Supports: []string{"choice_chips"}, CreatedAt: now}); err != nil {
			b.Fatal(err)
		}
		if err := s.CreateSession(ctx, &store.Session{ID: id + "-s", ConversationID: id}); err != nil {
			b.Fatal(err)
		}
		if parked {
			if _, err := s.SavePark(ctx, park(id), nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	ops := []struct {
		name  string
		setup func(b *testing.B, s store.Store) // before the timer
		op    func(s store.Store, i int) error
	}{
		{"create_conversation", nil, func(s store.Store, i int) error {
			return s.CreateConversation(ctx, &store.Conversation{ID: "c" + strconv.Itoa(i), CreatedAt: now})
		}},
		{"create_conversation_with_session", nil, func(s store.Store, i int) error {
			c := "c" + strconv.Itoa(i)
			return s.CreateConversation(ctx, &store.Conversation{ID: c, CreatedAt: now}, &store.Session{ID: c + "-s", ConversationID: c, AgentID: "agent"})
		}},
		{"create_session", func(b *testing.B, s store.Store) { conv(b, s, "c", false) }, func(s store.Store, i int) error {
			return s.CreateSession(ctx, &store.Session{ID: "s" + strconv.Itoa(i), ConversationID: "c", AgentID: "agent"})
		}},
		{"append_message", func(b *testing.B, s store.Store) { conv(b, s, "c", false) }, func(s store.Store, i int) error {
			return s.AppendMessages(ctx, msg("c", "m"+strconv.Itoa(i), store.RoleUser))
		}},
		{"start_first_turn", func(b *testing.B, s store.Store) {
			for i := range b.N {
				conv(b, s, "c"+strconv.Itoa(i), false)
			}
		}, func(s store.Store, i int) error {
			c := "c" + strconv.Itoa(i)
			l := store.Lease{ParkID: c + "-t", Owner: "bench", Until: time.Now().Add(time.Minute)}
			_, ok, err := s.StartTurn(ctx, msg(c, c+"-m", store.RoleUser), turnRecord(c, l), &store.Conversation{ID: c, Supports: []string{"choice_chips"}}, nil)
			if err == nil && !ok {
				err = store.ErrNotFound
			}
			return err
		}},
		{"save_park", func(b *testing.B, s store.Store) {
			for i := range b.N {
				conv(b, s, "c"+strconv.Itoa(i), false)
			}
		}, func(s store.Store, i int) error {
			_, err := s.SavePark(ctx, park("c"+strconv.Itoa(i)), nil)
			return err
		}},
		{"save_park_with_message", func(b *testing.B, s store.Store) {
			for i := range b.N {
				conv(b, s, "c"+strconv.Itoa(i), false)
			}
		}, func(s store.Store, i int) error {
			c := "c" + strconv.Itoa(i)
			_, err := s.SavePark(ctx, park(c), nil, &store.Message{ID: c + "-a", ConversationID: c, Role: store.RoleAssistant,
				ToolCalls: []store.ToolCall{call}, CreatedAt: now})
			return err
		}},
		{"pending_park", func(b *testing.B, s store.Store) { conv(b, s, "c", true) }, func(s store.Store, i int) error {
			_, err := s.PendingPark(ctx, "c")
			return err
		}},
		{"take_park", func(b *testing.B, s store.Store) {
			for i := range b.N {
				conv(b, s, "c"+strconv.Itoa(i), true)
			}
		}, func(s store.Store, i int) error {
			c := "c" + strconv.Itoa(i)
			_, ok, err := s.TakePark(ctx, c+"-p", store.Answer{State: store.ParkResolved,
				Messages: []*store.Message{{ID: c + "-t", ConversationID: c, Role: store.RoleTool, Text: `{"status":"submitted"}`, ToolCallID: call.ID, ToolName: call.Name, CreatedAt: now}},
				Lease:    &store.Lease{ParkID: c + "-p", Owner: "bench", Until: now.Add(time.Minute)}})
			if err == nil && !ok {
				err = store.ErrNotFound
			}
			return err
		}},
		{"save_step", func(b *testing.B, s store.Store) {
			conv(b, s, "c", true)
			if _, _, err := s.TakePark(ctx, "c-p", store.Answer{State: store.ParkResolved, Lease: &store.Lease{ParkID: "c-p", Owner: "bench", Until: now.Add(time.Minute)}}); err != nil {
				b.Fatal(err)
			}
		}, func(s store.Store, i int) error {
			return s.SaveStep(ctx, store.Lease{ParkID: "c-p", Owner: "bench", Until: now.Add(time.Minute)}, store.Step{
				Turn: json.RawMessage(`{"requestId":"r","text":"Done."}`), Messages: []*store.Message{msg("c", "a"+strconv.Itoa(i), store.RoleAssistant)}})
		}},
		{"renew_lease", func(b *testing.B, s store.Store) {
			conv(b, s, "c", true)
			if _, _, err := s.TakePark(ctx, "c-p", store.Answer{State: store.ParkResolved, Lease: &store.Lease{ParkID: "c-p", Owner: "bench", Until: now.Add(time.Minute)}}); err != nil {
				b.Fatal(err)
			}
		}, func(s store.Store, i int) error {
			return s.RenewLease(ctx, store.Lease{ParkID: "c-p", Owner: "bench", Until: now.Add(time.Minute + time.Duration(i))})
		}},
		{"conversation", func(b *testing.B, s store.Store) { conv(b, s, "c", false) }, func(s store.Store, i int) error {
			_, err := s.Conversation(ctx, "c")
			return err
		}},
		{"session", func(b *testing.B, s store.Store) { conv(b, s, "c", false) }, func(s store.Store, i int) error {
			_, err := s.Session(ctx, "c-s")
			return err
		}},
		{"messages_history", func(b *testing.B, s store.Store) {
			conv(b, s, "c", false)
			for i := range 20 {
				if err := s.AppendMessages(ctx, msg("c", "m"+strconv.Itoa(i), store.RoleUser), msg("c", "a"+strconv.Itoa(i), store.RoleAssistant)); err != nil {
					b.Fatal(err)
				}
			}
		}, func(s store.Store, i int) error {
			_, _, err := s.Messages(ctx, "c", []store.Role{store.RoleUser, store.RoleAssistant, store.RoleTool}, "", 50)
			return err
		}},
		{"expired_parks_none_due", func(b *testing.B, s store.Store) {
			for i := range 1000 {
				conv(b, s, "c"+strconv.Itoa(i), true)
			}
		}, func(s store.Store, i int) error {
			_, err := s.ExpiredParks(ctx, now, 100)
			return err
		}},
		{"expired_parks_100_due", func(b *testing.B, s store.Store) {
			for i := range 1000 {
				conv(b, s, "c"+strconv.Itoa(i), true)
			}
		}, func(s store.Store, i int) error {
			ps, err := s.ExpiredParks(ctx, now.Add(2*time.Hour), 100)
			if err == nil && len(ps) != 100 {
				err = fmt.Errorf("%d parks due, want 100", len(ps))
			}
			return err
		}},
	}
	for _, o := range ops {
		b.Run(o.name, func(b *testing.B) {
			s := open(b)
			if o.setup != nil {
				o.setup(b, s)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if err := o.op(s, i); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
