package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// ErrNotFound is returned by a Store for a record that does not exist.
var ErrNotFound = errors.New("not found")

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
}

// ParkKind tells what a parked turn waits for.
type ParkKind string

const (
	ParkInteraction  ParkKind = "interaction"  // a Rich Interaction card
	ParkConfirmation ParkKind = "confirmation" // a write-confirmation gate
)

// ParkState is where a park is in its life.
type ParkState string

const (
	ParkPending   ParkState = "pending"
	ParkResolved  ParkState = "resolved"  // submitted, declined, confirmed or denied
	ParkExpired   ParkState = "expired"   // the deadline passed
	ParkCancelled ParkState = "cancelled" // the turn was cancelled
	ParkReplaced  ParkState = "replaced"  // a newer raise took its place
)

// Park is a turn waiting for a person, stored as data: everything needed to
// resume the turn is here and in the conversation's history, so any
// connection (and, with a shared store, any process) can resume it.
type Park struct {
	ID             string // the interactionId
	Type           ParkKind
	ConversationID string
	SessionID      string
	Kind           string          // the interaction kind's wire name
	Spec           json.RawMessage // canonical spec
	Reason         string
	ToolCall       ToolCall // the raise or gated tool call the turn waits on
	Deadline       time.Time
	State          ParkState
	Turn           TurnState
}

// TurnState is what a turn carries across a park.
type TurnState struct {
	RequestID string            `json:"requestId"`
	Text      string            `json:"text"`  // text streamed so far in the turn
	Usage     Usage             `json:"usage"` // usage of the turn's model calls so far
	Pending   []ToolCall        `json:"pending,omitempty"`
	Stashed   map[string]string `json:"stashed,omitempty"` // kind → spec raised on the fallback path this turn
	Citations []Citation        `json:"citations,omitempty"`
}

// Stash keeps the spec of a kind raised on the conversational path, for
// the submit_interaction tool to validate against.
func (s *TurnState) Stash(kind string, spec json.RawMessage) {
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

// Store keeps conversations, sessions, messages and parks. Implementations
// must make TakePark exactly-once: of concurrent takes of one pending park,
// one succeeds.
type Store interface {
	CreateConversation(ctx context.Context, c *Conversation) error
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
	// Messages returns up to limit messages of the given roles, newest
	// first, older than the message before (all when before is ""), and
	// whether older ones remain. ErrNotFound when before is not in the
	// conversation.
	Messages(ctx context.Context, conversationID string, roles []Role, before string, limit int) ([]*Message, bool, error)

	// SavePark stores a new pending park. The conversation's park that was
	// pending before becomes ParkReplaced, and its id is returned ("" when
	// there was none), exactly once even when saves and takes race.
	SavePark(ctx context.Context, p *Park) (replaced string, err error)
	// PendingPark returns the conversation's pending park, or ErrNotFound.
	PendingPark(ctx context.Context, conversationID string) (*Park, error)
	// TakePark moves a pending park to state and returns it; ok is false
	// when it was not pending any more.
	TakePark(ctx context.Context, id string, state ParkState) (p *Park, ok bool, err error)
	// ExpiredParks returns pending parks whose deadline is before now.
	ExpiredParks(ctx context.Context, now time.Time) ([]*Park, error)
}
