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
	// stored. It is told to the conversation's subscribers
	// (Engine.Subscribe), never to the turn's follower, whose client sent
	// it.
	EventMessage
)

var eventKindNames = [...]string{"text", "tool_call", "tool_result", "prompt", "reply", "failed", "cancelled", "message"}

// String is the kind's name: text, tool_call, tool_result, prompt, reply,
// failed, cancelled or message.
func (k EventKind) String() string {
	if k >= 0 && int(k) < len(eventKindNames) {
		return eventKindNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event is one thing a turn tells its follower.
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

	follower Follower // the turn's follower when it was told (ToldTo)
}

// Reply is a finished turn's answer.
type Reply struct {
	MessageID string
	Text      string
	Usage     store.Usage
	Citations []Citation
}

// A Follower is told the events of the turn it follows: the server's
// connection, which turns them into protocol frames. It follows one turn at
// a time, the one it was handed by Engine.Send or that the engine
// resumed on it, and refuses the events of any other.
//
// The engine calls a Follower holding only the turn's emitMu, which
// orders the turn's events (the lock table is at Engine): a Follower must
// not call the engine back from these methods.
type Follower interface {
	// Emit delivers an event of t; false when t is not the follower's
	// turn any more.
	Emit(t *Turn, ev Event) bool
	// Finish delivers t's terminal event and lets go of t.
	Finish(t *Turn, ev Event)
	// Release lets go of t without a word: it resumed elsewhere, was
	// replaced, or stays parked for another process.
	Release(t *Turn)
	// Park is told that t parked: it shows the prompt events and keeps t
	// as its parked turn, all in one step, and says so with ParkShown.
	Park(t *Turn, prompt ...Event) ParkOutcome
	// Adopt makes t, a turn resumed from a park, the follower's turn when
	// it follows nothing or follows the parked turn t continues; false
	// when it is busy with another turn.
	Adopt(t *Turn, parkID string) bool
}

// ParkOutcome is a follower's answer to Park.
type ParkOutcome int

const (
	ParkShown    ParkOutcome = iota // the prompt is out; the follower holds the parked turn
	ParkGone                        // t is not the follower's turn any more: it was cancelled, or the follower went away
	ParkDraining                    // the follower is draining and shows nothing new
)
