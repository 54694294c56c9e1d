package storetest

import (
	"context"
	"sync"
	"time"

	"github.com/kindkit/kindkit/store"
)

// Writes is a store.Store that notes the name of each write method called
// on it, for tests that count the writes of a protocol action: on SQLite
// each is a commit of its own, what a cycle pays most for. It hides a
// store.Shared's Notifier: wrap a store of one process.
type Writes struct {
	store.Store
	notes
}

// notes are the names of the calls a Writes or a Reads saw.
type notes struct {
	mu    sync.Mutex
	names []string
}

func (n *notes) note(name string) {
	n.mu.Lock()
	n.names = append(n.names, name)
	n.mu.Unlock()
}

// Take returns the calls noted since the last Take, oldest first.
func (n *notes) Take() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := n.names
	n.names = nil
	return out
}

func (w *Writes) CreateConversation(ctx context.Context, c *store.Conversation, sessions ...*store.Session) error {
	w.note("CreateConversation")
	return w.Store.CreateConversation(ctx, c, sessions...)
}

func (w *Writes) SetSupports(ctx context.Context, id string, supports []string) error {
	w.note("SetSupports")
	return w.Store.SetSupports(ctx, id, supports)
}

func (w *Writes) SetModelPos(ctx context.Context, id string, pos int) error {
	w.note("SetModelPos")
	return w.Store.SetModelPos(ctx, id, pos)
}

func (w *Writes) CreateSession(ctx context.Context, s *store.Session) error {
	w.note("CreateSession")
	return w.Store.CreateSession(ctx, s)
}

func (w *Writes) SetContact(ctx context.Context, id, name, email, phone string) error {
	w.note("SetContact")
	return w.Store.SetContact(ctx, id, name, email, phone)
}

func (w *Writes) AppendMessages(ctx context.Context, msgs ...*store.Message) error {
	w.note("AppendMessages")
	return w.Store.AppendMessages(ctx, msgs...)
}

func (w *Writes) StartTurn(ctx context.Context, m *store.Message, t *store.Park, first *store.Conversation, waiting store.Waiting) ([]*store.Park, bool, error) {
	w.note("StartTurn")
	return w.Store.StartTurn(ctx, m, t, first, waiting)
}

func (w *Writes) SavePark(ctx context.Context, p *store.Park, from *store.Lease, msgs ...*store.Message) (string, error) {
	w.note("SavePark")
	return w.Store.SavePark(ctx, p, from, msgs...)
}

func (w *Writes) SaveParks(ctx context.Context, ps []*store.Park, from *store.Lease, msgs ...*store.Message) ([]string, error) {
	w.note("SaveParks")
	return w.Store.SaveParks(ctx, ps, from, msgs...)
}

func (w *Writes) TakePark(ctx context.Context, id string, a store.Answer) (*store.Park, bool, error) {
	w.note("TakePark")
	return w.Store.TakePark(ctx, id, a)
}

func (w *Writes) SaveStep(ctx context.Context, l store.Lease, s store.Step) error {
	w.note("SaveStep")
	return w.Store.SaveStep(ctx, l, s)
}

func (w *Writes) RenewLease(ctx context.Context, l store.Lease) error {
	w.note("RenewLease")
	return w.Store.RenewLease(ctx, l)
}

func (w *Writes) ClaimTurn(ctx context.Context, l store.Lease, now time.Time) (*store.Park, bool, error) {
	w.note("ClaimTurn")
	return w.Store.ClaimTurn(ctx, l, now)
}

// Reads is a store.Store that notes the name of each read a protocol
// action makes (not the engine's sweeps), for tests that count them: on
// SQLite each pays for a page cache the last commit emptied.
type Reads struct {
	store.Store
	notes
}

func (r *Reads) Conversation(ctx context.Context, id string) (*store.Conversation, error) {
	r.note("Conversation")
	return r.Store.Conversation(ctx, id)
}

func (r *Reads) Session(ctx context.Context, id string) (*store.Session, error) {
	r.note("Session")
	return r.Store.Session(ctx, id)
}

func (r *Reads) Messages(ctx context.Context, id string, roles []store.Role, before string, limit int) ([]*store.Message, bool, error) {
	r.note("Messages")
	return r.Store.Messages(ctx, id, roles, before, limit)
}

func (r *Reads) PendingPark(ctx context.Context, id string) (*store.Park, error) {
	r.note("PendingPark")
	return r.Store.PendingPark(ctx, id)
}

func (r *Reads) PendingParks(ctx context.Context, id string) ([]*store.Park, error) {
	r.note("PendingParks")
	return r.Store.PendingParks(ctx, id)
}
