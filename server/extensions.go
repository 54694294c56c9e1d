package server

import "github.com/kindkit/kindkit/agent"

// Extensions a client asks for by naming them in the supports list of
// create_conversation_session, beside its render capabilities. They are
// kindkit's additions to what a client receives; a client that names none
// gets every frame exactly as the reference schemas describe it, so the
// reference clients, whose types are generated from those schemas, read
// them unchanged. Additions to what a client may send (keepTurns,
// withdrawInteraction) need no name: a reference client never sends them.
//
// A connection has the extensions named on any of its
// create_conversation_session frames, for as long as it lives; they are
// read from the frame, never inherited from the conversation, so a
// reference client that resumes a conversation another client started
// gets the reference frames. The names stay in the conversation's stored
// supports list, as any value unknown to the capability gate does
// (PROTOCOL.md, "Rules for supports").
const (
	// ExtHistoryCards has get_conversation_messages list, on each user
	// message, the cards its turn showed that ended (its interactions
	// field; docs/protocol-extensions.md).
	ExtHistoryCards = "kindkit.history_cards"
	// ExtUserMessages has a socket told each message another session
	// sends to its conversation (another tab, another process), as a
	// user_message event, so it shows what was sent and not only the
	// reply to it.
	ExtUserMessages = "kindkit.user_messages"
	// ExtSharedTurns lets a socket stop the running turn of a conversation
	// it has a session on that another socket sent (another tab, the page
	// before a reload): a cancel that names the turn's requestId stops it
	// wherever it runs, and every socket on the conversation, this one
	// too, gets its cancelled event. Without it a cancel stops only the
	// socket's own turn, as the reference has it.
	ExtSharedTurns = "kindkit.shared_turns"
	// ExtEndedTurns has get_conversation_messages list a turn that ended
	// without its reply, stopped or failed, as an outbound message with
	// what it had said and an ended field, "stopped" or "failed", so a
	// page shows it after a reload and may offer to try again. The
	// reference history leaves such a turn out (PROTOCOL.md §4.9).
	ExtEndedTurns = "kindkit.ended_turns"
	// ExtTurnCatchUp has a socket that joins a conversation told the turn
	// in progress before anything else: a turn_running event for a turn
	// that runs (here or in another process) or is owed its reply after
	// its process died, whose stream then follows; and, before a waiting
	// card shown again, the words its turn said before it, as a
	// stream_token. Without it a socket that joins learns a running turn
	// only from what it says next, and gets the card alone.
	ExtTurnCatchUp = "kindkit.turn_catchup"
	// ExtToolDecisions has a write_confirmation_required say what the
	// person may decide beyond approve and reject (decisions: edit,
	// respond), with the call's arguments and the tool's parameter schema
	// to edit them against; a confirm_tool_action then sends decision
	// (and arguments or message), and edited arguments that break the
	// schema get a confirmation_invalid event with an error per field.
	ExtToolDecisions = "kindkit.tool_decisions"
	// ExtParallelAsks has the raise calls of one model step open their
	// cards all at once (agent.ParallelAsks): the socket gets each its own
	// interaction_required, may answer them in any order (each answer is
	// acknowledged on its own), and the turn resumes once the last is
	// settled. Named in supports, it is also the conversation's
	// capability, which the engine reads; a socket that did not name it
	// is shown one card at a time, the next after its answer's ack.
	ExtParallelAsks = agent.ParallelAsks
)

// extensions is a set of the extensions above.
type extensions uint32

const (
	extHistoryCards extensions = 1 << iota
	extUserMessages
	extSharedTurns
	extEndedTurns
	extTurnCatchUp
	extToolDecisions
	extParallelAsks
)

var extensionNames = map[string]extensions{ExtHistoryCards: extHistoryCards, ExtUserMessages: extUserMessages, ExtSharedTurns: extSharedTurns,
	ExtEndedTurns: extEndedTurns, ExtTurnCatchUp: extTurnCatchUp, ExtToolDecisions: extToolDecisions,
	ExtParallelAsks: extParallelAsks}

// declaredExtensions is the set of extensions named in supports.
func declaredExtensions(supports []string) extensions {
	var ext extensions
	for _, s := range supports {
		ext |= extensionNames[s]
	}
	return ext
}

// asked tells whether the connection asked for extension x. Its reader
// adds to the set; the fan-out reads it from other goroutines.
func (c *conn) asked(x extensions) bool { return extensions(c.ext.Load())&x != 0 }
