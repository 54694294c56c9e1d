package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// ErrNotFound is returned by a Store for a record that does not exist.
var ErrNotFound = errors.New("not found")

// ErrLeaseLost is returned by a write of a resumed turn whose lease is not
// the writer's any more: another process took the turn over, or it ended.
var ErrLeaseLost = errors.New("lease lost")

// Text is s as every store keeps it in a text field: U+0000, which
// PostgreSQL cannot hold in text, becomes U+FFFD, on every store alike.
// (Fields a store keeps as JSON hold it exactly, escaped.)
func Text(s string) string {
	if strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

// Conversation is the durable thread a session is bound to.
type Conversation struct {
	ID        string
	Owner     string   // the authenticated principal that created it; "" for anonymous
	Supports  []string // render capabilities last declared by a client; nil when none
	ModelPos  int      // the model's position in a stateful source (the scripted model's script)
	CreatedAt time.Time
}

// ConversationSummary is what a list of conversations shows of each one.
type ConversationSummary struct {
	ID           string
	Title        string    // the text of the first user message; "" before there is one
	UpdatedAt    time.Time // the latest message time, or the creation time before any message
	MessageCount int       // user messages and replies: what the person sees
}

// ConversationFilter selects the conversations ListConversations returns.
type ConversationFilter struct {
	Owner string   // the conversations created by this principal…
	IDs   []string // …unless IDs is non-nil: then exactly these (unknown ones are left out)
}

// Session is one client's handle on a conversation.
type Session struct {
	ID                 string
	ConversationID     string
	AgentID            string
	AgentName          string
	UserName           string
	ContactEmail       string
	ContactPhone       string
	UserParticipantID  string
	AgentParticipantID string
}

// Role is who wrote a message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant" // a model response: text and/or tool calls
	RoleTool      Role = "tool"      // a tool result
	RoleReply     Role = "reply"     // the full reply of a finished turn, as the person sees it
	// RoleEnded is a turn that ended without its reply: stopped (Text is
	// what it had said) or, with IsError, failed. The person's history
	// may show it; the model never sees it.
	RoleEnded Role = "ended"
)

// ToolCall is one tool call of a model response.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Usage counts the tokens of model calls.
type Usage struct {
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
}

// Add returns the sum of two usages.
func (u Usage) Add(v Usage) Usage {
	return Usage{u.PromptTokens + v.PromptTokens, u.CompletionTokens + v.CompletionTokens}
}

// Message is one entry of a conversation's history. The person sees user
// and reply messages; the model sees user, assistant and tool messages.
type Message struct {
	ID             string
	ConversationID string
	Role           Role
	Text           string
	ToolCalls      []ToolCall // assistant
	ToolCallID     string     // tool
	ToolName       string     // tool
	IsError        bool       // tool
	CreatedAt      time.Time
	// Seq is the message's place in its conversation's history: set by
	// the write that stores it (and by the reads), larger than the Seq of
	// every message of the conversation stored before it, the same in
	// every process. A subscriber's position in the stream is built on it.
	Seq int64
}

// ParkKind tells what a parked turn waits for.
type ParkKind string

const (
	ParkInteraction  ParkKind = "interaction"  // a Rich Interaction card
	ParkConfirmation ParkKind = "confirmation" // a write-confirmation gate
	// ParkTurn is no park: it is the record of a turn that has not parked
	// (State ParkRunning), which owes its message a reply from the moment
	// the message is stored (StartTurn) until the turn parks or finishes,
	// when the record goes.
	ParkTurn ParkKind = "turn"
)

// ParkState is where a park is in its life.
type ParkState string

const (
	ParkPending   ParkState = "pending"
	ParkResolved  ParkState = "resolved"  // submitted, declined, confirmed or denied
	ParkExpired   ParkState = "expired"   // the deadline passed
	ParkCancelled ParkState = "cancelled" // the turn was cancelled
	ParkReplaced  ParkState = "replaced"  // a newer raise took its place
	ParkRunning   ParkState = "running"   // a turn's record (ParkTurn) while it is owed its reply
)

// Park is a turn waiting for a person, stored as data: everything needed to
// resume the turn is here and in the conversation's history, so any
// connection (and, with a shared store, any process) can resume it.
type Park struct {
	ID             string // the interactionId
	Type           ParkKind
	ConversationID string
	SessionID      string
	Kind           string // the interaction kind's wire name
	// Group is shared by the parks that one model step opened together
	// (SaveParks): its turn resumes once, from the take that settles the
	// group's last pending park. "" for a park alone.
	Group    string
	Spec     json.RawMessage // canonical spec
	Reason   string
	ToolCall ToolCall // the raise or gated tool call the turn waits on
	Deadline time.Time
	State    ParkState
	// Turn is the engine's state of the turn, to resume it from: a
	// versioned value the store keeps as given, opaque to it, so that a
	// change to how the engine resumes is no change to the store.
	Turn json.RawMessage
	// Owed is true from the take that stored the park's answer until the
	// turn it resumed is finished (its reply stored, or it parked again,
	// failed or was cancelled): a reply is owed to the person.
	Owed bool
	// LeaseOwner runs the owed turn until LeaseUntil, unless it renews the
	// lease; after that any process may take the turn over.
	LeaseOwner string
	LeaseUntil time.Time
	// CreatedAt is when the park was saved.
	CreatedAt time.Time
	// Outcome is how the card ended, as the person is shown it once it
	// has (the page's one-line summary, after a reload too): nil while it
	// is pending, and for a park that ended without being seen to end
	// (replaced by a newer one, or answered by a fallback directive).
	Outcome json.RawMessage
	// Record is the engine's record of who ended the park, when, by which
	// path and in which process: opaque to the store, kept as given from
	// the take that ended it; nil while pending and for parks ended
	// before stores kept it.
	Record json.RawMessage
	// Addressee is whom the park is addressed to: a principal, or
	// "group:NAME"; "" when anyone of its conversation may answer it.
	// Written by SaveParks and kept as saved, so that Inbox finds the
	// pending parks of an addressee (parks saved before stores kept it
	// have "" here and the addressee only in Turn).
	Addressee string
}

// InboxQuery selects the pending parks Inbox returns: those addressed to
// any of Addressees, and the unaddressed ones of the conversations Owner
// owns (none when Owner is "").
type InboxQuery struct {
	Addressees []string // at most MaxInboxAddressees; "" in it matches nothing
	Owner      string
	Kind       string    // only parks of this kind; "" for every kind
	Before     time.Time // only parks whose deadline is before it; zero for every deadline
	After      *InboxCursor
	Limit      int
}

// MaxInboxAddressees bounds InboxQuery.Addressees: a principal and its
// groups.
const MaxInboxAddressees = 64

// InboxCursor is where a page of Inbox ended: the last park's deadline
// (zero for none) and id. The next page begins after it.
type InboxCursor struct {
	Deadline time.Time
	ID       string
}

// InboxCursorOf is the cursor just after p.
func InboxCursorOf(p *Park) InboxCursor { return InboxCursor{Deadline: p.Deadline, ID: p.ID} }

// InboxOrder compares two pending parks in the order Inbox returns them:
// by deadline, a park without one last, then by id.
func InboxOrder(a, b InboxCursor) int {
	switch {
	case a.Deadline.IsZero() != b.Deadline.IsZero():
		if a.Deadline.IsZero() {
			return 1
		}
		return -1
	case !a.Deadline.Equal(b.Deadline):
		return a.Deadline.Compare(b.Deadline)
	}
	return strings.Compare(a.ID, b.ID)
}

// Lease is a process's hold on the turn a park's answer resumed.
type Lease struct {
	ParkID string
	Owner  string
	Until  time.Time
}

// Answer is what TakePark stores in the same write as the take, so that an
// acknowledged answer is never lost.
type Answer struct {
	State    ParkState
	Messages []*Message      // appended to the park's conversation: the tool result the turn resumes with
	Turn     json.RawMessage // the turn's state from the take on; nil keeps the park's
	// Lease, when set, makes the park owe its turn a reply, run under this
	// lease (its ParkID is the park's own). Nil for a take that ends the
	// turn (cancelled, replaced). A park of a Group is owed only when its
	// take leaves no park of the group pending: the store decides, in the
	// take's write, which take resumes the turn (the taken park's Owed).
	Lease *Lease
	// Outcome becomes the park's Outcome; nil for none.
	Outcome json.RawMessage
	// Record becomes the park's Record; nil for none.
	Record json.RawMessage
}

// Waiting decides, inside StartTurn's write, what becomes of the park that
// waits for its answer when a message would start a turn: the Answer that
// withdraws it, or nil to refuse the turn. It must not block or call the
// store.
type Waiting func(pending *Park) *Answer

// Step is one durable step of an owed turn: messages, the turn's state
// after them, and the conversation's model position, stored together.
type Step struct {
	Turn     json.RawMessage // the turn's state after them (Park.Turn)
	Messages []*Message
	ModelPos *int // nil leaves the position as it is
	Done     bool // the turn is finished: no reply is owed any more (a turn's record goes)
}

// Store keeps conversations, sessions, messages and parks. Implementations
// must make TakePark exactly-once: of concurrent takes of one pending park,
// one succeeds.
type Store interface {
	// Ping checks that the store answers, on every pool of connections it
	// has (the writer's too).
	Ping(ctx context.Context) error

	// CreateConversation stores a new conversation and, in the same
	// atomic write, sessions bound to it (their ConversationID is c.ID,
	// whatever it says): a new conversation's first session costs no
	// write of its own, and a session that cannot be stored leaves no
	// conversation behind.
	CreateConversation(ctx context.Context, c *Conversation, sessions ...*Session) error
	Conversation(ctx context.Context, id string) (*Conversation, error)
	// SetSupports replaces the declared capabilities; nil clears them.
	SetSupports(ctx context.Context, conversationID string, supports []string) error
	SetModelPos(ctx context.Context, conversationID string, pos int) error
	// ListConversations returns up to limit conversations matching f, the
	// most recently updated first (ties by id).
	ListConversations(ctx context.Context, f ConversationFilter, limit int) ([]ConversationSummary, error)

	CreateSession(ctx context.Context, s *Session) error
	Session(ctx context.Context, id string) (*Session, error)
	// SetContact merges non-empty fields into the session's contact.
	SetContact(ctx context.Context, sessionID, name, email, phone string) error

	AppendMessages(ctx context.Context, msgs ...*Message) error
	// StartTurn appends m, the message that starts a turn, and saves t,
	// the turn's record (Type ParkTurn, owed its reply under the lease
	// that t.LeaseOwner holds until t.LeaseUntil), in one atomic write:
	// from then on the message is owed its reply, and when the process
	// dies another takes the turn over (OwedTurns, ClaimTurn). The
	// record goes when the turn parks (SavePark from its lease) or ends
	// (SaveStep, Done). A conversation runs one turn at a time, whichever
	// process runs it: when a park or turn of it is owed a reply (or the
	// conversation does not exist), ok is false and nothing is written.
	//
	//
	// A park that waits for its answer (pending) holds the conversation
	// too: waiting is asked, inside the write, what becomes of it, for
	// each pending park, the first saved first. The Answers it returns
	// take the parks (as TakePark would: their State is ParkCancelled, a
	// withdrawal) in the same atomic write as m and t, and the taken parks
	// are returned as withdrawn; a nil Answer for any of them refuses the
	// turn (ok false, nothing written), and so does a nil waiting. So what a
	// message sent while a card waits does is decided once, whichever
	// process sends it, however a concurrent answer to the card races it:
	// when the card was taken first, its resumed turn is owed and ok is
	// false.
	//
	// first, when set, is the conversation as it was made: then the write
	// also needs nothing to have happened to it since (no message, no
	// pending park, and first's supports and model position), so a turn
	// that gets ok knows its conversation and its history without reading
	// them; ok is false when it was touched or does not exist.
	StartTurn(ctx context.Context, m *Message, t *Park, first *Conversation, waiting Waiting) (withdrawn []*Park, ok bool, err error)
	// Messages returns up to limit messages of the given roles, newest
	// first, older than the message before (all when before is ""), and
	// whether older ones remain. ErrNotFound when before is not in the
	// conversation.
	Messages(ctx context.Context, conversationID string, roles []Role, before string, limit int) ([]*Message, bool, error)
	// MessagesAfter returns up to limit messages of the conversation whose
	// Seq is larger than seq, oldest first: what a subscriber that saw the
	// stream up to seq missed. None (no error) for an unknown conversation.
	MessagesAfter(ctx context.Context, conversationID string, seq int64, limit int) ([]*Message, error)

	// SavePark stores a new pending park: SaveParks with one park, which
	// returns the first of the replaced ids ("" when there was none).
	SavePark(ctx context.Context, p *Park, from *Lease, msgs ...*Message) (replaced string, err error)
	// SaveParks stores new pending parks, all or none: the parks a model
	// step opens together, which share one Group (a single park may have
	// none). The conversation's parks that were pending before become
	// ParkReplaced, and their ids are returned, the first saved first,
	// exactly once even when saves and takes race. from,
	// when set, is the lease of the owed turn that parks (again): in the
	// same write it stops being owed, and a turn's record goes
	// (ErrLeaseLost when the lease is not held).
	// msgs are appended to the park's conversation in the same write (the
	// model step that raised the park): stored with the park or not at
	// all.
	SaveParks(ctx context.Context, ps []*Park, from *Lease, msgs ...*Message) (replaced []string, err error)
	// PendingPark returns the conversation's first pending park (the
	// earliest saved, ties by id), or ErrNotFound.
	PendingPark(ctx context.Context, conversationID string) (*Park, error)
	// PendingParks returns the conversation's pending parks, the earliest
	// saved first (ties by id); none for an unknown conversation.
	PendingParks(ctx context.Context, conversationID string) ([]*Park, error)
	// OwedTurn returns the conversation's park or turn record that is owed
	// a reply (its turn runs, here or in another process, or waits to be
	// taken over), or ErrNotFound: what a subscriber that joins is told
	// runs. A conversation has at most one (StartTurn).
	OwedTurn(ctx context.Context, conversationID string) (*Park, error)
	// TakePark moves a pending park to a.State and stores a's messages,
	// turn state and lease in the same atomic write, and returns the park
	// as it is after the take; ok is false when it was not pending any
	// more (and nothing is written). Of the parks of one Group, only the
	// take that leaves none of them pending applies a.Lease (the returned
	// park is Owed): however takes race, in one process or several, the
	// group's turn resumes exactly once; and not at all once a park of the
	// group was taken ParkCancelled (its turn ended).
	TakePark(ctx context.Context, id string, a Answer) (p *Park, ok bool, err error)
	// ExpiredParks returns up to limit pending parks whose deadline is
	// before now, the earliest deadline first (a park without one first of
	// all). A store serves it from an index on the deadline: its cost
	// follows limit, not the number of parks.
	ExpiredParks(ctx context.Context, now time.Time, limit int) ([]*Park, error)
	// EndedParks returns up to limit of the conversation's parks that
	// ended with an Outcome, saved at or after since and, unless before
	// is "", before the CreatedAt of message before (none when it is not
	// in the conversation), the earliest saved first (ties by id): the
	// cards a history page shows as ended. A store serves it from an
	// index on (conversation, time saved).
	EndedParks(ctx context.Context, conversationID string, since time.Time, before string, limit int) ([]*Park, error)
	// EndedPark returns the conversation's park id once it ended with an
	// Outcome (one EndedParks lists), so that a late answer learns what
	// became of it; ErrNotFound while it is pending, and when the
	// conversation has no such park.
	EndedPark(ctx context.Context, conversationID, id string) (*Park, error)

	// SaveStep stores a step of the owed turn held by l, renewing the
	// lease to l.Until; ErrLeaseLost when l is not held.
	SaveStep(ctx context.Context, l Lease, s Step) error
	// RenewLease extends a held lease to l.Until; ErrLeaseLost when l is not
	// held.
	RenewLease(ctx context.Context, l Lease) error
	// OwedTurns returns up to limit parks (and turn records) whose turn is
	// owed a reply and whose lease ended before now, the longest expired
	// first.
	OwedTurns(ctx context.Context, now time.Time, limit int) ([]*Park, error)
	// ClaimTurn takes over the owed turn of park l.ParkID when its lease
	// ended before now: exactly one of concurrent claims gets ok.
	ClaimTurn(ctx context.Context, l Lease, now time.Time) (p *Park, ok bool, err error)

	// Inbox returns up to q.Limit pending parks that q selects, after
	// q.After, in InboxOrder: the asks a principal may answer, across
	// conversations. A store serves it from indexes: on the addressee
	// (of addressed pending parks only, so that unaddressed asks cost
	// their writes nothing) and on the conversations' owner; paged by
	// its cursor, never by an offset.
	Inbox(ctx context.Context, q InboxQuery) ([]*Park, error)
}

// A Notifier carries short-lived messages to every process that shares a
// store, in the order they were sent (PostgreSQL's LISTEN/NOTIFY). Nothing
// it carries is durable: a process that is not listening misses it.
type Notifier interface {
	// Notify sends msgs, in order.
	Notify(ctx context.Context, msgs ...[]byte) error
	// Listen hands every message sent by any process (this one's too) to
	// deliver, in order, until ctx ends or its connection fails; the
	// caller listens again, and what was sent in between is missed.
	Listen(ctx context.Context, deliver func(msg []byte)) error
}

// Shared is implemented by a store that several processes may share: its
// Notifier connects them, nil when this store is the process's own.
type Shared interface {
	Notifier() Notifier
}
