package agent

import "github.com/kindkit/kindkit/store"

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
	// stored. It is told to the conversation's other sockets (the
	// Observer), never to the turn's follower, whose client sent it.
	EventMessage
)

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
// a time, the one it was handed by Engine.NewTurn or that the engine
// resumed on it, and refuses the events of any other.
//
// The engine calls a Follower without holding any lock of its own, so a
// follower may call the engine back while it holds its own lock (lock
// order: follower, then engine).
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

// An Observer is told every event of every turn the engine runs, whoever
// follows the turn (or nobody), and every park the engine takes: the server
// shows them to the conversation's other sockets, in this process and, on a
// shared store, in the others.
//
// It is called while the turn's events are ordered (under the turn's own
// lock), so it must not call the engine back; lock order: the turn's, then
// the observer's, then a follower's.
type Observer interface {
	// TurnEvent is an event of a turn on conversation conv, and for a
	// prompt the call chunk shown with it; f, the turn's follower (nil:
	// none), has been told already. The event comes by value: a turn tells
	// dozens (a token each), and a slice of them passed through this
	// interface was a heap allocation each.
	TurnEvent(conv string, f Follower, ev Event, chunk ...Event)
	// ParkTaken says park id of conv was answered, expired, cancelled,
	// withdrawn or replaced here: a follower that shows it elsewhere lets
	// go of it (Engine.ReleasePark).
	ParkTaken(conv, id string)
	// CapabilitiesChanged says conv's capabilities were declared anew here
	// (Engine.SetSupports): a turn of it parked elsewhere reads the
	// conversation again when it resumes (Engine.CapabilitiesChanged).
	CapabilitiesChanged(conv string)
}

// ParkOutcome is a follower's answer to Park.
type ParkOutcome int

const (
	ParkShown    ParkOutcome = iota // the prompt is out; the follower holds the parked turn
	ParkGone                        // t is not the follower's turn any more (it was cancelled)
	ParkDraining                    // the follower is draining and shows nothing new
)
