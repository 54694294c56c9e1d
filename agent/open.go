package agent

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/kindkit/kindkit/store"
)

// Opening is who opens a session: the agent they address, by its id on
// the wire, and what they said of themselves. Empty fields stay empty.
type Opening struct {
	AgentID      string
	UserName     string
	ContactEmail string
	// ConversationID (NewConversation only) and SessionID name what is
	// opened, as canonical UUIDs; "" names it at random. A transport
	// whose clients name their own threads (AG-UI's threadId) derives
	// them, so that every process finds the same conversation and
	// session without a table of names; the conversation's secrecy is
	// then the name's.
	ConversationID string
	SessionID      string
}

// named is id when set, which must be a canonical UUID, else a new id.
func named(what, id string) (string, error) {
	if id == "" {
		return store.NewID(), nil
	}
	if u, err := uuid.Parse(id); err != nil || u.String() != id {
		return "", fmt.Errorf("agent: %s %q is not a canonical UUID", what, id)
	}
	return id, nil
}

// NewConversation stores a new conversation of owner ("" for anonymous),
// whose client declared supports (nil for none), and its first session,
// in one write. The engine names both with store.NewID: canonical
// lower-case UUIDs, as the reference schemas require (format: uuid), whose
// 74 random bits come from crypto/rand, since without auth a
// conversation's id is the bearer secret of the conversation. Its first
// message may pass the conversation as Message.Made.
func (e *Engine) NewConversation(ctx context.Context, owner string, supports []string, o Opening) (*store.Conversation, *store.Session, error) {
	if len(supports) == 0 {
		supports = nil // stored as none, never as an empty set
	}
	id, err := named("conversation id", o.ConversationID)
	if err != nil {
		return nil, nil, err
	}
	conv := &store.Conversation{ID: id, Owner: owner, Supports: supports, CreatedAt: e.clock.Now().UTC()}
	sess, err := e.newSession(conv.ID, o)
	if err != nil {
		return nil, nil, err
	}
	if err := e.cfg.Store.CreateConversation(ctx, conv, sess); err != nil {
		return nil, nil, err
	}
	e.stream.made(conv.ID)
	return conv, sess, nil
}

// OpenSession stores a new session of conversation conv, which exists.
func (e *Engine) OpenSession(ctx context.Context, conv string, o Opening) (*store.Session, error) {
	sess, err := e.newSession(conv, o)
	if err != nil {
		return nil, err
	}
	if err := e.cfg.Store.CreateSession(ctx, sess); err != nil {
		return nil, err
	}
	return sess, nil
}

func (e *Engine) newSession(conv string, o Opening) (*store.Session, error) {
	id, err := named("session id", o.SessionID)
	if err != nil {
		return nil, err
	}
	// The participant ids are plain columns, no keys: they stay v4.
	return &store.Session{ID: id, ConversationID: conv, AgentID: o.AgentID, AgentName: e.cfg.AgentName,
		UserName: o.UserName, ContactEmail: o.ContactEmail, UserParticipantID: uuid.NewString(), AgentParticipantID: uuid.NewString()}, nil
}
