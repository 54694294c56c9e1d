package storetest

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/kindkit/kindkit/store"
)

// Bench runs b.N interaction cycles against s: the store operations of one
// conversation whose turn parks on a card and resumes after a submit.
func Bench(b *testing.B, s store.Store) {
	ctx := context.Background()
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
// interaction cycle: create a conversation and a session, append the user's
// message, park the turn, look the park up (the submit), take it with its
// tool result, and store the model's answer and the reply as the turn's
// last step.
func Cycle(ctx context.Context, s store.Store, id string) error {
	now := time.Now()
	if err := s.CreateConversation(ctx, &store.Conversation{ID: id, CreatedAt: now}); err != nil {
		return err
	}
	if err := s.CreateSession(ctx, &store.Session{ID: id + "-s", ConversationID: id, AgentID: "agent", AgentName: "Agent",
		UserParticipantID: id + "-up", AgentParticipantID: id + "-ap"}); err != nil {
		return err
	}
	if err := s.AppendMessages(ctx, &store.Message{ID: id + "-m1", ConversationID: id, Role: store.RoleUser,
		Text: "I want to upgrade my plan", CreatedAt: now}); err != nil {
		return err
	}
	call := store.ToolCall{ID: id + "-call", Name: "raise_choices", Arguments: string(cycleSpec)}
	if err := s.AppendMessages(ctx, &store.Message{ID: id + "-m2", ConversationID: id, Role: store.RoleAssistant,
		ToolCalls: []store.ToolCall{call}, CreatedAt: now}); err != nil {
		return err
	}
	if _, err := s.SavePark(ctx, &store.Park{ID: id + "-p", Type: store.ParkInteraction, ConversationID: id, SessionID: id + "-s",
		Kind: "choices", Spec: cycleSpec, Reason: "to pick a plan", ToolCall: call, Deadline: now.Add(10 * time.Minute),
		State: store.ParkPending, Turn: store.TurnState{RequestID: id + "-r", Text: "Sure.", Usage: store.Usage{PromptTokens: 10, CompletionTokens: 5}}}, nil); err != nil {
		return err
	}
	p, err := s.PendingPark(ctx, id)
	if err != nil {
		return err
	}
	lease := store.Lease{ParkID: p.ID, Owner: "bench", Until: now.Add(time.Minute)}
	if _, ok, err := s.TakePark(ctx, p.ID, store.Answer{State: store.ParkResolved, Lease: &lease,
		Messages: []*store.Message{{ID: id + "-m3", ConversationID: id, Role: store.RoleTool,
			Text: `{"status":"submitted","values":{"choice":"pro"}}`, ToolCallID: call.ID, ToolName: call.Name, CreatedAt: now}}}); err != nil {
		return err
	} else if !ok {
		return store.ErrNotFound
	}
	return s.SaveStep(ctx, lease, store.Step{Turn: p.Turn, Done: true, Messages: []*store.Message{
		{ID: id + "-m4", ConversationID: id, Role: store.RoleAssistant, Text: "Done: you are on Pro now.", CreatedAt: now},
		{ID: id + "-m5", ConversationID: id, Role: store.RoleReply, Text: "Sure. Done: you are on Pro now.", CreatedAt: now}}})
}
