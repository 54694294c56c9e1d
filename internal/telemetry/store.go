package telemetry

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kindkit/kindkit/store"
)

// timedStore is a store.Store whose every operation is timed into
// kindkit_store_operation_duration_seconds{operation}.
type timedStore struct {
	s  store.Store
	op [numOps]prometheus.Observer
}

// sharedStore is a timedStore over a store that several processes share:
// the server still finds its Notifier.
type sharedStore struct {
	*timedStore
	store.Shared
}

type op int

const (
	opPing op = iota
	opCreateConversation
	opConversation
	opSetSupports
	opSetModelPos
	opListConversations
	opCreateSession
	opSession
	opSetContact
	opAppendMessages
	opStartTurn
	opMessages
	opSavePark
	opPendingPark
	opOwedTurn
	opTakePark
	opExpiredParks
	opEndedParks
	opEndedPark
	opSaveStep
	opRenewLease
	opOwedTurns
	opClaimTurn
	opSaveParks
	opPendingParks
	opMessagesAfter
	opInbox
	numOps
)

var opNames = [numOps]string{"ping", "create_conversation", "conversation", "set_supports", "set_model_pos", "list_conversations",
	"create_session", "session", "set_contact", "append_messages", "start_turn", "messages", "save_park", "pending_park", "owed_turn", "take_park",
	"expired_parks", "ended_parks", "ended_park", "save_step", "renew_lease", "owed_turns", "claim_turn", "save_parks", "pending_parks", "messages_after", "inbox"}

// Store returns s with every operation timed. A store that is
// store.Shared stays so.
func (m *Metrics) Store(s store.Store) store.Store {
	t := &timedStore{s: s}
	for i, name := range opNames {
		t.op[i] = m.storeOps.WithLabelValues(name)
	}
	if sh, ok := s.(store.Shared); ok {
		return sharedStore{t, sh}
	}
	return t
}

// since observes the time since start as an operation's latency.
func (t *timedStore) since(o op, start time.Time) { t.op[o].Observe(time.Since(start).Seconds()) }

func (t *timedStore) Ping(ctx context.Context) error {
	defer t.since(opPing, time.Now())
	return t.s.Ping(ctx)
}

func (t *timedStore) CreateConversation(ctx context.Context, c *store.Conversation, sessions ...*store.Session) error {
	defer t.since(opCreateConversation, time.Now())
	return t.s.CreateConversation(ctx, c, sessions...)
}

func (t *timedStore) Conversation(ctx context.Context, id string) (*store.Conversation, error) {
	defer t.since(opConversation, time.Now())
	return t.s.Conversation(ctx, id)
}

func (t *timedStore) SetSupports(ctx context.Context, conversationID string, supports []string) error {
	defer t.since(opSetSupports, time.Now())
	return t.s.SetSupports(ctx, conversationID, supports)
}

func (t *timedStore) SetModelPos(ctx context.Context, conversationID string, pos int) error {
	defer t.since(opSetModelPos, time.Now())
	return t.s.SetModelPos(ctx, conversationID, pos)
}

func (t *timedStore) ListConversations(ctx context.Context, f store.ConversationFilter, limit int) ([]store.ConversationSummary, error) {
	defer t.since(opListConversations, time.Now())
	return t.s.ListConversations(ctx, f, limit)
}

func (t *timedStore) CreateSession(ctx context.Context, s *store.Session) error {
	defer t.since(opCreateSession, time.Now())
	return t.s.CreateSession(ctx, s)
}

func (t *timedStore) Session(ctx context.Context, id string) (*store.Session, error) {
	defer t.since(opSession, time.Now())
	return t.s.Session(ctx, id)
}

func (t *timedStore) SetContact(ctx context.Context, sessionID, name, email, phone string) error {
	defer t.since(opSetContact, time.Now())
	return t.s.SetContact(ctx, sessionID, name, email, phone)
}

func (t *timedStore) AppendMessages(ctx context.Context, msgs ...*store.Message) error {
	defer t.since(opAppendMessages, time.Now())
	return t.s.AppendMessages(ctx, msgs...)
}

func (t *timedStore) StartTurn(ctx context.Context, m *store.Message, p *store.Park, first *store.Conversation, waiting store.Waiting) ([]*store.Park, bool, error) {
	defer t.since(opStartTurn, time.Now())
	return t.s.StartTurn(ctx, m, p, first, waiting)
}

func (t *timedStore) Messages(ctx context.Context, conversationID string, roles []store.Role, before string, limit int) ([]*store.Message, bool, error) {
	defer t.since(opMessages, time.Now())
	return t.s.Messages(ctx, conversationID, roles, before, limit)
}

func (t *timedStore) MessagesAfter(ctx context.Context, conversationID string, seq int64, limit int) ([]*store.Message, error) {
	defer t.since(opMessagesAfter, time.Now())
	return t.s.MessagesAfter(ctx, conversationID, seq, limit)
}

func (t *timedStore) SavePark(ctx context.Context, p *store.Park, from *store.Lease, msgs ...*store.Message) (string, error) {
	defer t.since(opSavePark, time.Now())
	return t.s.SavePark(ctx, p, from, msgs...)
}

func (t *timedStore) SaveParks(ctx context.Context, ps []*store.Park, from *store.Lease, msgs ...*store.Message) ([]string, error) {
	defer t.since(opSaveParks, time.Now())
	return t.s.SaveParks(ctx, ps, from, msgs...)
}

func (t *timedStore) PendingParks(ctx context.Context, conversationID string) ([]*store.Park, error) {
	defer t.since(opPendingParks, time.Now())
	return t.s.PendingParks(ctx, conversationID)
}

func (t *timedStore) PendingPark(ctx context.Context, conversationID string) (*store.Park, error) {
	defer t.since(opPendingPark, time.Now())
	return t.s.PendingPark(ctx, conversationID)
}

func (t *timedStore) OwedTurn(ctx context.Context, conversationID string) (*store.Park, error) {
	defer t.since(opOwedTurn, time.Now())
	return t.s.OwedTurn(ctx, conversationID)
}

func (t *timedStore) TakePark(ctx context.Context, id string, a store.Answer) (*store.Park, bool, error) {
	defer t.since(opTakePark, time.Now())
	return t.s.TakePark(ctx, id, a)
}

func (t *timedStore) ExpiredParks(ctx context.Context, now time.Time, limit int) ([]*store.Park, error) {
	defer t.since(opExpiredParks, time.Now())
	return t.s.ExpiredParks(ctx, now, limit)
}

func (t *timedStore) SaveStep(ctx context.Context, l store.Lease, s store.Step) error {
	defer t.since(opSaveStep, time.Now())
	return t.s.SaveStep(ctx, l, s)
}

func (t *timedStore) EndedPark(ctx context.Context, conversationID, id string) (*store.Park, error) {
	defer t.since(opEndedPark, time.Now())
	return t.s.EndedPark(ctx, conversationID, id)
}

func (t *timedStore) EndedParks(ctx context.Context, conversationID string, since time.Time, before string, limit int) ([]*store.Park, error) {
	defer t.since(opEndedParks, time.Now())
	return t.s.EndedParks(ctx, conversationID, since, before, limit)
}

func (t *timedStore) RenewLease(ctx context.Context, l store.Lease) error {
	defer t.since(opRenewLease, time.Now())
	return t.s.RenewLease(ctx, l)
}

func (t *timedStore) OwedTurns(ctx context.Context, now time.Time, limit int) ([]*store.Park, error) {
	defer t.since(opOwedTurns, time.Now())
	return t.s.OwedTurns(ctx, now, limit)
}

func (t *timedStore) ClaimTurn(ctx context.Context, l store.Lease, now time.Time) (*store.Park, bool, error) {
	defer t.since(opClaimTurn, time.Now())
	return t.s.ClaimTurn(ctx, l, now)
}

func (t *timedStore) Inbox(ctx context.Context, q store.InboxQuery) ([]*store.Park, error) {
	defer t.since(opInbox, time.Now())
	return t.s.Inbox(ctx, q)
}

// Outbox is the timed store's outbox, untimed: its writes are the
// webhook sender's, off the turn's path.
func (t *timedStore) Outbox() store.Outbox { return store.OutboxOf(t.s) }
