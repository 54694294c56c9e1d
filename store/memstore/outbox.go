package memstore

import (
	"context"
	"slices"
	"time"

	"github.com/kindkit/kindkit/store"
)

// outbox is the memory store's store.Outbox, under the store's mu: its
// events are written in the same critical section as the park's change.
type outbox struct {
	consumers []string
	events    []*outboxEntry // in the order written
	seq       int64
}

type outboxEntry struct {
	seq   int64
	event store.OutboxEvent
	due   time.Time // zero: due at once
	owner string    // the lease's, while due is its end
}

var (
	_ store.Outbox   = (*Store)(nil)
	_ store.Outboxed = (*Store)(nil)
)

// Outbox is the store itself.
func (s *Store) Outbox() store.Outbox { return s }

func (s *Store) OpenOutbox(consumers ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range consumers {
		if !slices.Contains(s.out.consumers, c) {
			s.out.consumers = append(s.out.consumers, c)
		}
	}
}

func (s *Store) CloseOutbox(_ context.Context, consumer string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.out.consumers = slices.DeleteFunc(s.out.consumers, func(c string) bool { return c == consumer })
	s.out.events = slices.DeleteFunc(s.out.events, func(e *outboxEntry) bool { return e.event.Consumer == consumer })
	return nil
}

func (s *Store) OutboxOpen(consumer string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Contains(s.out.consumers, consumer)
}

// parkedLocked writes park p's ask.parked event for every consumer.
func (s *Store) parkedLocked(p *store.Park) {
	for _, c := range s.out.consumers {
		s.addEventLocked(store.ParkedEvent(p, c))
	}
}

// resolvedLocked writes ended park p's ask.resolved event for every
// consumer.
func (s *Store) resolvedLocked(p *store.Park, at time.Time) {
	for _, c := range s.out.consumers {
		s.addEventLocked(store.ResolvedEvent(p, c, at))
	}
}

func (s *Store) addEventLocked(e *store.OutboxEvent) {
	s.out.seq++
	s.out.events = append(s.out.events, &outboxEntry{seq: s.out.seq, event: *e})
}

func (s *Store) LeaseEvent(_ context.Context, consumer, owner string, now, until time.Time) (*store.OutboxEvent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	waiting := map[string]bool{} // asks with an earlier event of consumer's
	for _, e := range s.out.events {
		if e.event.Consumer != consumer {
			continue
		}
		first := !waiting[e.event.AskID]
		waiting[e.event.AskID] = true
		if !first || e.due.After(now) {
			continue
		}
		e.due, e.owner = until, owner
		cp := e.event
		return &cp, nil
	}
	return nil, nil
}

func (s *Store) EventDone(_ context.Context, consumer, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.out.events = slices.DeleteFunc(s.out.events, func(e *outboxEntry) bool {
		return e.event.Consumer == consumer && e.event.ID == id
	})
	return nil
}

func (s *Store) RetryEvent(_ context.Context, consumer, id, owner string, due time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.out.events {
		if e.event.Consumer == consumer && e.event.ID == id {
			if e.owner != owner {
				return store.ErrLeaseLost
			}
			e.event.Attempts++
			e.due, e.owner = due, ""
			return nil
		}
	}
	return store.ErrLeaseLost
}
