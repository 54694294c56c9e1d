// Package memstore is the in-memory store.Store: one process, nothing
// survives a restart. Tests and the scenario runner use it.
package memstore

import (
	"context"
	"maps"
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
	sessions map[string]*store.Session
	parks    map[string]*store.Park

	retention time.Duration
	stop      chan struct{}
	done      chan struct{}
}

type conversation struct {
	store.Conversation
	messages []*store.Message
	sessions []string  // ids of the sessions bound to it
	pending  string    // id of the pending park
	used     time.Time // last write or session
}

// New returns an empty store that keeps everything until the process ends.
func New() *Store {
	return &Store{convs: map[string]*conversation{}, sessions: map[string]*store.Session{}, parks: map[string]*store.Park{}}
}

// NewWithRetention returns a store that forgets a conversation (its
// messages and sessions) once nothing has used it for retention and it has
// no pending park, so a long-running process returns the memory of
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
	for id, c := range s.convs {
		if c.pending != "" || now.Sub(c.used) < s.retention {
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

func (s *Store) CreateConversation(_ context.Context, c *store.Conversation) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cp := *c
	cp.Supports = slices.Clone(c.Supports)
	s.convs[c.ID] = &conversation{Conversation: cp, used: time.Now()}
	return nil
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
		for _, m := range c.messages {
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
	cp := *sess
	s.sessions[sess.ID] = &cp
	c.sessions = append(c.sessions, sess.ID)
	c.used = time.Now()
	return nil
}

func (s *Store) Session(_ context.Context, id string) (*store.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.sessions[id]
	if !ok {
		return nil, store.ErrNotFound
	}
	cp := *sess
	return &cp, nil
}

func (s *Store) SetContact(_ context.Context, id, name, email, phone string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.sessions[id]
	if !ok {
		return store.ErrNotFound
	}
	merge := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	merge(&sess.UserName, name)
	merge(&sess.ContactEmail, email)
	merge(&sess.ContactPhone, phone)
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
		c := s.convs[m.ConversationID]
		c.messages = append(c.messages, cloneMessage(m))
		c.used = time.Now()
	}
	return nil
}

func (s *Store) Messages(_ context.Context, id string, roles []store.Role, before string, limit int) ([]*store.Message, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.convs[id]
	if !ok {
		return nil, false, store.ErrNotFound
	}
	end := len(c.messages)
	if before != "" {
		end = slices.IndexFunc(c.messages, func(m *store.Message) bool { return m.ID == before })
		if end < 0 {
			return nil, false, store.ErrNotFound
		}
	}
	var out []*store.Message
	i := end - 1
	for ; i >= 0 && len(out) < limit; i-- {
		if m := c.messages[i]; len(roles) == 0 || slices.Contains(roles, m.Role) {
			out = append(out, cloneMessage(m))
		}
	}
	more := false
	for ; i >= 0; i-- {
		if len(roles) == 0 || slices.Contains(roles, c.messages[i].Role) {
			more = true
			break
		}
	}
	return out, more, nil
}

func (s *Store) SavePark(_ context.Context, p *store.Park) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.convs[p.ConversationID]
	if !ok {
		return "", store.ErrNotFound
	}
	// A conversation has one pending park: the newest replaces the last.
	var replaced string
	if c.pending != "" && c.pending != p.ID {
		replaced = c.pending
		delete(s.parks, c.pending)
	}
	cp := clonePark(p)
	cp.State = store.ParkPending
	s.parks[p.ID] = cp
	c.pending = p.ID
	return replaced, nil
}

func (s *Store) PendingPark(_ context.Context, id string) (*store.Park, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.convs[id]
	if !ok || c.pending == "" {
		return nil, store.ErrNotFound
	}
	return clonePark(s.parks[c.pending]), nil
}

func (s *Store) TakePark(_ context.Context, id string, state store.ParkState) (*store.Park, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.parks[id]
	if !ok || p.State != store.ParkPending {
		return nil, false, nil
	}
	// A resolved park is no longer needed: the turn carries on from the
	// history, so the record is dropped to return its memory.
	delete(s.parks, id)
	if c := s.convs[p.ConversationID]; c != nil && c.pending == id {
		c.pending = ""
	}
	p.State = state
	return p, true, nil
}

func (s *Store) ExpiredParks(_ context.Context, now time.Time) ([]*store.Park, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*store.Park
	for _, p := range s.parks {
		if p.State == store.ParkPending && p.Deadline.Before(now) {
			out = append(out, clonePark(p))
		}
	}
	return out, nil
}

func cloneMessage(m *store.Message) *store.Message {
	cp := *m
	cp.ToolCalls = slices.Clone(m.ToolCalls)
	return &cp
}

func clonePark(p *store.Park) *store.Park {
	cp := *p
	cp.Spec = slices.Clone(p.Spec)
	cp.Turn.Pending = slices.Clone(p.Turn.Pending)
	cp.Turn.Stashed = maps.Clone(p.Turn.Stashed)
	cp.Turn.Citations = slices.Clone(p.Turn.Citations)
	return &cp
}
