package storetest

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/kindkit/kindkit/runtime"
)

// Bench runs b.N interaction cycles against s: the store operations of one
// conversation whose turn parks on a card and resumes after a submit.
func Bench(b *testing.B, s runtime.Store) {
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
// message, park the turn, look the park up (the submit), take it, and append
// the tool result, the model's answer and the reply.
func Cycle(ctx context.Context, s runtime.Store, id string) error {
	now := time.Now()
	if err := s.CreateConversation(ctx, &runtime.Conversation{ID: id, CreatedAt: now}); err != nil {
		return err
	}
	if err := s.CreateSession(ctx, &runtime.Session{ID: id + "-s", ConversationID: id, AgentID: "agent", AgentName: "Agent",
		UserParticipantID: id + "-up", AgentParticipantID: id + "-ap"}); err != nil {
		return err
	}
	if err := s.AppendMessages(ctx, &runtime.Message{ID: id + "-m1", ConversationID: id, Role: runtime.RoleUser,
		Text: "I want to upgrade my plan", CreatedAt: now}); err != nil {
		return err
	}
	call := runtime.ToolCall{ID: id + "-call", Name: "raise_choices", Arguments: string(cycleSpec)}
	if err := s.AppendMessages(ctx, &runtime.Message{ID: id + "-m2", ConversationID: id, Role: runtime.RoleAssistant,
		ToolCalls: []runtime.ToolCall{call}, CreatedAt: now}); err != nil {
		return err
	}
	if _, err := s.SavePark(ctx, &runtime.Park{ID: id + "-p", Type: runtime.ParkInteraction, ConversationID: id, SessionID: id + "-s",
		Kind: "choices", Spec: cycleSpec, Reason: "to pick a plan", ToolCall: call, Deadline: now.Add(10 * time.Minute),
		State: runtime.ParkPending, Turn: runtime.TurnState{RequestID: id + "-r", Text: "Sure.", Usage: runtime.Usage{PromptTokens: 10, CompletionTokens: 5}}}); err != nil {
		return err
	}
	p, err := s.PendingPark(ctx, id)
	if err != nil {
		return err
	}
	if _, ok, err := s.TakePark(ctx, p.ID, runtime.ParkResolved); err != nil {
		return err
	} else if !ok {
		return runtime.ErrNotFound
	}
	if err := s.AppendMessages(ctx, &runtime.Message{ID: id + "-m3", ConversationID: id, Role: runtime.RoleTool,
		Text: `{"status":"submitted","values":{"choice":"pro"}}`, ToolCallID: call.ID, ToolName: call.Name, CreatedAt: now}); err != nil {
		return err
	}
	if err := s.AppendMessages(ctx, &runtime.Message{ID: id + "-m4", ConversationID: id, Role: runtime.RoleAssistant,
		Text: "Done: you are on Pro now.", CreatedAt: now}); err != nil {
		return err
	}
	return s.AppendMessages(ctx, &runtime.Message{ID: id + "-m5", ConversationID: id, Role: runtime.RoleReply,
		Text: "Sure. Done: you are on Pro now.", CreatedAt: now})
}
