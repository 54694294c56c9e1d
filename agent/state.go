package agent

import (
	"encoding/json"
	"fmt"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/kindkit/kindkit/store"
)

// turnState is what a turn carries across a park, a restart and a
// takeover: the engine's own data. The store keeps it encoded
// (store.Park.Turn), as an opaque value, so a change to it is no change
// to the store's API or schema. It names its version; a state of another
// version is refused, never misread.
type turnState struct {
	// Version is stateVersion; states written before it was, which had
	// the same fields, have none.
	Version   int               `json:"v,omitempty"`
	RequestID string            `json:"requestId"`
	Text      string            `json:"text"`  // text streamed so far in the turn
	Usage     store.Usage       `json:"usage"` // usage of the turn's model calls so far
	Pending   []store.ToolCall  `json:"pending,omitempty"`
	Stashed   map[string]string `json:"stashed,omitempty"` // kind → spec raised on the fallback path this turn
	Citations []Citation        `json:"citations,omitempty"`
	// Approved is the id of the gated call at the front of Pending that
	// the person approved: it runs without asking again.
	Approved string `json:"approved,omitempty"`
	// Edited is the id of the approved call whose arguments the person
	// edited: its result tells the model so.
	Edited string `json:"edited,omitempty"`
	// Asked holds, per host tool call, the payloads of the Asks it made,
	// in order: when the call runs again, each Ask returns its answer.
	Asked map[string][]string `json:"asked,omitempty"`
	// Memos holds, per host tool call, the memo of its latest Checkpoint:
	// what its next run starts from. A state that holds one is written as
	// version memoVersion, so that an engine that would drop it refuses
	// it instead.
	Memos map[string]json.RawMessage `json:"memos,omitempty"`
	// Asking is the host tool call whose Ask the pending park answers.
	Asking string `json:"asking,omitempty"`
	// AskGroup, when set, is the group of cards that the Asking call's
	// AskAll opened together (store.Park.Group), saved from AskSince on;
	// AskAt is this park's question's place among the call's Asks. The
	// run the last answer resumes reads every answer of the group from
	// the store before the call runs again (gatherAnswers).
	AskGroup string    `json:"askGroup,omitempty"`
	AskSince time.Time `json:"askSince,omitzero"`
	AskAt    *int      `json:"askAt,omitempty"`
	// Live, when set, names the engine that holds the Asking call's
	// question open (AskLive): no other process can take its answer to
	// it.
	Live string `json:"live,omitempty"`
	// AskedBy is, per kind, the host tool call whose Ask went the
	// conversational way: submit_interaction of that kind answers it.
	AskedBy map[string]store.ToolCall `json:"askedBy,omitempty"`
	// Trace is the W3C traceparent of the span of the tool call that
	// parked the turn last, and ParkedAt when it parked: the run an answer
	// resumes links to that span, and the park's wait span starts then,
	// on whichever process resumes it. Empty when tracing is off.
	Trace    string    `json:"trace,omitempty"`
	ParkedAt time.Time `json:"parkedAt,omitzero"`
	// Expiry is the pending park's deadline policy, when it is not the
	// plain no_response: what its deadline resolves it to.
	Expiry *expiry `json:"expiry,omitempty"`
	// KindVersion is the version of the kind that asked the pending
	// card (kindkit.Descriptor.Version): its answer is taken as it was
	// asked (askedOf). Parks of engines before it have none, and are
	// taken with the kind served now.
	KindVersion string `json:"kindVersion,omitempty"`
	// Addressee is whom the pending park is addressed to (MayAnswer);
	// kept past its end, so that an ended ask says nothing to others.
	Addressee string `json:"addressee,omitempty"`
}

// stateVersion is the version of turnState this engine writes, and
// memoVersion that of a state with Memos; it reads both.
const (
	stateVersion = 1
	memoVersion  = 2
)

// stateJSON reads and writes the state as encoding/json does (the states
// already stored were written by it), in less time: a cycle encodes the
// state four times and decodes it once. The bytes are encoding/json's but
// for invalid UTF-8, which both replace with U+FFFD: encoding/json writes
// it escaped, json v2 as it is; both read it back the same.
var stateJSON = jsonv1.DefaultOptionsV1()

// encode is the state as the store keeps it.
func (s turnState) encode() json.RawMessage {
	s.Version = stateVersion
	if len(s.Memos) > 0 {
		s.Version = memoVersion
	}
	data, err := jsonv2.Marshal(&s, stateJSON)
	if err != nil {
		panic(fmt.Sprintf("agent: encode turn state: %v", err)) // it has no value that JSON cannot hold
	}
	return data
}

// stateOf decodes the state park p keeps; none is the empty state.
func stateOf(p *store.Park) (turnState, error) {
	var s turnState
	if len(p.Turn) == 0 {
		return s, nil
	}
	if err := jsonv2.Unmarshal(p.Turn, &s, stateJSON); err != nil {
		return turnState{}, fmt.Errorf("agent: park %s: turn state: %w", p.ID, err)
	}
	if s.Version != 0 && s.Version != stateVersion && s.Version != memoVersion {
		return turnState{}, fmt.Errorf("agent: park %s: turn state of version %d, this engine reads %d and %d", p.ID, s.Version, stateVersion, memoVersion)
	}
	return s, nil
}

// readState is p's state for what the engine tells of a park that ended
// (its cancelled event, its wait span): one it cannot read is
// logged and read as empty.
func (e *Engine) readState(p *store.Park) turnState {
	s, err := stateOf(p)
	if err != nil {
		e.log.Error("read a park's turn state", "err", err)
	}
	return s
}

// stash keeps the spec of a kind raised on the conversational path, for
// the submit_interaction tool to validate against.
func (s *turnState) stash(kind string, spec json.RawMessage) {
	if s.Stashed == nil {
		s.Stashed = map[string]string{}
	}
	s.Stashed[kind] = string(spec)
}

// Citation is a knowledge document a turn drew on, as eventual_response
// lists it.
type Citation struct {
	ID      string  `json:"id"`
	Title   string  `json:"title"`
	URL     string  `json:"url,omitempty"`
	Snippet string  `json:"snippet"`
	Score   float64 `json:"score"`
}
