// Package memstore is the in-memory store.Store: one process, nothing
// survives a restart. Tests and the scenario runner use it.
package memstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kindkit/kindkit/store"
)

// Store is safe for concurrent use.
type Store struct {
	mu       sync.Mutex
	convs    map[string]*conversation
	sessions map[string][]byte // encoded (codec.go)
	parks    map[string]*store.Park

	scratch []byte // encode's, under mu
	out     outbox // under mu

	retention time.Duration
	stop      chan struct{}
	done      chan struct{}
}

type conversation struct {
	store.Conversation
	log      []byte   // the messages, encoded (codec.go) one after the other…
	starts   []int    // …each from its start in log
	sessions []string // ids of the sessions bound to it
	pending  []string // ids of the pending parks, the first saved first
	// cancelled are the groups of parks one of which was cancelled: their
	// turn ended, and no take of them resumes it.
	cancelled map[string]bool
	ended     [][]byte  // parks that ended with an outcome, encoded, in the order saved
	used      time.Time // last write or session
}

// message returns the encoding of the i-th message.
func (c *conversation) message(i int) []byte {
	if i+1 < len(c.starts) {
		return c.log[c.starts[i]:c.starts[i+1]]
	}
	return c.log[c.starts[i]:]
}

// find returns the index of the message with id, or -1.
func (c *conversation) find(id string) int {
	for i := range c.starts {
		if string(messageID(c.message(i))) == id {
			return i
		}
	}
	return -1
}

// New returns an empty store that keeps everything until the process ends.
func New() *Store {
	return &Store{convs: map[string]*conversation{}, sessions: map[string][]byte{}, parks: map[string]*store.Park{}}
}

// NewWithRetention returns a store that forgets a conversation (its
// messages and sessions) once nothing has used it for retention and it has
// no pending park or owed turn, so a long-running process returns the memory of
// finished conversations. Close stops its sweeper.
func NewWithRetention(retention time.Duration) *Store {
	s := New()
	s.retention = retention
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	go s.sweepLoop(min(max(retention/4, 10*time.Millisecond), time.Minute))
	return s
}

// Close stops the sweeper of a store made by NewWithRetention.
func (s *Store) Close() {
	if s.stop == nil {
		return
	}
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
}

func (s *Store) sweepLoop(every time.Duration) {
	defer close(s.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			s.sweep(now)
		}
	}
}

// sweep forgets conversations unused for the retention period.
func (s *Store) sweep(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	owed := map[string]bool{}
	for _, p := range s.parks {
		if p.Owed {
			owed[p.ConversationID] = true
		}
	}
	for id, c := range s.convs {
		if len(c.pending) > 0 || owed[id] || now.Sub(c.used) < s.retention {
			continue
		}
		for _, sid := range c.sessions {
			delete(s.sessions, sid)
		}
		delete(s.convs, id)
	}
	for id, p := range s.parks {
		if _, ok := s.convs[p.ConversationID]; !ok {
			delete(s.parks, id)
		}
	}
}

var _ store.Store = (*Store)(nil)

// Ping always answers: the store is this process's memory.
func (s *Store) Ping(context.Context) error { return nil }

func (s *Store) CreateConversation(_ context.Context, c *store.Conversation, sessions ...*store.Session) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, taken := s.convs[c.ID]; taken {
		return errConversationTaken // as the SQL stores' primary key does
	}
	for i, sess := range sessions {
		if err := s.newSessionLocked(sess.ID, sessions[:i]); err != nil {
			return err
		}
	}
	cp := *c
	cp.Owner = store.Text(c.Owner)
	cp.Supports = slices.Clone(c.Supports)
	conv := &conversation{Conversation: cp, used: time.Now()}
	s.convs[c.ID] = conv
	for _, sess := range sessions {
		s.addSessionLocked(conv, sess)
	}
	return nil
}

// errConversationTaken names no id: without auth a conversation id is
// its bearer secret, and errors end up in log lines.
var errConversationTaken = errors.New("memstore: create conversation: the conversation id is taken")

// errSessionTaken names no id: a session id is a client's handle on its
// session, and errors end up in log lines.
var errSessionTaken = errors.New("memstore: create session: the session id is taken")

// newSessionLocked refuses a session id that is taken, as the SQL
// stores' primary key does: by a stored session or one of also.
func (s *Store) newSessionLocked(id string, also []*store.Session) error {
	_, taken := s.sessions[id]
	if taken || slices.ContainsFunc(also, func(o *store.Session) bool { return o.ID == id }) {
		return errSessionTaken
	}
	return nil
}

// encode returns what put appends to an empty slice, in a slice of its own
// length: appending to one that grows as it goes allocated twice as much.
// Under s.mu.
func (s *Store) encode(put func([]byte) []byte) []byte {
	s.scratch = put(s.scratch[:0])
	return bytes.Clone(s.scratch)
}

// addSessionLocked stores a copy of sess, bound to c.
func (s *Store) addSessionLocked(c *conversation, sess *store.Session) {
	cp := *sess
	cp.ConversationID = c.ID
	for _, f := range []*string{&cp.AgentID, &cp.AgentName, &cp.UserName, &cp.ContactEmail, &cp.ContactPhone} {
		*f = store.Text(*f)
	}
	s.sessions[sess.ID] = s.encode(func(b []byte) []byte { return appendSession(b, &cp) })
	c.sessions = append(c.sessions, sess.ID)
	c.used = time.Now()
}

func (s *Store) Conversation(_ context.Context, id string) (*store.Conversation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.convs[id]
	if !ok {
		return nil, store.ErrNotFound
	}
	cp := c.Conversation
	cp.Supports = slices.Clone(c.Supports)
	return &cp, nil
}

func (s *Store) SetSupports(_ context.Context, id string, supports []string) error {
	return s.withConv(id, func(c *conversation) { c.Supports = slices.Clone(supports) })
}

func (s *Store) SetModelPos(_ context.Context, id string, pos int) error {
	return s.withConv(id, func(c *conversation) { c.ModelPos = pos })
}

func (s *Store) ListConversations(_ context.Context, f store.ConversationFilter, limit int) ([]store.ConversationSummary, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []store.ConversationSummary
	add := func(c *conversation) {
		sum := store.ConversationSummary{ID: c.ID}
		titled := false
		for i := range c.starts {
			m := readMessage(c.message(i), c.ID)
			switch m.Role {
			case store.RoleUser:
				if !titled {
					sum.Title, titled = m.Text, true
				}
				sum.MessageCount++
			case store.RoleReply:
				sum.MessageCount++
			}
			if m.CreatedAt.After(sum.UpdatedAt) {
				sum.UpdatedAt = m.CreatedAt
			}
		}
		if sum.UpdatedAt.IsZero() {
			sum.UpdatedAt = c.CreatedAt
		}
		out = append(out, sum)
	}
	if f.IDs != nil {
		seen := make(map[string]bool, len(f.IDs))
		for _, id := range f.IDs {
			if c, ok := s.convs[id]; ok && !seen[id] {
				seen[id] = true
				add(c)
			}
		}
	} else {
		for _, c := range s.convs {
			if c.Owner == f.Owner {
				add(c)
			}
		}
	}
	slices.SortFunc(out, func(a, b store.ConversationSummary) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out[:min(len(out), max(limit, 0))], nil
}

func (s *Store) withConv(id string, f func(*conversation)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.convs[id]
	if !ok {
		return store.ErrNotFound
	}
	f(c)
	return nil
}

func (s *Store) CreateSession(_ context.Context, sess *store.Session) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.convs[sess.ConversationID]
	if !ok {
		return store.ErrNotFound
	}
	if err := s.newSessionLocked(sess.ID, nil); err != nil {
		return err
	}
	s.addSessionLocked(c, sess)
	return nil
}

func (s *Store) Session(_ context.Context, id string) (*store.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.sessions[id]
	if !ok {
		return nil, store.ErrNotFound
	}
	return readSession(sess), nil
}

func (s *Store) SetContact(_ context.Context, id, name, email, phone string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	enc, ok := s.sessions[id]
	if !ok {
		return store.ErrNotFound
	}
	sess := readSession(enc)
	merge := func(dst *string, v string) {
		if v != "" {
			*dst = store.Text(v)
		}
	}
	merge(&sess.UserName, name)
	merge(&sess.ContactEmail, email)
	merge(&sess.ContactPhone, phone)
	s.sessions[id] = s.encode(func(b []byte) []byte { return appendSession(b, sess) })
	return nil
}

func (s *Store) AppendMessages(_ context.Context, msgs ...*store.Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range msgs {
		if _, ok := s.convs[m.ConversationID]; !ok {
			return store.ErrNotFound
		}
	}
	for _, m := range msgs {
		s.appendLocked(s.convs[m.ConversationID], []*store.Message{m})
	}
	return nil
}

// StartTurn looks at every park the store keeps (pending or owed): the
// memory store is for tests and small deployments.
func (s *Store) StartTurn(_ context.Context, m *store.Message, t *store.Park, first *store.Conversation, waiting store.Waiting) ([]*store.Park, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.convs[m.ConversationID]
	switch {
	case !ok:
		return nil, false, nil
	case first != nil && (len(c.starts) > 0 || len(c.pending) > 0 || c.ModelPos != first.ModelPos || !slices.Equal(c.Supports, first.Supports)):
		return nil, false, nil
	}
	for _, p := range s.parks {
		if p.ConversationID == c.ID && p.Owed {
			return nil, false, nil
		}
	}
	var withdrawn []*store.Park
	if len(c.pending) > 0 {
		answers := make([]store.Answer, len(c.pending))
		for i, id := range c.pending {
			var a *store.Answer
			if waiting != nil {
				a = waiting(clonePark(s.parks[id]))
			}
			if a == nil {
				return nil, false, nil
			}
			answers[i] = *a
		}
		for i, id := range slices.Clone(c.pending) {
			withdrawn = append(withdrawn, s.takeLocked(c, s.parks[id], answers[i]))
		}
	}
	cp := clonePark(t)
	cp.Type, cp.State, cp.Owed, cp.ConversationID = store.ParkTurn, store.ParkRunning, true, c.ID
	s.parks[cp.ID] = cp
	s.appendLocked(c, []*store.Message{m})
	return withdrawn, true, nil
}

// appendLocked appends msgs, which the caller made for conversation c.
func (s *Store) appendLocked(c *conversation, msgs []*store.Message) {
	for _, m := range msgs {
		// Encoded aside, then appended: appended piece by piece, the log
		// grew several times for one message.
		s.scratch = appendMessage(s.scratch[:0], m)
		c.starts = append(c.starts, len(c.log))
		c.log = append(c.log, s.scratch...)
		m.Seq = int64(len(c.starts)) // a conversation's messages are never deleted one by one
	}
	c.used = time.Now()
}

func (s *Store) Messages(_ context.Context, id string, roles []store.Role, before string, limit int) ([]*store.Message, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.convs[id]
	if !ok {
		return nil, false, store.ErrNotFound
	}
	end := len(c.starts)
	if before != "" {
		if end = c.find(before); end < 0 {
			return nil, false, store.ErrNotFound
		}
	}
	var out []*store.Message
	i := end - 1
	for ; i >= 0 && len(out) < limit; i-- {
		if m := readMessage(c.message(i), c.ID); len(roles) == 0 || slices.Contains(roles, m.Role) {
			m.Seq = int64(i + 1)
			out = append(out, m)
		}
	}
	more := false
	for ; i >= 0; i-- {
		if len(roles) == 0 || slices.Contains(roles, readMessage(c.message(i), c.ID).Role) {
			more = true
			break
		}
	}
	return out, more, nil
}

func (s *Store) MessagesAfter(_ context.Context, id string, seq int64, limit int) ([]*store.Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.convs[id]
	if !ok {
		return nil, nil
	}
	var out []*store.Message
	for i := max(seq, 0); i < int64(len(c.starts)) && len(out) < limit; i++ {
		m := readMessage(c.message(int(i)), c.ID)
		m.Seq = i + 1
		out = append(out, m)
	}
	return out, nil
}

func (s *Store) SavePark(ctx context.Context, p *store.Park, from *store.Lease, msgs ...*store.Message) (string, error) {
	replaced, err := s.SaveParks(ctx, []*store.Park{p}, from, msgs...)
	if err != nil || len(replaced) == 0 {
		return "", err
	}
	return replaced[0], nil
}

func (s *Store) SaveParks(_ context.Context, ps []*store.Park, from *store.Lease, msgs ...*store.Message) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(ps) == 0 {
		return nil, errors.New("memstore: no park to save")
	}
	c, ok := s.convs[ps[0].ConversationID]
	if !ok {
		return nil, store.ErrNotFound
	}
	for _, p := range ps[1:] {
		if p.ConversationID != c.ID {
			return nil, errors.New("memstore: parks saved together are of one conversation")
		}
	}
	if from != nil {
		if err := s.heldLocked(*from); err != nil {
			return nil, err
		}
		delete(s.parks, from.ParkID)
	}
	// The newest raise replaces what was pending.
	var replaced []string
	for _, id := range c.pending {
		replaced = append(replaced, id)
		if old := s.parks[id]; old != nil && len(s.out.consumers) > 0 {
			ended := *old
			ended.State = store.ParkReplaced
			s.resolvedLocked(&ended, ps[0].CreatedAt)
		}
		delete(s.parks, id)
	}
	c.pending = c.pending[:0]
	for _, p := range ps {
		cp := clonePark(p)
		cp.Reason, cp.Addressee = store.Text(p.Reason), store.Text(p.Addressee)
		cp.State, cp.Owed, cp.LeaseOwner, cp.LeaseUntil = store.ParkPending, false, "", time.Time{}
		s.parks[p.ID] = cp
		s.parkedLocked(cp)
		c.pending = append(c.pending, p.ID)
	}
	slices.SortStableFunc(c.pending, func(a, b string) int {
		if n := s.parks[a].CreatedAt.Compare(s.parks[b].CreatedAt); n != 0 {
			return n
		}
		return strings.Compare(a, b)
	})
	s.appendLocked(c, msgs)
	return replaced, nil
}

func (s *Store) PendingPark(_ context.Context, id string) (*store.Park, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.convs[id]
	if !ok || len(c.pending) == 0 {
		return nil, store.ErrNotFound
	}
	return clonePark(s.parks[c.pending[0]]), nil
}

func (s *Store) PendingParks(_ context.Context, id string) ([]*store.Park, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.convs[id]
	if !ok {
		return nil, nil
	}
	out := make([]*store.Park, len(c.pending))
	for i, id := range c.pending {
		out[i] = clonePark(s.parks[id])
	}
	return out, nil
}

// OwedTurn looks at every park the store keeps, as StartTurn does.
func (s *Store) OwedTurn(_ context.Context, id string) (*store.Park, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.parks {
		if p.ConversationID == id && p.Owed {
			return clonePark(p), nil
		}
	}
	return nil, store.ErrNotFound
}

func (s *Store) TakePark(_ context.Context, id string, a store.Answer) (*store.Park, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.parks[id]
	if !ok || p.State != store.ParkPending {
		return nil, false, nil
	}
	c := s.convs[p.ConversationID]
	if c == nil {
		return nil, false, store.ErrNotFound
	}
	return s.takeLocked(c, p, a), true, nil
}

// takeLocked moves pending park p of conversation c to a.State and
// appends a's messages.
func (s *Store) takeLocked(c *conversation, p *store.Park, a store.Answer) *store.Park {
	id := p.ID
	taken := *p
	taken.State = a.State
	if a.Turn != nil {
		taken.Turn = slices.Clone(a.Turn)
	}
	c.pending = slices.DeleteFunc(c.pending, func(pending string) bool { return pending == id })
	lease := a.Lease
	if p.Group != "" && a.State == store.ParkCancelled {
		if c.cancelled == nil {
			c.cancelled = map[string]bool{}
		}
		c.cancelled[p.Group] = true
	}
	if p.Group != "" && (c.cancelled[p.Group] || slices.ContainsFunc(c.pending, func(pending string) bool { return s.parks[pending].Group == p.Group })) {
		lease = nil // not the group's last (its turn resumes from the last take), or its turn ended
	}
	if lease != nil {
		taken.Owed, taken.LeaseOwner, taken.LeaseUntil = true, lease.Owner, lease.Until
	}
	if a.Record != nil {
		taken.Record = slices.Clone(a.Record)
	}
	if a.Outcome != nil {
		taken.Outcome = slices.Clone(a.Outcome)
		// Kept as taken: the card, not the lease as it goes on.
		c.ended = append(c.ended, s.encode(func(b []byte) []byte { return appendPark(b, &taken) }))
	}
	s.appendLocked(c, a.Messages)
	s.resolvedLocked(&taken, time.Now())
	*p = taken
	if lease == nil {
		// Nothing is owed: the record is dropped to return its memory.
		delete(s.parks, id)
	}
	return clonePark(p)
}

// ExpiredParks looks at every park: the memory store is for tests and
// small deployments, not for a million parked cards.
func (s *Store) ExpiredParks(_ context.Context, now time.Time, limit int) ([]*store.Park, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*store.Park
	for _, p := range s.parks {
		if p.State == store.ParkPending && p.Deadline.Before(now) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *store.Park) int { return a.Deadline.Compare(b.Deadline) })
	out = out[:min(len(out), max(limit, 0))]
	for i, p := range out {
		out[i] = clonePark(p)
	}
	return out, nil
}

// Inbox looks at every pending park, as ExpiredParks does.
func (s *Store) Inbox(_ context.Context, q store.InboxQuery) ([]*store.Park, error) {
	if len(q.Addressees) > store.MaxInboxAddressees {
		return nil, fmt.Errorf("memstore: inbox: %d addressees, at most %d", len(q.Addressees), store.MaxInboxAddressees)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*store.Park
	for _, p := range s.parks {
		if p.State != store.ParkPending || (q.Kind != "" && p.Kind != q.Kind) ||
			(!q.Before.IsZero() && (p.Deadline.IsZero() || !p.Deadline.Before(q.Before))) ||
			(q.After != nil && store.InboxOrder(store.InboxCursorOf(p), *q.After) <= 0) {
			continue
		}
		mine := p.Addressee != "" && slices.Contains(q.Addressees, p.Addressee)
		if p.Addressee == "" && q.Owner != "" {
			c := s.convs[p.ConversationID]
			mine = c != nil && c.Owner == q.Owner
		}
		if mine {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *store.Park) int { return store.InboxOrder(store.InboxCursorOf(a), store.InboxCursorOf(b)) })
	out = out[:min(len(out), max(q.Limit, 0))]
	for i, p := range out {
		out[i] = clonePark(p)
	}
	return out, nil
}

// EndedPark looks through the conversation's ended parks, newest first.
func (s *Store) EndedPark(_ context.Context, conv, id string) (*store.Park, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.convs[conv]
	if !ok {
		return nil, store.ErrNotFound
	}
	for _, enc := range slices.Backward(c.ended) {
		p, err := readPark(enc)
		if err != nil {
			return nil, err
		}
		if p.ID == id {
			return p, nil
		}
	}
	return nil, store.ErrNotFound
}

// EndedParks reads the list of ended parks a conversation keeps beside
// its messages (and loses with them), ordered as the SQL stores order
// them.
func (s *Store) EndedParks(_ context.Context, id string, since time.Time, before string, limit int) ([]*store.Park, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.convs[id]
	if !ok {
		return nil, nil
	}
	var until time.Time // zero: no bound
	if before != "" {
		i := c.find(before)
		if i < 0 {
			return nil, nil
		}
		until = readMessage(c.message(i), c.ID).CreatedAt
	}
	var out []*store.Park
	for _, enc := range c.ended {
		p, err := readPark(enc)
		if err != nil {
			return nil, err
		}
		if !p.CreatedAt.Before(since) && (until.IsZero() || p.CreatedAt.Before(until)) {
			out = append(out, p)
		}
	}
	slices.SortStableFunc(out, func(a, b *store.Park) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out[:min(len(out), max(limit, 0))], nil
}

// heldLocked tells whether l is held: its park owes a reply and l's owner
// holds the lease.
func (s *Store) heldLocked(l store.Lease) error {
	p, ok := s.parks[l.ParkID]
	if !ok || !p.Owed || p.LeaseOwner != l.Owner {
		return store.ErrLeaseLost
	}
	return nil
}

func (s *Store) SaveStep(_ context.Context, l store.Lease, st store.Step) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.heldLocked(l); err != nil {
		return err
	}
	p := s.parks[l.ParkID]
	c := s.convs[p.ConversationID]
	if c == nil {
		return store.ErrNotFound
	}
	s.appendLocked(c, st.Messages)
	if st.ModelPos != nil {
		c.ModelPos = *st.ModelPos
	}
	if st.Done {
		delete(s.parks, l.ParkID)
		return nil
	}
	p.Turn = slices.Clone(st.Turn)
	p.LeaseUntil = l.Until
	return nil
}

func (s *Store) RenewLease(_ context.Context, l store.Lease) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.heldLocked(l); err != nil {
		return err
	}
	s.parks[l.ParkID].LeaseUntil = l.Until
	return nil
}

func (s *Store) OwedTurns(_ context.Context, now time.Time, limit int) ([]*store.Park, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*store.Park
	for _, p := range s.parks {
		if p.Owed && p.LeaseUntil.Before(now) {
			out = append(out, clonePark(p))
		}
	}
	slices.SortFunc(out, func(a, b *store.Park) int { return a.LeaseUntil.Compare(b.LeaseUntil) })
	return out[:min(len(out), max(limit, 0))], nil
}

func (s *Store) ClaimTurn(_ context.Context, l store.Lease, now time.Time) (*store.Park, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.parks[l.ParkID]
	if !ok || !p.Owed || !p.LeaseUntil.Before(now) {
		return nil, false, nil
	}
	p.LeaseOwner, p.LeaseUntil = l.Owner, l.Until
	return clonePark(p), true, nil
}

func clonePark(p *store.Park) *store.Park {
	cp := *p
	cp.Spec = slices.Clone(p.Spec)
	cp.Outcome = slices.Clone(p.Outcome)
	cp.Record = slices.Clone(p.Record)
	cp.Turn = slices.Clone(p.Turn)
	return &cp
}
