package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/kindkit/kindkit/store"
)

// PostgreSQL's writes of a cycle, each one round trip (issue 39, item 4).
// Each statement on the network is a round trip, and a write of several
// statements in a transaction was BEGIN, the statements and COMMIT: 24
// round trips a cycle (TestCycleRoundTripsPostgres). Here a write whose
// statements depend on one another's rows is one statement, its steps
// joined by data-modifying CTEs, which commits on its own; and one that
// needs its conversation's row locked first sends the lock and the
// statement together as a pgx batch, one round trip, which PostgreSQL runs
// in one implicit transaction (all or nothing, the lock held until it
// ends), each statement with a snapshot of its own taken after the ones
// before ran, so the statement after the lock sees what the lock waited
// for, as it did in two round trips. Each write here writes all it is
// asked to or nothing, so when its conditions do not hold (a busy
// conversation, a park of a group, a lease not held) the store's general
// path runs instead, in a transaction, and decides.

// onPgx runs fn on a connection of the pool as pgx has it.
func (s *Store) onPgx(ctx context.Context, fn func(*pgx.Conn) error) error {
	conn, err := s.db.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error { return fn(dc.(*stdlib.Conn).Conn()) })
}

// pgMessageArgs appends the eight parameters of m in a pgMessages insert.
func pgMessageArgs(args []any, m *store.Message) ([]any, error) {
	args, err := appendMessageArgs(args, m, "")
	if err != nil {
		return nil, err
	}
	// appendMessageArgs' second is the conversation: the source row's here.
	n := len(args)
	copy(args[n-8:], args[n-7:])
	return args[:n-1], nil
}

// pgMessages inserts n messages, parameters $first on (pgMessageArgs),
// into the conversation of the one row of CTE src (conversation_id, ck),
// none when src has none, in their order, and returns their seqs.
func pgMessages(src string, first, n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO messages (` + messageCols + `, ck)
	SELECT v.id, s.conversation_id, v.role, v.text, v.tool_calls, v.tool_call_id, v.tool_name, v.is_error, v.created_at, s.ck
	FROM ` + src + ` s, (VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		p := first + 8*i
		fmt.Fprintf(&b, "($%d::text, $%d::text, $%d::text, $%d::text, $%d::text, $%d::text, $%d::boolean, $%d::bigint, %d)",
			p, p+1, p+2, p+3, p+4, p+5, p+6, p+7, i)
	}
	b.WriteString(`) v (id, role, text, tool_calls, tool_call_id, tool_name, is_error, created_at, n) ORDER BY v.n RETURNING seq`)
	return b.String()
}

// withMessages is the CTE m of pgMessages, for n > 0, with its leading
// comma; and the expression of the seqs it added, in order.
func withMessages(src string, first, n int) (cte, seqs string) {
	if n == 0 {
		return "", `'{}'::bigint[]`
	}
	return `, m AS (` + pgMessages(src, first, n) + `)`, `ARRAY(SELECT seq FROM m ORDER BY seq)`
}

// setSeqList sets the Seq of msgs, in order, to seqs.
func setSeqList(msgs []*store.Message, seqs []int64) error {
	if len(seqs) != len(msgs) {
		return fmt.Errorf("sqlstore: %d seqs for %d messages", len(seqs), len(msgs))
	}
	for i, m := range msgs {
		m.Seq = seqs[i]
	}
	return nil
}

// pgFew makes, once, the statement of each number of messages that the
// fast writes take (as insertFew, fewer than len(insertFew)).
func pgFew(query func(n int) string) (qs [len(insertFew)]string) {
	for n := range qs {
		qs[n] = query(n)
	}
	return qs
}

// createWithSession inserts a conversation ($1 to $5: id, owner, supports,
// model_pos, created_at) and its one session ($6 to $13: id and the
// session's columns after conversation_id), with the conversation's key.
const createWithSession = `WITH c AS (INSERT INTO conversations (id, owner, supports, model_pos, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING ck)
	INSERT INTO sessions (id, ` + sessionCols + `, ck) SELECT $6, $1, $7, $8, $9, $10, $11, $12, $13, ck FROM c`

func (s *Store) pgCreateWithSession(ctx context.Context, args []any, x *store.Session) error {
	args = append(args, x.ID, store.Text(x.AgentID), store.Text(x.AgentName), store.Text(x.UserName), store.Text(x.ContactEmail),
		store.Text(x.ContactPhone), x.UserParticipantID, x.AgentParticipantID)
	return s.onPgx(ctx, func(c *pgx.Conn) error {
		_, err := c.Exec(ctx, createWithSession, args...)
		return err
	})
}

// lockConversation locks conversation $1's row, so that the writes of a
// conversation that must see each other queue up.
const lockConversation = `SELECT 1 FROM conversations WHERE id = $1 FOR UPDATE`

// turnStarts is a StartTurn statement (startTurn or startFirstTurn, with
// its parameters up to $last) that, when it adds the message, also saves
// the turn's record ($last+1 to $last+6: id, session, turn, lease owner,
// lease end, created), and returns the message's seq.
func turnStarts(insert string, last int) string {
	p := func(i int) string { return fmt.Sprintf("$%d", last+i) }
	return `WITH m AS (` + insert + ` RETURNING seq, ck),
	r AS (INSERT INTO parks (` + parkCols + `, ck) SELECT ` + p(1) + `, 'turn', $2, ` + p(2) + `, '', NULL, '', '{}', NULL, 'running', ` +
		p(3) + `, TRUE, ` + p(4) + `, ` + p(5) + `, ` + p(6) + `, NULL, NULL, '', '', ck FROM m)
	SELECT seq FROM m`
}

var turnStartsQuery = map[string]string{
	startTurn:      turnStarts(startTurn, 9),
	startFirstTurn: turnStarts(startFirstTurn, 11),
}

// pgStartTurn sends the conversation's lock and the statement that adds
// the message and the record, in one round trip; false when it added
// nothing (busy, or no such conversation).
func (s *Store) pgStartTurn(ctx context.Context, m *store.Message, query string, args []any) (bool, error) {
	var b pgx.Batch
	b.Queue(lockConversation, m.ConversationID)
	inserted := false
	b.Queue(turnStartsQuery[query], args...).QueryRow(func(r pgx.Row) error {
		err := r.Scan(&m.Seq)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		inserted = err == nil
		return err
	})
	err := s.onPgx(ctx, func(c *pgx.Conn) error { return c.SendBatch(ctx, &b).Close() })
	return inserted, err
}

// parkSaved saves the pending park $1 to $13 (insertPark's arguments) in
// place of lease $14 (owner $15) of its conversation: the turn's record
// becomes the park (release), or the resumed park stops being owed and
// the park is inserted. The conversation's pending parks are replaced
// first, and the messages ($16 on) appended; nothing is written when the
// lease is not held. Its row: the replaced ids, the first saved first,
// and the messages' seqs.
func parkSaved(n int) string {
	cte, seqs := withMessages("src", 16, n)
	return `WITH b AS (` + recordBecomesPark + ` RETURNING conversation_id, ck),
	o AS (UPDATE parks SET owed = FALSE WHERE id = $14 AND owed AND lease_owner = $15 AND type <> 'turn' AND conversation_id = $3
		RETURNING conversation_id, ck),
	src AS (SELECT conversation_id, ck FROM b UNION ALL SELECT conversation_id, ck FROM o),
	r AS (UPDATE parks SET state = 'replaced' WHERE ck = (SELECT ck FROM src) AND state = 'pending' RETURNING id, created_at),
	i AS (INSERT INTO parks (` + parkCols + `, ck) SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', $10, FALSE, '', NULL, $11, NULL, NULL, $12, $13, ck FROM o)` +
		cte + `
	SELECT ARRAY(SELECT id FROM r ORDER BY created_at, id), ` + seqs + ` FROM src`
}

var parkSavedQuery = pgFew(parkSaved)

// pgSavePark saves one park from lease from, with msgs, in one round
// trip after the conversation's lock; false when it wrote nothing (the
// lease is not held as a turn's record or a resumed park of the
// conversation).
func (s *Store) pgSavePark(ctx context.Context, args []any, from store.Lease, msgs []*store.Message) (replaced []string, saved bool, err error) {
	args = append(args[:len(args):len(args)], from.ParkID, from.Owner)
	for _, m := range msgs {
		if args, err = pgMessageArgs(args, m); err != nil {
			return nil, false, err
		}
	}
	var b pgx.Batch
	b.Queue(lockConversation, args[2])
	var seqs []int64
	b.Queue(parkSavedQuery[len(msgs)], args...).QueryRow(func(r pgx.Row) error {
		err := r.Scan(&replaced, &seqs)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		saved = err == nil
		return err
	})
	if err := s.onPgx(ctx, func(c *pgx.Conn) error { return c.SendBatch(ctx, &b).Close() }); err != nil {
		return nil, false, err
	}
	if !saved {
		return nil, false, nil
	}
	return replaced, true, setSeqList(msgs, seqs)
}

// parkTaken is takePark (a park alone) with the answer's messages ($9 on)
// appended to its conversation when it took the park. Its row: the park
// as taken and the messages' seqs.
func parkTaken(n int) string {
	cte, seqs := withMessages("p", 9, n)
	return `WITH p AS (` + takePark + `, ck)` + cte + `
	SELECT ` + parkCols + `, ` + seqs + ` FROM p`
}

var parkTakenQuery = pgFew(parkTaken)

// pgTakePark takes park id, a park alone, with a's messages, in one
// statement; sql.ErrNoRows when it is not pending or is of a group.
func (s *Store) pgTakePark(ctx context.Context, id string, a store.Answer, args []any) (*store.Park, error) {
	var err error
	for _, m := range a.Messages {
		if args, err = pgMessageArgs(args, m); err != nil {
			return nil, err
		}
	}
	var p *store.Park
	var seqs []int64
	err = s.onPgx(ctx, func(c *pgx.Conn) (err error) {
		p, err = scanPark(seqsRow{c.QueryRow(ctx, parkTakenQuery[len(a.Messages)], args...), &seqs})
		return err
	})
	if err != nil {
		return nil, err
	}
	return p, setSeqList(a.Messages, seqs)
}

// seqsRow scans a row whose last column is the seqs of the messages its
// statement added.
type seqsRow struct {
	row  pgx.Row
	seqs *[]int64
}

func (r seqsRow) Scan(dest ...any) error { return r.row.Scan(append(dest, r.seqs)...) }

// stepSaved is SaveStep's write: the owed park $1 held by $2 gets the
// turn $3 and the lease's end $4, and stays owed unless the turn is done
// ($5); a turn's record that is done goes. The model position becomes $7
// when $6, and the messages ($8 on) are appended. Nothing is written when
// the lease is not held. Its row: the messages' seqs.
func stepSaved(n int) string {
	cte, seqs := withMessages("s", 8, n)
	return `WITH u AS (UPDATE parks SET turn = $3, lease_until = $4, owed = NOT $5::boolean
		WHERE id = $1 AND owed AND lease_owner = $2 AND NOT ($5::boolean AND type = 'turn') RETURNING conversation_id, ck),
	d AS (DELETE FROM parks WHERE id = $1 AND owed AND lease_owner = $2 AND $5::boolean AND type = 'turn' RETURNING conversation_id, ck),
	s AS (SELECT conversation_id, ck FROM u UNION ALL SELECT conversation_id, ck FROM d),
	c AS (UPDATE conversations SET model_pos = $7::bigint WHERE $6::boolean AND id = (SELECT conversation_id FROM s))` + cte + `
	SELECT ` + seqs + ` FROM s`
}

var stepSavedQuery = pgFew(stepSaved)

// pgSaveStep is SaveStep in one statement.
func (s *Store) pgSaveStep(ctx context.Context, l store.Lease, st store.Step, until any) error {
	pos := 0
	if st.ModelPos != nil {
		pos = *st.ModelPos
	}
	args := []any{l.ParkID, l.Owner, string(st.Turn), until, st.Done, st.ModelPos != nil, pos}
	var err error
	for _, m := range st.Messages {
		if args, err = pgMessageArgs(args, m); err != nil {
			return err
		}
	}
	var seqs []int64
	err = s.onPgx(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, stepSavedQuery[len(st.Messages)], args...).Scan(&seqs)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ErrLeaseLost
	}
	if err != nil {
		return err
	}
	return setSeqList(st.Messages, seqs)
}
