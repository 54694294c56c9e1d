package agui

import (
	"context"
	"errors"
	"slices"

	"github.com/google/uuid"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/store"
)

// A thread is an AG-UI threadId's kindkit conversation, and the session
// its runs act through.
type thread struct {
	conv *store.Conversation
	sess *store.Session
}

// errTooManyThreads is a client over ConversationRate.
var errTooManyThreads = errors.New("too many new threads: slow down")

// The namespaces of the ids agui derives (UUIDv5): a thread's
// conversation, and the conversation's AG-UI session.
var (
	threadSpace  = uuid.MustParse("6f1f2b8e-5f0c-4a9e-9a57-3f0a8c1d2e41")
	sessionSpace = uuid.MustParse("b3c4a0d2-7e19-4c55-8f6a-1d2e3f4a5b6c")
)

// conversationID is the id of the conversation of thread threadID of
// owner ("" for anonymous). AG-UI's client names a thread. So that every
// process finds the same conversation for a thread with no table of its
// own, the engine is asked to name the thread's conversation with an id
// derived from the thread's and its owner's (Opening.ConversationID): the
// same threadId of two principals names two conversations. Without auth
// the threadId is then the conversation's bearer secret, as the
// conversation id is on /ws (the AG-UI client's default is a random
// UUID).
func conversationID(owner, threadID string) string {
	return uuid.NewSHA1(threadSpace, []byte(owner+"\x00"+threadID)).String()
}

// sessionID is the id of conversation conv's AG-UI session: every run of
// the thread acts through it, so a message sent while a card of the
// thread waits is refused by the engine, in the write that would store
// it (Engine.Send), and never withdraws the card.
func sessionID(conv string) string {
	return uuid.NewSHA1(sessionSpace, []byte(conv)).String()
}

// thread finds, or starts, the conversation of thread threadID for owner,
// and its session. A threadId that is the id of a conversation the owner
// may see (one started on /ws, say) is that conversation. Both are made
// by the engine (NewConversation, OpenSession), named with the derived
// ids; agui only reads the store.
func (h *Handler) thread(ctx context.Context, owner, threadID, client string) (thread, error) {
	if id, err := uuid.Parse(threadID); err == nil && id.String() == threadID {
		conv, err := h.store.Conversation(ctx, threadID)
		switch {
		case err == nil && (len(h.opts.AuthSecret) == 0 || conv.Owner == "" || conv.Owner == owner):
			return h.session(ctx, conv)
		case err != nil && !errors.Is(err, store.ErrNotFound):
			return thread{}, err
		}
	}
	id := conversationID(owner, threadID)
	conv, err := h.store.Conversation(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		if !h.creates.Allow(client, h.clock.Now()) {
			return thread{}, errTooManyThreads
		}
		conv, sess, err := h.eng.NewConversation(ctx, owner, h.supports, h.opening(id))
		if err == nil {
			return thread{conv, sess}, nil
		}
		// Another run of the thread made it meanwhile, here or in
		// another process: it is the one.
		var again error
		if conv, again = h.store.Conversation(ctx, id); again != nil {
			return thread{}, err
		}
		return h.session(ctx, conv)
	}
	if err != nil {
		return thread{}, err
	}
	return h.session(ctx, conv)
}

// session is the thread of conv: its AG-UI session, opened on first use,
// and every kind's capability declared, since an interrupt carries its
// kind's schema and any AG-UI client can draw a form from it.
func (h *Handler) session(ctx context.Context, conv *store.Conversation) (thread, error) {
	if !slices.Equal(conv.Supports, h.supports) {
		if err := h.eng.SetSupports(ctx, conv.ID, h.supports); err != nil {
			return thread{}, err
		}
		conv.Supports = h.supports
	}
	o := h.opening(conv.ID)
	sess, err := h.store.Session(ctx, o.SessionID)
	if errors.Is(err, store.ErrNotFound) {
		if sess, err = h.eng.OpenSession(ctx, conv.ID, o); err != nil {
			if again, aerr := h.store.Session(ctx, o.SessionID); aerr == nil {
				return thread{conv, again}, nil // opened meanwhile
			}
			return thread{}, err
		}
	}
	if err != nil {
		return thread{}, err
	}
	return thread{conv, sess}, nil
}

// opening names conversation conv and its AG-UI session.
func (h *Handler) opening(conv string) agent.Opening {
	return agent.Opening{AgentID: "agui", ConversationID: conv, SessionID: sessionID(conv)}
}
