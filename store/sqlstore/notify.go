package sqlstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/kindkit/kindkit/store"
)

// notifier is a PostgreSQL store's store.Notifier: pg_notify on one
// channel, sent in batches on a connection of its own, each batch one
// implicit transaction, so every listener gets the messages in the order
// they were sent. A message over NOTIFY's payload limit is stored in
// fanout_notes and the notification carries "#" and its id.
type notifier struct {
	s   *Store
	cfg *pgx.ConnConfig

	mu   sync.Mutex // guards pub and sent; one Notify at a time
	pub  *pgx.Conn  // opened on first use, again after a failure
	sent int        // by-reference messages since fanout_notes was last pruned
}

const (
	notifyChannel = "kindkit_fanout"
	maxPayload    = 7999 // NOTIFY takes payloads shorter than 8000 bytes
	pruneEvery    = 100  // by-reference messages between prunes of fanout_notes
)

var _ store.Shared = (*Store)(nil)

// Notifier connects the processes that share a PostgreSQL database; nil on
// SQLite, whose file belongs to one process.
func (s *Store) Notifier() store.Notifier {
	if s.notes == nil {
		return nil
	}
	return s.notes
}

func (n *notifier) Notify(ctx context.Context, msgs ...[]byte) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.pub == nil {
		c, err := pgx.ConnectConfig(ctx, n.cfg.Copy())
		if err != nil {
			return fmt.Errorf("sqlstore: notify: %w", err)
		}
		n.pub = c
	}
	var b pgx.Batch
	for _, m := range msgs {
		if len(m) <= maxPayload {
			b.Queue(`SELECT pg_notify($1, $2)`, notifyChannel, string(m))
			continue
		}
		b.Queue(`WITH note AS (INSERT INTO fanout_notes (body) VALUES ($1) RETURNING id)
			SELECT pg_notify($2, '#' || id) FROM note`, m, notifyChannel)
		if n.sent++; n.sent >= pruneEvery {
			n.sent = 0
			b.Queue(`DELETE FROM fanout_notes WHERE created_at < now() - interval '5 minutes'`)
		}
	}
	if err := n.pub.SendBatch(ctx, &b).Close(); err != nil {
		n.pub.Close(context.Background())
		n.pub = nil
		return fmt.Errorf("sqlstore: notify: %w", err)
	}
	return nil
}

// Listen listens on its own connection until ctx ends or the connection
// fails; the caller listens again.
func (n *notifier) Listen(ctx context.Context, deliver func([]byte)) error {
	c, err := pgx.ConnectConfig(ctx, n.cfg.Copy())
	if err != nil {
		return fmt.Errorf("sqlstore: listen: %w", err)
	}
	defer c.Close(context.Background())
	if _, err := c.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		return fmt.Errorf("sqlstore: listen: %w", err)
	}
	for {
		note, err := c.WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("sqlstore: listen: %w", err)
		}
		ref, byRef := strings.CutPrefix(note.Payload, "#")
		if !byRef {
			deliver([]byte(note.Payload))
			continue
		}
		id, err := strconv.ParseInt(ref, 10, 64)
		if err != nil {
			continue // not one of ours
		}
		var body []byte
		err = n.s.db.QueryRowContext(ctx, `SELECT body FROM fanout_notes WHERE id = $1`, id).Scan(&body)
		switch {
		case err == nil:
			deliver(body)
		case ctx.Err() != nil:
			return ctx.Err()
		default:
			// Pruned already (a listener minutes behind) or the read
			// failed: this message is lost, as one sent while nobody
			// listened would be.
		}
	}
}

func (n *notifier) close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.pub != nil {
		n.pub.Close(context.Background())
		n.pub = nil
	}
}
