package agent

import (
	"fmt"

	"github.com/kindkit/kindkit/store"
)

// EventKind tells what an Event reports.
type EventKind int

const (
	EventText       EventKind = iota // Text: a piece of the reply, streamed
	EventToolCall                    // Call: a tool call of the turn
	EventToolResult                  // Call, Text, IsError: the call's result
	EventPrompt                      // Park: a card or a write confirmation waits for a person
	EventReply                       // Reply: the turn's answer; terminal
	EventFailed                      // the turn failed (the log says why); terminal
	EventCancelled                   // the turn was cancelled, or its card withdrawn by a message; terminal
	// EventMessage (Message): the person's message that started the turn,
	// stored, told after Send's ack: a subscriber that sent it knows it.
	EventMessage
	// EventRunning: a turn of the conversation is in progress, running
	// here or in another process, or owed its reply and waiting to be
	// taken over after its process died. Only a catch-up tells it, first:
	// a subscriber that joins learns the turn before what it said.
	EventRunning
)

var eventKindNames = [...]string{"text", "tool_call", "tool_result", "prompt", "reply", "failed", "cancelled", "message", "running"}

// String is the kind's name: text, tool_call, tool_result, prompt, reply,
// failed, cancelled, message or running.
func (k EventKind) String() string {
	if k >= 0 && int(k) < len(eventKindNames) {
		return eventKindNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event is one thing a turn tells the subscribers of its conversation
// (Engine.Subscribe).
type Event struct {
	Kind      EventKind
	RequestID string
	Text      string
	Call      store.ToolCall
	IsError   bool
	Park      *store.Park
	Reply     *Reply
	Message   *store.Message
	// After is the park this event comes after: the one its turn resumed
	// from, or for a parked turn's cancelled event the one it was parked
	// on; "" in a turn's first run. A socket shown a card as it joined
	// tells by it what is news.
	After string
	// Pos is the event's position in the conversation's stream (see
	// Position); zero for an event the store cannot tell again (an
	// EventRunning, a Stop of a card no process here held, the events of
	// a turn taken over before its first stored step).
	Pos Position
}

// Reply is a finished turn's answer.
type Reply struct {
	MessageID string
	Text      string
	Usage     store.Usage
	Citations []Citation
}
