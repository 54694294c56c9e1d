package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kindkit/kindkit/store"
)

// The outbox (migration 9): rows are written by the park's own write when
// the store has consumers, so a store without them pays one load of an
// atomic pointer per park write.

var (
	_ store.Outbox   = (*Store)(nil)
	_ store.Outboxed = (*Store)(nil)
)

// Outbox is the store itself.
func (s *Store) Outbox() store.Outbox { return s }

// consumers is the outbox's consumers as they are now: nil when none.
func (s *Store) consumers() []string {
	if p := s.outbox.Load(); p != nil && len(*p) > 0 {
		return *p
	}
	return nil
}

func (s *Store) OpenOutbox(consumers ...string) {
	s.outboxMu.Lock()
	defer s.outboxMu.Unlock()
	cs := slices.Clone(s.consumers())
	for _, c := range consumers {
		if !slices.Contains(cs, c) {
			cs = append(cs, c)
		}
	}
	s.outbox.Store(&cs)
}

func (s *Store) CloseOutbox(ctx context.Context, consumer string) error {
	s.outboxMu.Lock()
	cs := slices.DeleteFunc(slices.Clone(s.consumers()), func(c string) bool { return c == consumer })
	s.outbox.Store(&cs)
	s.outboxMu.Unlock()
	if _, err := s.exec(ctx, `DELETE FROM outbox WHERE consumer = $1`, consumer); err != nil {
		return s.wrap("close outbox", err)
	}
	return nil
}

func (s *Store) OutboxOpen(consumer string) bool { return slices.Contains(s.consumers(), consumer) }

const (
	outboxCols = `id, consumer, type, ask_id, conversation_id, ask, kind, tool, deadline, status, event_at, attempts`
	// outboxArgs is the parameters of one event's row: outboxCols up to
	// event_at.
	outboxArgs = 11
)

// insertEvents writes events, one statement for all.
func insertEvents(ctx context.Context, ex executor, events []*store.OutboxEvent) error {
	if len(events) == 0 {
		return nil
	}
	args := make([]any, 0, outboxArgs*len(events))
	for _, e := range events {
		deadline, err := nanos(e.Deadline)
		if err != nil {
			return err
		}
		at, err := nanos(e.At)
		if err != nil {
			return err
		}
		args = append(args, e.ID, e.Consumer, e.Type, e.AskID, e.ConversationID, string(e.Ask), e.Kind, store.Text(e.Tool), deadline, e.Status, at)
	}
	var b strings.Builder
	b.WriteString(`INSERT INTO outbox (id, consumer, type, ask_id, conversation_id, ask, kind, tool, deadline, status, event_at) VALUES `)
	for i := range events {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for j := range outboxArgs {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("$" + strconv.Itoa(i*outboxArgs+j+1))
		}
		b.WriteByte(')')
	}
	// An event is written once; a write run again by the group commit
	// rolled back the first.
	b.WriteString(` ON CONFLICT DO NOTHING`)
	_, err := ex.ExecContext(ctx, b.String(), args...)
	return err
}

// parkedEvents are p's ask.parked events for consumers.
func parkedEvents(p *store.Park, consumers []string) []*store.OutboxEvent {
	out := make([]*store.OutboxEvent, len(consumers))
	for i, c := range consumers {
		out[i] = store.ParkedEvent(p, c)
	}
	return out
}

// resolvedEvents are ended park p's ask.resolved events for consumers.
func resolvedEvents(p *store.Park, at time.Time, consumers []string) []*store.OutboxEvent {
	out := make([]*store.OutboxEvent, len(consumers))
	for i, c := range consumers {
		out[i] = store.ResolvedEvent(p, c, at)
	}
	return out
}

// The first due event of consumer $1 that no earlier event of its ask
// waits before: leased to owner $2 until $4 when due at $3. On PostgreSQL
// a row that another process is leasing is skipped, not waited for.
const dueEvent = `SELECT o.seq FROM outbox o WHERE o.consumer = $1 AND o.due <= $3
	AND NOT EXISTS (SELECT 1 FROM outbox e WHERE e.consumer = o.consumer AND e.ask_id = o.ask_id AND e.seq < o.seq)
	ORDER BY o.seq LIMIT 1`

var (
	leaseEventPostgres = `WITH picked AS (` + dueEvent + ` FOR UPDATE SKIP LOCKED)
	UPDATE outbox SET lease_owner = $2, due = $4 FROM picked WHERE outbox.seq = picked.seq RETURNING ` + prefixed("outbox.", outboxCols)
	leaseEventSQLite = `UPDATE outbox SET lease_owner = $2, due = $4 WHERE seq IN (` + dueEvent + `) RETURNING ` + outboxCols
)

func prefixed(prefix, cols string) string {
	parts := strings.Split(cols, ", ")
	for i, p := range parts {
		parts[i] = prefix + p
	}
	return strings.Join(parts, ", ")
}

func (s *Store) LeaseEvent(ctx context.Context, consumer, owner string, now, until time.Time) (*store.OutboxEvent, error) {
	query := leaseEventSQLite
	if s.dialect == dialectPostgres {
		query = leaseEventPostgres
	}
	var (
		e            store.OutboxEvent
		ask          string
		deadline, at sql.NullInt64
	)
	err := s.write(ctx, false, func(ex executor) error {
		return ex.QueryRowContext(ctx, query, consumer, owner, orZero(now), orZero(until)).Scan(&e.ID, &e.Consumer, &e.Type, &e.AskID,
			&e.ConversationID, &ask, &e.Kind, &e.Tool, &deadline, &e.Status, &at, &e.Attempts)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, s.wrap("lease event", err)
	}
	e.Ask, e.Deadline, e.At = store.ParkKind(ask), fromNanos(deadline), fromNanos(at)
	return &e, nil
}

// orZero is t in unix nanoseconds, 0 for the zero time or one out of
// range (the outbox's due times are never NULL).
func orZero(t time.Time) int64 {
	if n, err := nanos(t); err == nil && n != nil {
		return n.(int64)
	}
	return 0
}

func (s *Store) EventDone(ctx context.Context, consumer, id string) error {
	if _, err := s.exec(ctx, `DELETE FROM outbox WHERE consumer = $1 AND id = $2`, consumer, id); err != nil {
		return s.wrap("event done", err)
	}
	return nil
}

func (s *Store) RetryEvent(ctx context.Context, consumer, id, owner string, due time.Time) error {
	res, err := s.exec(ctx, `UPDATE outbox SET attempts = attempts + 1, due = $4, lease_owner = ''
		WHERE consumer = $1 AND id = $2 AND lease_owner = $3`, consumer, id, owner, orZero(due))
	if err != nil {
		return s.wrap("retry event", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return s.wrap("retry event", err)
	} else if n == 0 {
		return store.ErrLeaseLost
	}
	return nil
}
