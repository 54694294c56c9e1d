package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/kindkit/kindkit/store"
)

// Parked is one new conversation with a turn parked in it, as Load writes
// it: the conversation, its session, its history and its pending park.
type Parked struct {
	Conversation store.Conversation
	Session      store.Session
	Messages     []*store.Message // in order, all of the conversation
	Park         store.Park       // pending, the conversation's only park
}

// Load writes many parked conversations at once, in one transaction: on
// SQLite with prepared multi-row inserts, on PostgreSQL with COPY. It is
// for tools that fill a store (cmd/kindload -parks), not for the server:
// it checks none of what SavePark checks, so the conversations must be
// new, and each park the only one of its conversation.
func (s *Store) Load(ctx context.Context, batch []Parked) error {
	if len(batch) == 0 {
		return nil
	}
	var err error
	if s.dialect == dialectPostgres {
		err = s.copyRows(ctx, batch)
	} else {
		err = s.commits.run(ctx, func(ex executor) error {
			// The conversations' keys follow the largest (see
			// insertConversation).
			var last int64
			if err := ex.QueryRowContext(ctx, lastConversationKey).Scan(&last); err != nil {
				return err
			}
			keys := make([]int64, len(batch))
			for i := range keys {
				keys[i] = last + 1 + int64(i)
			}
			rows, err := loadRows(batch, keys)
			if err != nil {
				return err
			}
			return insertTables(ctx, ex, rows)
		})
		if err == nil && s.ckpt != nil {
			// The committer asks for a checkpoint by the number of
			// writes (checkpointEvery), and a Load is one write of
			// thousands of rows: unchecked, a fill of a million parks
			// left all of its 3 GB in the WAL, which the first server on
			// the file then read through (every page looked up in a
			// WAL index of 700,000 frames) and copied in the middle of
			// its traffic.
			s.ckpt.checkpoint()
		}
	}
	if err != nil {
		return s.wrap("load", err)
	}
	return nil
}

// table is the rows of one table that Load writes.
type table struct {
	name string
	cols []string
	rows [][]any
}

// loadRows turns batch into column values, one table after the other in
// the order their foreign keys need. keys are the conversations' keys
// (ck), in batch order.
func loadRows(batch []Parked, keys []int64) ([]*table, error) {
	convs := &table{name: "conversations", cols: []string{"id", "owner", "supports", "model_pos", "created_at", "ck"}}
	sessions := &table{name: "sessions", cols: []string{"id", "conversation_id", "agent_id", "agent_name", "user_name", "contact_email", "contact_phone", "user_participant_id", "agent_participant_id", "ck"}}
	msgs := &table{name: "messages", cols: []string{"id", "conversation_id", "role", "text", "tool_calls", "tool_call_id", "tool_name", "is_error", "created_at", "ck"}}
	parks := &table{name: "parks", cols: []string{"id", "type", "conversation_id", "session_id", "kind", "spec", "reason", "tool_call", "deadline", "state", "turn", "owed", "lease_owner", "lease_until", "created_at", "ck"}}
	for i, b := range batch {
		c, x, p := &b.Conversation, &b.Session, &b.Park
		ck := keys[i]
		supports, err := jsonText(c.Supports)
		if err != nil {
			return nil, err
		}
		created, err := nanos(c.CreatedAt)
		if err != nil {
			return nil, err
		}
		convs.rows = append(convs.rows, []any{c.ID, store.Text(c.Owner), supports, int64(c.ModelPos), created, ck})
		sessions.rows = append(sessions.rows, []any{x.ID, c.ID, store.Text(x.AgentID), store.Text(x.AgentName), store.Text(x.UserName),
			store.Text(x.ContactEmail), store.Text(x.ContactPhone), x.UserParticipantID, x.AgentParticipantID, ck})
		for _, m := range b.Messages {
			calls, err := jsonText(m.ToolCalls)
			if err != nil {
				return nil, err
			}
			at, err := nanos(m.CreatedAt)
			if err != nil {
				return nil, err
			}
			msgs.rows = append(msgs.rows, []any{m.ID, c.ID, string(m.Role), store.Text(m.Text), calls, store.Text(m.ToolCallID), store.Text(m.ToolName), m.IsError, at, ck})
		}
		var spec any
		if p.Spec != nil {
			spec = string(p.Spec)
		}
		call, err := json.Marshal(p.ToolCall)
		if err != nil {
			return nil, err
		}
		deadline, err := nanos(p.Deadline)
		if err != nil {
			return nil, err
		}
		saved, err := nanos(p.CreatedAt)
		if err != nil {
			return nil, err
		}
		parks.rows = append(parks.rows, []any{p.ID, string(p.Type), c.ID, x.ID, p.Kind, spec, store.Text(p.Reason), string(call), deadline,
			string(store.ParkPending), string(p.Turn), false, "", nil, saved, ck})
	}
	return []*table{convs, sessions, msgs, parks}, nil
}

// insertTables inserts each table's rows, loadRowsPer to a statement (and
// the rest one by one, so that only two statements per table are kept
// prepared).
func insertTables(ctx context.Context, ex executor, tables []*table) error {
	for _, t := range tables {
		rows := t.rows
		for len(rows) > 0 {
			n := loadRowsPer
			if len(rows) < n {
				n = 1
			}
			args := make([]any, 0, n*len(t.cols))
			for _, r := range rows[:n] {
				args = append(args, r...)
			}
			if _, err := ex.ExecContext(ctx, insertQuery(t, n), args...); err != nil {
				return fmt.Errorf("%s: %w", t.name, err)
			}
			rows = rows[n:]
		}
	}
	return nil
}

// loadRowsPer is the rows of one INSERT of Load on SQLite: 14 columns at
// most, well under SQLite's 32766 parameters.
const loadRowsPer = 100

// insertQuery is an INSERT of n rows into t.
func insertQuery(t *table, n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO ` + t.name + ` (` + strings.Join(t.cols, ", ") + `) VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for j := range t.cols {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("$" + strconv.Itoa(i*len(t.cols)+j+1))
		}
		b.WriteByte(')')
	}
	return b.String()
}

// copyRows writes the batch with COPY, in one transaction on one of the
// pool's connections; the conversations' keys are taken from their
// sequence first.
func (s *Store) copyRows(ctx context.Context, batch []Parked) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		pc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("connection is a %T, not pgx's", dc)
		}
		tx, err := pc.Conn().Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx)
		keys, err := conversationKeys(ctx, tx, len(batch))
		if err != nil {
			return fmt.Errorf("conversation keys: %w", err)
		}
		tables, err := loadRows(batch, keys)
		if err != nil {
			return err
		}
		for _, t := range tables {
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{t.name}, t.cols, pgx.CopyFromRows(t.rows)); err != nil {
				return fmt.Errorf("%s: %w", t.name, err)
			}
		}
		return tx.Commit(ctx)
	})
}

// conversationKeys takes n keys from the conversations' key sequence.
func conversationKeys(ctx context.Context, tx pgx.Tx, n int) ([]int64, error) {
	rows, err := tx.Query(ctx, `SELECT nextval(pg_get_serial_sequence('conversations', 'ck')) FROM generate_series(1, $1)`, n)
	if err != nil {
		return nil, err
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err == nil && len(keys) != n {
		err = fmt.Errorf("%d keys for %d conversations", len(keys), n)
	}
	return keys, err
}
