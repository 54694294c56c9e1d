// Package sqlstore is the store.Store on a SQL database: SQLite through
// modernc.org/sqlite (pure Go, one file, the embedded default) or PostgreSQL
// through github.com/jackc/pgx/v5 (several server processes sharing one
// database).
//
//	s, err := sqlstore.Open(ctx, "sqlite:./kindkit.db")
//	s, err := sqlstore.Open(ctx, "postgres://kindkit@db.internal/kindkit")
//
// Open applies the embedded schema migrations (migrations/<dialect>/NNNN_*.sql)
// that the database lacks, in one transaction, and records them in
// schema_migrations; a database made by an older kindkit is upgraded, never
// dropped, and one made by a newer kindkit is refused.
//
// Every statement works for both dialects; they differ in the schema, the
// row lock SavePark takes, the error codes, and PostgreSQL's own form of
// the writes of a cycle, each one round trip (pgwrites.go). TakePark is one
// conditional UPDATE … RETURNING, so of concurrent takes of a park, in one
// process or in many sharing a PostgreSQL database, exactly one succeeds.
//
// Times are stored as unix nanoseconds (UTC) and come back in UTC; the zero
// time is stored as NULL. Times outside the years 1678–2262 are refused.
package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/kindkit/kindkit/store"
)

type dialect int

const (
	dialectSQLite dialect = iota
	dialectPostgres
)

func (d dialect) String() string {
	if d == dialectPostgres {
		return "postgres"
	}
	return "sqlite"
}

// Store is safe for concurrent use.
type Store struct {
	dialect dialect
	db      *pool         // writes; on PostgreSQL everything
	rdb     *pool         // reads: db, or on a SQLite file a pool of read-only connections
	commits *committer    // SQLite: the group commit every write goes through
	ckpt    *checkpointer // SQLite file: the WAL checkpoints, off the write path
	notes   *notifier     // PostgreSQL: the fan-out between processes

	outbox   atomic.Pointer[[]string] // the outbox's consumers (outbox.go); nil: none
	outboxMu sync.Mutex               // orders changes to outbox
}

var _ store.Store = (*Store)(nil)

// config holds what tests vary; Open uses the zero value.
type config struct {
	migrations fs.FS // nil: the embedded migrations
	upTo       int   // apply migrations up to this version only; 0: all
	readers    int   // SQLite: read connections beside the writer; 0: defaultReaders, -1: none
	checkpoint int   // SQLite file: writes between checkpoints; 0: checkpointEvery
	walLimit   int   // SQLite file: WAL frames before the committer catches up; 0: walLimit
	// checkpointed, when set, hears each checkpoint's result (tests), from
	// the checkpointer or the committer.
	checkpointed func(walFrames, copied int, err error)
	// tracer, when set, hears each statement sent to PostgreSQL (tests).
	tracer pgx.QueryTracer
}

// defaultReaders is the size of a SQLite file's read pool. WAL lets readers
// run beside the one writer; see BenchmarkParallelSQLite.
const defaultReaders = 4

// Open opens the store named by dsn and brings its schema up to date.
//
//	sqlite:PATH           a SQLite file, created when missing (sqlite:./kindkit.db);
//	                      sqlite::memory: is a private in-memory database;
//	                      PATH?cache=2000KiB&read_cache=2000KiB&mmap=0 are the
//	                      defaults of the writer's page cache, each reader's,
//	                      and the memory map of the file (docs/data.md says how
//	                      to size them for a server)
//	postgres://…          a PostgreSQL database (postgresql:// too), in pgx's URL
//	                      form; pool_max_conns=N sets the pool size (default
//	                      the larger of 4 and the number of CPUs)
//
// SQLite runs in WAL mode with synchronous=NORMAL, a busy timeout and foreign
// keys on; all writes go through one connection, so they never meet
// SQLITE_BUSY inside one process. The WAL is checkpointed by a connection of
// its own, not by the commit that fills it.
func Open(ctx context.Context, dsn string) (*Store, error) {
	return open(ctx, dsn, config{})
}

func open(ctx context.Context, dsn string, cfg config) (*Store, error) {
	var (
		s   *Store
		err error
	)
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		s, err = openSQLite(strings.TrimPrefix(dsn, "sqlite:"), cfg)
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		s, err = openPostgres(dsn, cfg.tracer)
	default:
		scheme, _, _ := strings.Cut(dsn, ":")
		return nil, fmt.Errorf("sqlstore: open: unknown data source %q: want sqlite:PATH or postgres://…", scheme)
	}
	if err != nil {
		return nil, err
	}
	if err := s.ping(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlstore: open %s: %w", s.dialect, err)
	}
	fsys := cfg.migrations
	if fsys == nil {
		fsys = embedded
	}
	if err := s.migrate(ctx, fsys, cfg.upTo); err != nil {
		s.Close()
		return nil, err
	}
	if s.ckpt != nil {
		// A WAL left behind (a process killed, or another one still
		// open on the file) is copied into the file now, before any
		// traffic: else every read looks its pages up in the WAL's
		// index, and the first checkpoint copies it all in the middle
		// of the traffic. A WAL of a 3 GB fill made the p99 of a resume
		// 15 times its figure at a thousand waiting asks (issue 39).
		s.ckpt.checkpoint()
	}
	return s, nil
}

// ping opens the writer's connection. Processes that open one fresh
// SQLite file at once race to turn it into WAL mode, and the loser's
// journal_mode pragma can fail with SQLITE_BUSY at once, busy timeout or
// not (TestMigrateConcurrent/sqlite failed so in 2 runs of 150): such an open
// is tried again, for as long as the busy timeout.
func (s *Store) ping(ctx context.Context) error {
	wait := 5 * time.Millisecond
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := s.db.PingContext(ctx)
		var se *sqlite.Error
		if s.dialect != dialectSQLite || !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

const sqliteParams = "_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"

func openSQLite(path string, cfg config) (*Store, error) {
	path, mem, err := sqliteMemoryParams(path)
	if err != nil {
		return nil, err
	}
	if path == "" {
		return nil, errors.New("sqlstore: open sqlite: empty path (want sqlite:PATH)")
	}
	memory := path == ":memory:"
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&" // the caller's own driver parameters come first
	}
	params := sqliteParams
	if !memory {
		params += "&_pragma=journal_mode(WAL)"
	}
	// The writer never checkpoints: SQLite's automatic checkpoint runs
	// inside the commit that crosses 1,000 WAL frames, and that write's
	// caller waited for it (half the p99 of a cycle at c=1).
	writer := params
	if !memory {
		writer += "&_pragma=wal_autocheckpoint(0)" + mem.pragmas(mem.cache)
	}
	w, err := sqlite.NewConnector(path + sep + writer + "&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("sqlstore: open sqlite: %w", err)
	}
	s := &Store{dialect: dialectSQLite, db: sqlDB(w, 1)}
	s.rdb = s.db
	if !memory {
		c, err := sqlite.NewConnector(path + sep + params)
		if err != nil {
			s.db.Close()
			return nil, fmt.Errorf("sqlstore: open sqlite: %w", err)
		}
		s.ckpt = newCheckpointer(sqlDB(c, 1), cmp.Or(cfg.walLimit, walLimit), cfg.checkpointed)
	}
	s.commits = newCommitter(s.db, cmp.Or(cfg.checkpoint, checkpointEvery), s.ckpt)
	n := cfg.readers
	if n == 0 {
		n = defaultReaders
	}
	if !memory && n > 0 {
		r, err := sqlite.NewConnector(path + sep + params + mem.pragmas(mem.readCache) + "&_pragma=query_only(1)")
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("sqlstore: open sqlite: %w", err)
		}
		s.rdb = sqlDB(r, n)
	}
	return s, nil
}

// sqlDB is a pool of at most n connections that are kept open: a SQLite
// connection is cheap to keep and dear to open (it parses the schema), and
// an in-memory database lives only as long as its connection.
func sqlDB(c driver.Connector, n int) *pool {
	db := sql.OpenDB(c)
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	return newPool(db, true)
}

func openPostgres(dsn string, tracer pgx.QueryTracer) (*Store, error) {
	n := max(4, runtime.NumCPU())
	if u, err := url.Parse(dsn); err == nil && u.Query().Has("pool_max_conns") {
		q := u.Query()
		v, err := strconv.Atoi(q.Get("pool_max_conns"))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("sqlstore: open postgres: bad pool_max_conns %q", q.Get("pool_max_conns"))
		}
		n = v
		q.Del("pool_max_conns")
		u.RawQuery = q.Encode()
		dsn = u.String()
	}
	pc, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: open postgres: %w", err)
	}
	pc.Tracer = tracer
	db := stdlib.OpenDB(*pc)
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	db.SetConnMaxIdleTime(5 * time.Minute)
	p := newPool(db, false) // pgx caches the statements
	s := &Store{dialect: dialectPostgres, db: p, rdb: p}
	s.notes = &notifier{s: s, cfg: pc}
	return s, nil
}

// Ping runs a query on the writer's connection and on the readers'.
func (s *Store) Ping(ctx context.Context) error {
	for _, p := range []*pool{s.db, s.rdb} {
		var one int
		if err := p.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
			return s.wrap("ping", err)
		}
	}
	return nil
}

// Close closes the database connections.
func (s *Store) Close() error {
	if s.commits != nil {
		s.commits.close()
	}
	var errs []error
	if s.ckpt != nil {
		errs = append(errs, s.ckpt.close())
	}
	if s.notes != nil {
		s.notes.close()
	}
	if s.rdb != s.db {
		errs = append(errs, s.rdb.Close())
	}
	errs = append(errs, s.db.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sqlstore: close: %w", err)
	}
	return nil
}

// wrap turns err into "sqlstore: what: err", with a missing row or a
// missing conversation as store.ErrNotFound.
func (s *Store) wrap(what string, err error) error {
	if errors.Is(err, sql.ErrNoRows) || s.isMissingConversation(err) {
		err = store.ErrNotFound
	}
	return fmt.Errorf("sqlstore: %s: %w", what, err)
}

// isMissingConversation says whether err refused a row for a conversation
// that does not exist: its key (convKey) was NULL in a column that is NOT
// NULL, or, on SQLite, its foreign key failed. PostgreSQL's rows have no
// foreign key since migration 13: the key is their check.
func (s *Store) isMissingConversation(err error) bool {
	if s.dialect == dialectPostgres {
		var pe *pgconn.PgError
		return errors.As(err, &pe) && (pe.Code == "23503" || pe.Code == "23502" && pe.ColumnName == "ck")
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	return se.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY ||
		se.Code() == sqlite3.SQLITE_CONSTRAINT_NOTNULL && strings.Contains(se.Error(), ".ck (") // "…: NOT NULL constraint failed: parks.ck (1299)"
}

func notFound(what string) error { return fmt.Errorf("sqlstore: %s: %w", what, store.ErrNotFound) }

// nanos is t as a column value: unix nanoseconds, or NULL for the zero time.
func nanos(t time.Time) (any, error) {
	if t.IsZero() {
		return nil, nil
	}
	n := t.UnixNano()
	if !time.Unix(0, n).Equal(t) {
		return nil, fmt.Errorf("time %s out of range", t)
	}
	return n, nil
}

func fromNanos(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.Unix(0, n.Int64).UTC()
}

// jsonText is v as a JSON text column, NULL when v is nil.
func jsonText[T any](v []T) (any, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	return string(b), err
}

func fromJSONText[T any](s sql.NullString) ([]T, error) {
	if !s.Valid {
		return nil, nil
	}
	var v []T
	err := json.Unmarshal([]byte(s.String), &v)
	return v, err
}

// CreateConversation inserts the conversation and its sessions in one
// transaction (on SQLite, one write of the group commit).
func (s *Store) CreateConversation(ctx context.Context, c *store.Conversation, sessions ...*store.Session) error {
	supports, err := jsonText(c.Supports)
	if err != nil {
		return s.wrap("create conversation", err)
	}
	created, err := nanos(c.CreatedAt)
	if err != nil {
		return s.wrap("create conversation", err)
	}
	if s.dialect == dialectPostgres && len(sessions) == 1 {
		err := s.pgCreateWithSession(ctx, []any{c.ID, store.Text(c.Owner), supports, c.ModelPos, created}, sessions[0])
		if err != nil {
			return s.wrap("create conversation", err)
		}
		return nil
	}
	err = s.write(ctx, len(sessions) > 0, func(ex executor) error {
		if _, err := ex.ExecContext(ctx, s.insertConversation(),
			c.ID, store.Text(c.Owner), supports, c.ModelPos, created); err != nil {
			return err
		}
		for _, x := range sessions {
			if err := insertSession(ctx, ex, c.ID, x); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return s.wrap("create conversation", err)
	}
	return nil
}

// insertConversation inserts a conversation ($1 to $5: id, owner,
// supports, model_pos, created_at) with its key: on PostgreSQL from the
// key's sequence, on SQLite one more than the largest (SQLite has one
// writer, so no two conversations get the same).
func (s *Store) insertConversation() string {
	const q = `INSERT INTO conversations (id, owner, supports, model_pos, created_at`
	if s.dialect == dialectPostgres {
		return q + `) VALUES ($1, $2, $3, $4, $5)`
	}
	return q + `, ck) VALUES ($1, $2, $3, $4, $5, (` + lastConversationKey + `) + 1)`
}

// lastConversationKey is the largest conversation key on SQLite, 0 when
// there is none: a new conversation takes the next.
const lastConversationKey = `SELECT COALESCE(MAX(ck), 0) FROM conversations`

// convKey is the key (ck) of the conversation whose id is parameter $n.
// Every index on a conversation's rows begins with it rather than with the
// id (migration 7): keys come in the order conversations were made, so the
// rows of the live conversations share the indexes' last pages, where
// random ids put each on a page of its own. A conversation that does not
// exist has none (NULL), and the NOT NULL on every table's ck refuses a
// row for it (isMissingConversation): on PostgreSQL that is the check
// (its foreign keys locked the conversation's row, and so wrote its page,
// on every insert: migration 13); on SQLite the foreign key is there too.
func convKey(n int) string {
	return `(SELECT ck FROM conversations WHERE id = $` + strconv.Itoa(n) + `)`
}

// The statements that find or add a conversation's rows by its key.
var (
	messageSeq = `SELECT seq FROM messages WHERE ck = ` + convKey(1) + ` AND id = $2`
	// replacePending replaces the first pending park: a conversation has
	// one, or the parks of one group (SaveParks), which it replaces one
	// by one. The state is checked again on the row itself, so a take
	// that won a race is seen.
	replacePending = `UPDATE parks SET state = $2 WHERE id = (SELECT id FROM parks WHERE ck = ` + convKey(1) +
		` AND state = 'pending' ORDER BY created_at, id LIMIT 1) AND state = 'pending' RETURNING `
	// replacePendingID returns what the loop needs, where no consumer
	// needs the whole park: scanning one costs a cycle 20 allocations
	// even when no row comes.
	replacePendingID   = replacePending + `id, park_group`
	replacePendingPark = replacePending + parkCols
	insertPark         = `INSERT INTO parks (` + parkCols + `, ck) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', $10, FALSE, '', NULL, $11, NULL, NULL, $12, $13, ` + convKey(3) + `)`
	pendingParks       = `SELECT ` + parkCols + ` FROM parks WHERE ck = ` + convKey(1) + ` AND state = 'pending' ORDER BY created_at, id`
	pendingPark        = pendingParks + ` LIMIT 1`
	// owedTurn finds the conversation's parks by its key at the start of
	// an index, as startTurn does.
	owedTurn           = `SELECT ` + parkCols + ` FROM parks WHERE ck = ` + convKey(1) + ` AND owed LIMIT 1`
	messagesPage       = `SELECT seq, id, role, text, tool_calls, tool_call_id, tool_name, is_error, created_at FROM messages WHERE ck = ` + convKey(1) + ` AND seq < $2`
	insertSessionQuery = `INSERT INTO sessions (id, ` + sessionCols + `, ck) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, ` + convKey(2) + `)`
)

func (s *Store) Conversation(ctx context.Context, id string) (*store.Conversation, error) {
	c := store.Conversation{ID: id}
	var (
		supports sql.NullString
		created  sql.NullInt64
	)
	err := s.rdb.QueryRowContext(ctx, `SELECT owner, supports, model_pos, created_at FROM conversations WHERE id = $1`, id).
		Scan(&c.Owner, &supports, &c.ModelPos, &created)
	if err != nil {
		return nil, s.wrap("get conversation", err)
	}
	if c.Supports, err = fromJSONText[string](supports); err != nil {
		return nil, s.wrap("get conversation", err)
	}
	c.CreatedAt = fromNanos(created)
	return &c, nil
}

func (s *Store) SetSupports(ctx context.Context, id string, supports []string) error {
	v, err := jsonText(supports)
	if err != nil {
		return s.wrap("set supports", err)
	}
	return s.update(ctx, "set supports", `UPDATE conversations SET supports = $2 WHERE id = $1`, id, v)
}

func (s *Store) SetModelPos(ctx context.Context, id string, pos int) error {
	return s.update(ctx, "set model position", `UPDATE conversations SET model_pos = $2 WHERE id = $1`, id, pos)
}

// ListConversations computes each summary from the messages: the list is
// read rarely, while messages are appended on every turn, so it is not
// kept up to date on the write path.
func (s *Store) ListConversations(ctx context.Context, f store.ConversationFilter, limit int) ([]store.ConversationSummary, error) {
	if f.IDs != nil && len(f.IDs) == 0 {
		return nil, nil
	}
	args := []any{string(store.RoleUser), string(store.RoleReply), max(limit, 0)}
	var where strings.Builder
	if f.IDs == nil {
		args = append(args, f.Owner)
		where.WriteString(`c.owner = $4`)
	} else {
		where.WriteString(`c.id IN (`)
		for i, id := range f.IDs {
			if i > 0 {
				where.WriteString(", ")
			}
			args = append(args, id)
			where.WriteString("$" + strconv.Itoa(len(args)))
		}
		where.WriteString(`)`)
	}
	// The outer query orders by the computed time; conversations with no
	// time at all (NULL) come last in both dialects.
	q := `SELECT id, title, updated, n FROM (
	SELECT c.id,
		COALESCE((SELECT m.text FROM messages m WHERE m.ck = c.ck AND m.role = $1 ORDER BY m.seq LIMIT 1), '') AS title,
		COALESCE((SELECT MAX(m.created_at) FROM messages m WHERE m.ck = c.ck), c.created_at) AS updated,
		(SELECT COUNT(*) FROM messages m WHERE m.ck = c.ck AND m.role IN ($1, $2)) AS n
	FROM conversations c WHERE ` + where.String() + `
) t ORDER BY updated IS NULL, updated DESC, id LIMIT $3`
	query := s.rdb.QueryContext
	if f.IDs != nil {
		// The text varies with the number of ids: not worth a prepared
		// statement that the pool would keep for ever.
		query = s.rdb.DB.QueryContext
	}
	rows, err := query(ctx, q, args...)
	if err != nil {
		return nil, s.wrap("list conversations", err)
	}
	defer rows.Close()
	var out []store.ConversationSummary
	for rows.Next() {
		var (
			sum     store.ConversationSummary
			updated sql.NullInt64
		)
		if err := rows.Scan(&sum.ID, &sum.Title, &updated, &sum.MessageCount); err != nil {
			return nil, s.wrap("list conversations", err)
		}
		sum.UpdatedAt = fromNanos(updated)
		out = append(out, sum)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("list conversations", err)
	}
	return out, nil
}

// write runs fn as one atomic unit of writes: on SQLite through the group
// commit, on PostgreSQL in a transaction of its own when atomic (several
// statements) and on the pool otherwise.
func (s *Store) write(ctx context.Context, atomic bool, fn func(executor) error) error {
	if s.commits != nil {
		return s.commits.run(ctx, fn)
	}
	if !atomic {
		return fn(sqlExecutor{s.db})
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(sqlExecutor{tx}); err != nil {
		return err
	}
	return tx.Commit()
}

// exec runs one write statement.
func (s *Store) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := s.write(ctx, false, func(ex executor) (err error) {
		res, err = ex.ExecContext(ctx, query, args...)
		return err
	})
	return res, err
}

// update runs a statement that must change one row.
func (s *Store) update(ctx context.Context, what, query string, args ...any) error {
	res, err := s.exec(ctx, query, args...)
	if err != nil {
		return s.wrap(what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return s.wrap(what, err)
	}
	if n == 0 {
		return notFound(what)
	}
	return nil
}

const sessionCols = `conversation_id, agent_id, agent_name, user_name, contact_email, contact_phone, user_participant_id, agent_participant_id`

func (s *Store) CreateSession(ctx context.Context, x *store.Session) error {
	err := s.write(ctx, false, func(ex executor) error { return insertSession(ctx, ex, x.ConversationID, x) })
	if err != nil {
		return s.wrap("create session", err)
	}
	return nil
}

// insertSession inserts x as a session of conversation conv.
func insertSession(ctx context.Context, ex executor, conv string, x *store.Session) error {
	_, err := ex.ExecContext(ctx, insertSessionQuery,
		x.ID, conv, store.Text(x.AgentID), store.Text(x.AgentName), store.Text(x.UserName), store.Text(x.ContactEmail), store.Text(x.ContactPhone),
		x.UserParticipantID, x.AgentParticipantID)
	return err
}

func (s *Store) Session(ctx context.Context, id string) (*store.Session, error) {
	x := store.Session{ID: id}
	err := s.rdb.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = $1`, id).
		Scan(&x.ConversationID, &x.AgentID, &x.AgentName, &x.UserName, &x.ContactEmail, &x.ContactPhone, &x.UserParticipantID, &x.AgentParticipantID)
	if err != nil {
		return nil, s.wrap("get session", err)
	}
	return &x, nil
}

func (s *Store) SetContact(ctx context.Context, id, name, email, phone string) error {
	return s.update(ctx, "set contact", `UPDATE sessions SET
		user_name = COALESCE(NULLIF($2, ''), user_name),
		contact_email = COALESCE(NULLIF($3, ''), contact_email),
		contact_phone = COALESCE(NULLIF($4, ''), contact_phone)
		WHERE id = $1`, id, store.Text(name), store.Text(email), store.Text(phone))
}

const (
	messageCols = `id, conversation_id, role, text, tool_calls, tool_call_id, tool_name, is_error, created_at`
	insertRows  = 100 // messages in one INSERT; 9 parameters each
)

// insertFew are the statements that insert 1 to 8 messages, made once: a
// turn's step stores a few, and building the text anew for each was five
// allocations a cycle.
var insertFew = func() (qs [9]string) {
	for n := 1; n < len(qs); n++ {
		qs[n] = insertMessagesQuery(n)
	}
	return qs
}()

func insertMessagesQuery(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO messages (` + messageCols + `, ck) VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for j := range 9 {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(i*9 + j + 1))
		}
		b.WriteString(", " + convKey(i*9+2) + ")")
	}
	return b.String()
}

// AppendMessages appends msgs in one statement (in one transaction when
// there are many), so they are stored all or none, in order.
func (s *Store) AppendMessages(ctx context.Context, msgs ...*store.Message) error {
	return s.write(ctx, len(msgs) > insertRows, func(ex executor) error { return s.insertAll(ctx, ex, "", msgs) })
}

// insertAll appends msgs with ex, insertRows to a statement. conv, when
// set, is the conversation they go to (a park's), whatever they say.
func (s *Store) insertAll(ctx context.Context, ex executor, conv string, msgs []*store.Message) error {
	for i := 0; i < len(msgs); i += insertRows {
		if err := s.insertMessages(ctx, ex, conv, msgs[i:min(i+insertRows, len(msgs))]); err != nil {
			return err
		}
	}
	return nil
}

// appendMessageArgs appends the nine parameters of m, a message of
// conversation conv, in an insertMessagesQuery.
func appendMessageArgs(args []any, m *store.Message, conv string) ([]any, error) {
	calls, err := jsonText(m.ToolCalls)
	if err != nil {
		return nil, err
	}
	created, err := nanos(m.CreatedAt)
	if err != nil {
		return nil, err
	}
	return append(args, m.ID, conv, string(m.Role), store.Text(m.Text), calls, store.Text(m.ToolCallID), store.Text(m.ToolName), m.IsError, created), nil
}

func (s *Store) insertMessages(ctx context.Context, db executor, conv string, msgs []*store.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	args := make([]any, 0, 9*len(msgs))
	for _, m := range msgs {
		to := m.ConversationID
		if conv != "" {
			to = conv
		}
		var err error
		if args, err = appendMessageArgs(args, m, to); err != nil {
			return s.wrap("append messages", err)
		}
	}
	var query string
	if len(msgs) < len(insertFew) {
		query = insertFew[len(msgs)]
	} else {
		query = insertMessagesQuery(len(msgs))
	}
	if s.dialect == dialectPostgres {
		if err := s.insertReturning(ctx, db, query, args, msgs); err != nil {
			return s.wrap("append messages", err)
		}
		return nil
	}
	res, err := db.ExecContext(ctx, query, args...)
	if err == nil {
		err = setSeqs(res, msgs)
	}
	if err != nil {
		return s.wrap("append messages", err)
	}
	return nil
}

// setSeqs sets the Seq of msgs, the rows one SQLite INSERT added: their
// rowids follow one another (each is one more than the largest, and
// SQLite has one writer), the last one the result's.
func setSeqs(res sql.Result, msgs []*store.Message) error {
	last, err := res.LastInsertId()
	if err != nil {
		return err
	}
	for i, m := range msgs {
		m.Seq = last - int64(len(msgs)-1-i)
	}
	return nil
}

// insertReturning runs a PostgreSQL INSERT of msgs and sets their Seq.
// Their seqs increase in the order of the rows, but other writers' may
// fall between them: each is read back.
func (s *Store) insertReturning(ctx context.Context, db executor, query string, args []any, msgs []*store.Message) error {
	n := len(msgs)
	if n == 1 {
		return db.QueryRowContext(ctx, returningFew[1], args...).Scan(&msgs[0].Seq)
	}
	if n < len(returningFew) {
		query = returningFew[n]
	} else {
		query = returningSeqs(query)
	}
	var seqs string
	if err := db.QueryRowContext(ctx, query, args...).Scan(&seqs); err != nil {
		return err
	}
	for i, f := range strings.Split(seqs, ",") {
		seq, err := strconv.ParseInt(f, 10, 64)
		if err != nil || i >= len(msgs) {
			return fmt.Errorf("sqlstore: the seqs of inserted messages: %q", seqs)
		}
		msgs[i].Seq = seq
	}
	return nil
}

// returningFew are insertFew's statements as PostgreSQL runs them, with
// the seqs they add returned, made once.
var returningFew = func() (qs [len(insertFew)]string) {
	qs[1] = insertFew[1] + ` RETURNING seq`
	for n := 2; n < len(qs); n++ {
		qs[n] = returningSeqs(insertFew[n])
	}
	return qs
}()

// returningSeqs is insert, an INSERT into messages, as a query whose one
// row is the seqs of the rows it added, in order, comma separated.
func returningSeqs(insert string) string {
	return `WITH ins AS (` + insert + ` RETURNING seq) SELECT string_agg(seq::text, ',' ORDER BY seq) FROM ins`
}

// startTurn inserts message $1 to $9 (appendMessageArgs) when its
// conversation has no park that is owed a reply (a turn runs, or is to be
// taken over) and none that waits for its answer. The conversation's parks
// are found by its key at the start of an index; the one that waits, by
// the partial index of pending parks.
const startTurn = `INSERT INTO messages (` + messageCols + `, ck)
	SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, c.ck FROM conversations c
	WHERE c.id = $2 AND NOT EXISTS (SELECT 1 FROM parks p WHERE p.ck = c.ck AND p.owed)
		AND NOT EXISTS (SELECT 1 FROM parks p WHERE p.ck = c.ck AND p.state = 'pending')`

// startFirstTurn inserts message $1 to $9 when its conversation has model
// position $10 and supports $11 (NULL: none; a JSON array is never empty
// text) and neither messages nor a pending park (so no park owed a reply
// either: a turn starts with a message).
const startFirstTurn = `INSERT INTO messages (` + messageCols + `, ck)
	SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, c.ck FROM conversations c
	WHERE c.id = $2 AND c.model_pos = $10 AND COALESCE(c.supports, '') = COALESCE($11, '')
		AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.ck = c.ck)
		AND NOT EXISTS (SELECT 1 FROM parks p WHERE p.ck = c.ck AND p.state = 'pending')`

// returning is startTurn and startFirstTurn as PostgreSQL runs them, with
// the message's seq returned.
var returning = map[string]string{
	startTurn:      startTurn + ` RETURNING seq`,
	startFirstTurn: startFirstTurn + ` RETURNING seq`,
}

// insertTurn saves a turn's record, owed its reply under a lease.
var insertTurn = `INSERT INTO parks (` + parkCols + `, ck) VALUES ($1, 'turn', $2, $3, '', NULL, '', '{}', NULL, 'running', $4, TRUE, $5, $6, $7, NULL, NULL, '', '', ` + convKey(2) + `)`

// errBusy rolls back a StartTurn whose conversation was busy or touched.
var errBusy = errors.New("sqlstore: the conversation is busy")

// StartTurn checks and appends the message in one statement, then saves
// the record, in one transaction. On PostgreSQL the conversation's row is
// locked first, so that two processes that start a turn of it at once
// queue up, and the second sees the first's record (its first message
// too, when both would be the first). Only when the statement finds the
// conversation busy is its waiting park read, and taken if waiting says
// so, before the statement runs again: a message that starts a turn on an
// idle conversation costs what it did.
func (s *Store) StartTurn(ctx context.Context, m *store.Message, t *store.Park, first *store.Conversation, waiting store.Waiting) ([]*store.Park, bool, error) {
	args, err := appendMessageArgs(make([]any, 0, 11), m, m.ConversationID)
	if err != nil {
		return nil, false, s.wrap("start turn", err)
	}
	query := startTurn
	if first != nil {
		supports, err := jsonText(first.Supports)
		if err != nil {
			return nil, false, s.wrap("start turn", err)
		}
		query, args = startFirstTurn, append(args, first.ModelPos, supports)
	}
	until, err := nanos(t.LeaseUntil)
	if err != nil {
		return nil, false, s.wrap("start turn", err)
	}
	created, err := nanos(t.CreatedAt)
	if err != nil {
		return nil, false, s.wrap("start turn", err)
	}
	if s.dialect == dialectPostgres {
		inserted, err := s.pgStartTurn(ctx, m, query, append(args[:len(args):len(args)], t.ID, t.SessionID, string(t.Turn), t.LeaseOwner, until, created))
		if err != nil {
			return nil, false, s.wrap("start turn", err)
		}
		if inserted {
			return nil, true, nil
		}
		if first != nil || waiting == nil {
			return nil, false, nil // the general path would refuse it too
		}
		// A card may wait: the general path asks waiting about it.
	}
	var withdrawn []*store.Park
	err = s.write(ctx, true, func(tx executor) error {
		withdrawn = nil // a group commit may run it again
		if s.dialect == dialectPostgres {
			var one int
			if err := tx.QueryRowContext(ctx, `SELECT 1 FROM conversations WHERE id = $1 FOR UPDATE`, m.ConversationID).Scan(&one); err != nil {
				return err
			}
		}
		inserted, err := s.insertMessage(ctx, tx, m, query, args...)
		if err != nil {
			return err
		}
		if !inserted {
			if first != nil || waiting == nil {
				return errBusy
			}
			if withdrawn, err = s.withdrawIn(ctx, tx, m.ConversationID, waiting); err != nil {
				return err
			}
			if inserted, err = s.insertMessage(ctx, tx, m, query, args...); err != nil {
				return err
			} else if !inserted {
				return errBusy // a turn is owed a reply as well
			}
		}
		_, err = tx.ExecContext(ctx, insertTurn, t.ID, m.ConversationID, t.SessionID, string(t.Turn), t.LeaseOwner, until, created)
		return err
	})
	switch {
	case errors.Is(err, errBusy), errors.Is(err, sql.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, s.wrap("start turn", err)
	}
	return withdrawn, true, nil
}

// insertMessage runs an INSERT … SELECT that adds message m when its
// conditions hold, and sets m's Seq when it did.
func (s *Store) insertMessage(ctx context.Context, ex executor, m *store.Message, query string, args ...any) (inserted bool, err error) {
	if s.dialect == dialectPostgres {
		err := ex.QueryRowContext(ctx, returning[query], args...).Scan(&m.Seq)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		return err == nil, err
	}
	res, err := ex.ExecContext(ctx, query, args...)
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, err
	}
	return true, setSeqs(res, []*store.Message{m})
}

// withdrawIn takes conversation conv's pending parks, the first saved
// first, inside a StartTurn's transaction, when waiting answers each;
// errBusy when no park waits (the conversation is busy with a turn) or
// waiting refuses one (the transaction, and the takes before, roll back).
func (s *Store) withdrawIn(ctx context.Context, ex executor, conv string, waiting store.Waiting) ([]*store.Park, error) {
	var withdrawn []*store.Park
	for {
		p, err := scanPark(ex.QueryRowContext(ctx, pendingPark, conv))
		if errors.Is(err, sql.ErrNoRows) && len(withdrawn) > 0 {
			return withdrawn, nil
		}
		if errors.Is(err, sql.ErrNoRows) {
			return nil, errBusy
		}
		if err != nil {
			return nil, err
		}
		a := waiting(p)
		if a == nil {
			return nil, errBusy
		}
		taken, err := s.takeIn(ctx, ex, p.ID, *a, s.consumers(), true)
		if err != nil {
			return nil, err
		}
		withdrawn = append(withdrawn, taken)
	}
}

func (s *Store) Messages(ctx context.Context, id string, roles []store.Role, before string, limit int) ([]*store.Message, bool, error) {
	cursor := int64(math.MaxInt64)
	if before != "" {
		err := s.rdb.QueryRowContext(ctx, messageSeq, id, before).Scan(&cursor)
		if err != nil {
			return nil, false, s.wrap("list messages", err)
		}
	}
	limit = max(limit, 0)
	args := make([]any, 0, 3+len(roles))
	args = append(args, id, cursor, limit+1)
	var q strings.Builder
	q.WriteString(messagesPage)
	if len(roles) > 0 {
		q.WriteString(` AND role IN (`)
		for i, r := range roles {
			if i > 0 {
				q.WriteString(", ")
			}
			args = append(args, string(r))
			q.WriteString("$" + strconv.Itoa(len(args)))
		}
		q.WriteString(`)`)
	}
	q.WriteString(` ORDER BY seq DESC LIMIT $3`)
	rows, err := s.rdb.QueryContext(ctx, q.String(), args...)
	if err != nil {
		return nil, false, s.wrap("list messages", err)
	}
	out, err := scanMessages(rows, id)
	if err != nil {
		return nil, false, s.wrap("list messages", err)
	}
	if len(out) == 0 && before == "" {
		// No messages, or no conversation?
		var one int
		if err := s.rdb.QueryRowContext(ctx, `SELECT 1 FROM conversations WHERE id = $1`, id).Scan(&one); err != nil {
			return nil, false, s.wrap("list messages", err)
		}
	}
	more := len(out) > limit
	if more {
		out = out[:limit]
	}
	return out, more, nil
}

// messagesAfter reads a conversation's messages after a seq, by the
// index on (ck, seq).
var messagesAfter = `SELECT seq, id, role, text, tool_calls, tool_call_id, tool_name, is_error, created_at FROM messages
	WHERE ck = ` + convKey(1) + ` AND seq > $2 ORDER BY seq LIMIT $3`

func (s *Store) MessagesAfter(ctx context.Context, id string, seq int64, limit int) ([]*store.Message, error) {
	rows, err := s.rdb.QueryContext(ctx, messagesAfter, id, seq, max(limit, 0))
	if err != nil {
		return nil, s.wrap("list messages after", err)
	}
	out, err := scanMessages(rows, id)
	if err != nil {
		return nil, s.wrap("list messages after", err)
	}
	return out, nil
}

// scanMessages reads rows of messagesAfter's columns, messages of
// conversation conv, and closes them.
func scanMessages(rows *sql.Rows, conv string) ([]*store.Message, error) {
	defer rows.Close()
	var out []*store.Message
	for rows.Next() {
		m := &store.Message{ConversationID: conv}
		var (
			calls   sql.NullString
			created sql.NullInt64
		)
		if err := rows.Scan(&m.Seq, &m.ID, &m.Role, &m.Text, &calls, &m.ToolCallID, &m.ToolName, &m.IsError, &created); err != nil {
			return nil, err
		}
		var err error
		if m.ToolCalls, err = fromJSONText[store.ToolCall](calls); err != nil {
			return nil, err
		}
		m.CreatedAt = fromNanos(created)
		out = append(out, m)
	}
	return out, rows.Err()
}

const parkCols = `id, type, conversation_id, session_id, kind, spec, reason, tool_call, deadline, state, turn, owed, lease_owner, lease_until, created_at, outcome, record, park_group, addressee`

// SavePark is SaveParks with one park.
func (s *Store) SavePark(ctx context.Context, p *store.Park, from *store.Lease, msgs ...*store.Message) (string, error) {
	replaced, err := s.SaveParks(ctx, []*store.Park{p}, from, msgs...)
	if err != nil || len(replaced) == 0 {
		return "", err
	}
	return replaced[0], nil
}

// SaveParks stores ps as their conversation's pending parks, and msgs
// with them, in one transaction. The parks that were pending before become
// ParkReplaced.
func (s *Store) SaveParks(ctx context.Context, ps []*store.Park, from *store.Lease, msgs ...*store.Message) ([]string, error) {
	if len(ps) == 0 {
		return nil, s.wrap("save park", errors.New("no park to save"))
	}
	conv := ps[0].ConversationID
	args := make([][]any, len(ps))
	for i, p := range ps {
		if p.ConversationID != conv {
			return nil, s.wrap("save park", errors.New("parks saved together are of one conversation"))
		}
		var spec any
		if p.Spec != nil {
			spec = string(p.Spec)
		}
		call, err := json.Marshal(p.ToolCall)
		if err != nil {
			return nil, s.wrap("save park", err)
		}
		deadline, err := nanos(p.Deadline)
		if err != nil {
			return nil, s.wrap("save park", err)
		}
		created, err := nanos(p.CreatedAt)
		if err != nil {
			return nil, s.wrap("save park", err)
		}
		args[i] = []any{p.ID, string(p.Type), p.ConversationID, p.SessionID, p.Kind, spec, store.Text(p.Reason), string(call), deadline, string(p.Turn), created, p.Group, store.Text(p.Addressee)}
	}
	var replaced []string
	consumers := s.consumers()
	if s.dialect == dialectPostgres && len(ps) == 1 && from != nil && consumers == nil && len(msgs) < len(insertFew) {
		replaced, saved, err := s.pgSavePark(ctx, args[0], *from, msgs)
		if err != nil {
			return nil, s.wrap("save park", err)
		}
		if saved {
			return replaced, nil
		}
		// The lease is lost, or held otherwise: the general path tells.
	}
	err := s.write(ctx, true, func(tx executor) error {
		// On PostgreSQL, lock the conversation so that concurrent saves
		// queue up instead of both missing the other's parks. SQLite needs
		// no lock (it has one writer), and a conversation that does not
		// exist fails the park's foreign key, as ErrNotFound.
		if s.dialect == dialectPostgres {
			var one int
			if err := tx.QueryRowContext(ctx, `SELECT 1 FROM conversations WHERE id = $1 FOR UPDATE`, conv).Scan(&one); err != nil {
				return err
			}
		}
		replaced = nil // a group commit may run it again
		var events []*store.OutboxEvent
		for {
			var id, group string
			var err error
			if consumers == nil {
				err = tx.QueryRowContext(ctx, replacePendingID, conv, string(store.ParkReplaced)).Scan(&id, &group)
			} else {
				var old *store.Park
				if old, err = scanPark(tx.QueryRowContext(ctx, replacePendingPark, conv, string(store.ParkReplaced))); err == nil {
					id, group = old.ID, old.Group
					events = append(events, resolvedEvents(old, ps[0].CreatedAt, consumers)...)
				}
			}
			if errors.Is(err, sql.ErrNoRows) {
				break
			}
			if err != nil {
				return err
			}
			replaced = append(replaced, id)
			if group == "" {
				break // a park alone is all that was pending
			}
		}
		// The parks are saved after the pending ones were replaced: the
		// first may take the place of the turn's record, which is not
		// pending, and must not be replaced itself.
		became := false
		if from != nil {
			var err error
			if became, err = release(ctx, tx, *from, args[0]); err != nil {
				return err
			}
		}
		for i, p := range ps {
			if i > 0 || !became {
				if _, err := tx.ExecContext(ctx, insertPark, args[i]...); err != nil {
					return err
				}
			}
			if consumers != nil {
				events = append(events, parkedEvents(p, consumers)...)
			}
		}
		if err := insertEvents(ctx, tx, events); err != nil {
			return err
		}
		return s.insertAll(ctx, tx, conv, msgs)
	})
	if errors.Is(err, store.ErrLeaseLost) {
		return nil, err
	}
	if err != nil {
		return nil, s.wrap("save park", err)
	}
	return replaced, nil
}

// release ends the owed turn held by l, and says whether first (the
// insertPark arguments of the first park saved) took the place of a turn's
// record: a turn that parks owes no reply, so its record (which lives
// only while the turn is owed one) becomes the turn's first park, one
// UPDATE of its row instead of a DELETE and an INSERT. The row keeps its
// place in the table and its conversation's key, and only the indexes
// whose columns change are written: a cycle wrote 39.0 pages on SQLite
// with the DELETE (TestCycleWrites). A park that was resumed stops being
// owed. store.ErrLeaseLost when l is not held.
func release(ctx context.Context, tx executor, l store.Lease, first []any) (became bool, err error) {
	res, err := tx.ExecContext(ctx, recordBecomesPark, append(first, l.ParkID, l.Owner)...)
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil || n > 0 {
		return err == nil, err
	}
	for _, query := range []string{
		`UPDATE parks SET owed = FALSE WHERE id = $1 AND owed AND lease_owner = $2 AND type <> 'turn'`,
		// A turn's record of another conversation than its parks':
		// the engine never saves such, but if it did, the record
		// still goes and the parks are inserted.
		`DELETE FROM parks WHERE id = $1 AND owed AND lease_owner = $2 AND type = 'turn'`,
	} {
		res, err := tx.ExecContext(ctx, query, l.ParkID, l.Owner)
		if err != nil {
			return false, err
		}
		if n, err := res.RowsAffected(); err != nil || n > 0 {
			return false, err
		}
	}
	return false, store.ErrLeaseLost
}

// recordBecomesPark turns the turn's record $14, held by lease owner $15,
// into the pending park $1 to $13 (insertPark's arguments) of the same
// conversation: every column insertPark sets, set.
const recordBecomesPark = `UPDATE parks SET id = $1, type = $2, session_id = $4, kind = $5, spec = $6, reason = $7, tool_call = $8,
	deadline = $9, state = 'pending', turn = $10, owed = FALSE, lease_owner = '', lease_until = NULL, created_at = $11,
	outcome = NULL, record = NULL, park_group = $12, addressee = $13
	WHERE id = $14 AND owed AND lease_owner = $15 AND type = 'turn' AND conversation_id = $3`

func scanPark(row interface{ Scan(...any) error }) (*store.Park, error) {
	var (
		p                             store.Park
		spec, outcome, record         sql.NullString
		call, turn, typ, state        string
		deadline, leaseUntil, created sql.NullInt64
	)
	if err := row.Scan(&p.ID, &typ, &p.ConversationID, &p.SessionID, &p.Kind, &spec, &p.Reason, &call, &deadline, &state, &turn,
		&p.Owed, &p.LeaseOwner, &leaseUntil, &created, &outcome, &record, &p.Group, &p.Addressee); err != nil {
		return nil, err
	}
	p.Type, p.State = store.ParkKind(typ), store.ParkState(state)
	if spec.Valid {
		p.Spec = json.RawMessage(spec.String)
	}
	if outcome.Valid {
		p.Outcome = json.RawMessage(outcome.String)
	}
	if record.Valid {
		p.Record = json.RawMessage(record.String)
	}
	p.CreatedAt = fromNanos(created)
	if err := json.Unmarshal([]byte(call), &p.ToolCall); err != nil {
		return nil, fmt.Errorf("park %s: tool call: %w", p.ID, err)
	}
	if turn != "" {
		p.Turn = json.RawMessage(turn)
	}
	p.Deadline = fromNanos(deadline)
	p.LeaseUntil = fromNanos(leaseUntil)
	return &p, nil
}

func (s *Store) PendingParks(ctx context.Context, id string) ([]*store.Park, error) {
	ps, err := s.queryParks(ctx, pendingParks, id)
	if err != nil {
		return nil, s.wrap("get pending parks", err)
	}
	return ps, nil
}

func (s *Store) PendingPark(ctx context.Context, id string) (*store.Park, error) {
	p, err := scanPark(s.rdb.QueryRowContext(ctx, pendingPark, id))
	if err != nil {
		return nil, s.wrap("get pending park", err)
	}
	return p, nil
}

func (s *Store) OwedTurn(ctx context.Context, id string) (*store.Park, error) {
	p, err := scanPark(s.rdb.QueryRowContext(ctx, owedTurn, id))
	if err != nil {
		return nil, s.wrap("get owed turn", err)
	}
	return p, nil
}

// TakePark is one conditional statement and the answer's inserts, in one
// transaction: of concurrent takes, from any number of processes, the
// database lets exactly one change the row, and its answer is stored with
// it or not at all.
func (s *Store) TakePark(ctx context.Context, id string, a store.Answer) (*store.Park, bool, error) {
	var p *store.Park
	consumers := s.consumers()
	atomic := len(a.Messages) > 0 || consumers != nil
	var err error
	if s.dialect == dialectPostgres && consumers == nil && len(a.Messages) < len(insertFew) {
		var args []any
		if args, err = takeArgs(id, a); err == nil {
			p, err = s.pgTakePark(ctx, id, a, args)
		}
		if errors.Is(err, sql.ErrNoRows) {
			err = errGrouped // or not pending: the transaction tells
		}
	} else {
		err = s.write(ctx, atomic, func(ex executor) (err error) {
			p, err = s.takeIn(ctx, ex, id, a, consumers, atomic || s.commits != nil)
			return err
		})
	}
	if errors.Is(err, errGrouped) {
		// A park of a group: its take is several statements, in a
		// transaction.
		err = s.write(ctx, true, func(ex executor) (err error) {
			p, err = s.takeIn(ctx, ex, id, a, consumers, true)
			return err
		})
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, s.wrap("take park", err)
	}
	return p, true, nil
}

// takeIn moves pending park id to a.State and appends a's messages, and
// writes its ask.resolved events for consumers, with ex; sql.ErrNoRows
// when the park is not pending. inTx says ex is a transaction: when it is
// not, a park of a group is not taken but errGrouped returned.
func (s *Store) takeIn(ctx context.Context, ex executor, id string, a store.Answer, consumers []string, inTx bool) (*store.Park, error) {
	args, err := takeArgs(id, a)
	if err != nil {
		return nil, err
	}
	p, err := scanPark(ex.QueryRowContext(ctx, takePark, args...))
	if errors.Is(err, sql.ErrNoRows) && !inTx {
		return nil, errGrouped // or not pending: the transaction tells
	}
	if errors.Is(err, sql.ErrNoRows) {
		// id, state, turn, outcome, record, owner, until
		p, err = s.takeGrouped(ctx, ex, id, a.Lease != nil, []any{args[0], args[1], args[2], args[6], args[7], args[4], args[5]})
	}
	if err != nil {
		return nil, err
	}
	if consumers != nil {
		if err := insertEvents(ctx, ex, resolvedEvents(p, time.Now(), consumers)); err != nil {
			return nil, err
		}
	}
	return p, s.insertAll(ctx, ex, p.ConversationID, a.Messages)
}

// takeArgs are takePark's parameters.
func takeArgs(id string, a store.Answer) ([]any, error) {
	var turn any
	if a.Turn != nil {
		turn = string(a.Turn)
	}
	var owner string
	var until any
	if a.Lease != nil {
		var err error
		if until, err = nanos(a.Lease.Until); err != nil {
			return nil, err
		}
		owner = a.Lease.Owner
	}
	var outcome, record any
	if a.Outcome != nil {
		outcome = string(a.Outcome)
	}
	if a.Record != nil {
		record = string(a.Record)
	}
	return []any{id, string(a.State), turn, a.Lease != nil, owner, until, outcome, record}, nil
}

// errGrouped asks TakePark to take a park again in a transaction.
var errGrouped = errors.New("sqlstore: a park of a group")

// takePark takes a park alone: one statement, as before parks had groups.
const takePark = `UPDATE parks SET state = $2, turn = COALESCE($3, turn), owed = $4, lease_owner = $5, lease_until = $6, outcome = $7, record = $8
	WHERE id = $1 AND state = 'pending' AND park_group = '' RETURNING ` + parkCols

// takeGrouped takes pending park id of a group (sql.ErrNoRows when it is
// not pending): the take's own write, then, when owed, the lease, which
// only the take that leaves none of the group pending gets, unless one of
// the group was cancelled (its turn ended). On PostgreSQL
// the conversation is locked first (as SaveParks and StartTurn lock it,
// so the order of locks is one), so that the takes of one group queue up
// and each sees the ones before: two processes that settle the last two
// parks at once resume the turn once, never twice or not at all.
func (s *Store) takeGrouped(ctx context.Context, ex executor, id string, owed bool, args []any) (*store.Park, error) {
	if s.dialect == dialectPostgres {
		var one int
		if err := ex.QueryRowContext(ctx, `SELECT 1 FROM conversations c JOIN parks p ON p.conversation_id = c.id
			WHERE p.id = $1 AND p.state = 'pending' FOR UPDATE OF c`, id).Scan(&one); err != nil {
			return nil, err
		}
	}
	p, err := scanPark(ex.QueryRowContext(ctx, `UPDATE parks SET state = $2, turn = COALESCE($3, turn), owed = FALSE, lease_owner = '', lease_until = NULL,
		outcome = $4, record = $5 WHERE id = $1 AND state = 'pending' RETURNING `+parkCols, args[:5]...))
	if err != nil || !owed {
		return p, err
	}
	last, err := scanPark(ex.QueryRowContext(ctx, `UPDATE parks SET owed = TRUE, lease_owner = $2, lease_until = $3 WHERE id = $1
		AND NOT EXISTS (SELECT 1 FROM parks q WHERE q.ck = parks.ck AND q.state IN ('pending', 'cancelled') AND q.park_group = parks.park_group)
		RETURNING `+parkCols, id, args[5], args[6]))
	if errors.Is(err, sql.ErrNoRows) {
		return p, nil // not the group's last: the last take resumes the turn
	}
	return last, err
}

// SaveStep updates the owed park only while l holds it, then appends the
// step's messages and moves the model position, in one transaction.
func (s *Store) SaveStep(ctx context.Context, l store.Lease, st store.Step) error {
	until, err := nanos(l.Until)
	if err != nil {
		return s.wrap("save step", err)
	}
	if s.dialect == dialectPostgres && len(st.Messages) < len(insertFew) {
		err := s.pgSaveStep(ctx, l, st, until)
		if err != nil && !errors.Is(err, store.ErrLeaseLost) {
			return s.wrap("save step", err)
		}
		return err
	}
	err = s.write(ctx, true, func(tx executor) error {
		var conv, typ string
		err := tx.QueryRowContext(ctx, `UPDATE parks SET turn = $3, lease_until = $4, owed = $5
			WHERE id = $1 AND owed AND lease_owner = $2 RETURNING conversation_id, type`, l.ParkID, l.Owner, string(st.Turn), until, !st.Done).Scan(&conv, &typ)
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrLeaseLost
		}
		if err != nil {
			return err
		}
		if err := s.insertAll(ctx, tx, conv, st.Messages); err != nil {
			return err
		}
		if st.Done && typ == string(store.ParkTurn) {
			// A turn's record lives only while the turn is owed a reply.
			if _, err := tx.ExecContext(ctx, `DELETE FROM parks WHERE id = $1`, l.ParkID); err != nil {
				return err
			}
		}
		if st.ModelPos != nil {
			_, err = tx.ExecContext(ctx, `UPDATE conversations SET model_pos = $2 WHERE id = $1`, conv, *st.ModelPos)
		}
		return err
	})
	if errors.Is(err, store.ErrLeaseLost) {
		return err
	}
	if err != nil {
		return s.wrap("save step", err)
	}
	return nil
}

func (s *Store) RenewLease(ctx context.Context, l store.Lease) error {
	until, err := nanos(l.Until)
	if err != nil {
		return s.wrap("renew lease", err)
	}
	res, err := s.exec(ctx, `UPDATE parks SET lease_until = $3 WHERE id = $1 AND owed AND lease_owner = $2`, l.ParkID, l.Owner, until)
	if err != nil {
		return s.wrap("renew lease", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return s.wrap("renew lease", err)
	} else if n == 0 {
		return store.ErrLeaseLost
	}
	return nil
}

func (s *Store) OwedTurns(ctx context.Context, now time.Time, limit int) ([]*store.Park, error) {
	n, err := nanos(now)
	if err != nil {
		return nil, s.wrap("list owed turns", err)
	}
	out, err := s.queryParks(ctx, `SELECT `+parkCols+` FROM parks WHERE owed AND lease_until < $1 ORDER BY lease_until LIMIT $2`, n, max(limit, 0))
	if err != nil {
		return nil, s.wrap("list owed turns", err)
	}
	return out, nil
}

// ClaimTurn is one conditional UPDATE: of concurrent claims, one wins.
func (s *Store) ClaimTurn(ctx context.Context, l store.Lease, now time.Time) (*store.Park, bool, error) {
	until, err := nanos(l.Until)
	if err != nil {
		return nil, false, s.wrap("claim turn", err)
	}
	n, err := nanos(now)
	if err != nil {
		return nil, false, s.wrap("claim turn", err)
	}
	var p *store.Park
	err = s.write(ctx, false, func(ex executor) (err error) {
		p, err = scanPark(ex.QueryRowContext(ctx, `UPDATE parks SET lease_owner = $2, lease_until = $3
			WHERE id = $1 AND owed AND lease_until < $4 RETURNING `+parkCols, l.ParkID, l.Owner, until, n))
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, s.wrap("claim turn", err)
	}
	return p, true, nil
}

func (s *Store) queryParks(ctx context.Context, query string, args ...any) ([]*store.Park, error) {
	rows, err := s.rdb.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*store.Park
	for rows.Next() {
		p, err := scanPark(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// ExpiredParks reads the index parks_pending_due, on the same expression
// as its WHERE and ORDER BY: the first limit entries of the pending parks'
// deadlines, however many parks wait. (deadline IS NULL OR deadline < $1
// could not be one range of an index on deadline, and was a scan of the
// whole index on every tick.) A park without a deadline counts as due
// since 1970.
func (s *Store) ExpiredParks(ctx context.Context, now time.Time, limit int) ([]*store.Park, error) {
	n, err := nanos(now)
	if err != nil {
		return nil, s.wrap("list expired parks", err)
	}
	out, err := s.queryParks(ctx, expiredParks, n, max(limit, 0))
	if err != nil {
		return nil, s.wrap("list expired parks", err)
	}
	return out, nil
}

const expiredParks = `SELECT ` + parkCols + ` FROM parks WHERE state = 'pending' AND COALESCE(deadline, 0) < $1 ORDER BY COALESCE(deadline, 0) LIMIT $2`

// EndedPark finds the park by its key, and checks that it is of the
// conversation and ended with an outcome.
func (s *Store) EndedPark(ctx context.Context, conv, id string) (*store.Park, error) {
	p, err := scanPark(s.rdb.QueryRowContext(ctx, `SELECT `+parkCols+` FROM parks WHERE id = $1 AND ck = `+convKey(2)+` AND outcome IS NOT NULL`, id, conv))
	if err != nil {
		return nil, s.wrap("get ended park", err)
	}
	return p, nil
}

// EndedParks reads the index parks_conversation_created from since on.
func (s *Store) EndedParks(ctx context.Context, conversationID string, since time.Time, before string, limit int) ([]*store.Park, error) {
	n, err := nanos(since)
	if err != nil {
		return nil, s.wrap("list ended parks", err)
	}
	if n == nil {
		n = int64(0) // the zero time: from the first
	}
	out, err := s.queryParks(ctx, endedParks, conversationID, n, before, max(limit, 0))
	if err != nil {
		return nil, s.wrap("list ended parks", err)
	}
	return out, nil
}

var endedParks = `SELECT ` + parkCols + ` FROM parks WHERE ck = ` + convKey(1) + ` AND created_at >= $2 AND outcome IS NOT NULL
	AND ($3 = '' OR created_at < (SELECT created_at FROM messages WHERE ck = ` + convKey(1) + ` AND id = $3 LIMIT 1))
	ORDER BY created_at, id LIMIT $4`

// Inbox reads two indexes: parks_pending_addressee, which holds the
// addressed pending parks only, for those addressed to q.Addressees, and
// conversations_owner then parks_pending_conversation for the unaddressed
// pending parks of q.Owner's conversations. Each part is cut to the page
// before the two are merged. The number of addressees is rounded up to a
// power of two, the rest ” (which no indexed park has), so that a handful
// of statements serves every query.
func (s *Store) Inbox(ctx context.Context, q store.InboxQuery) ([]*store.Park, error) {
	if len(q.Addressees) > store.MaxInboxAddressees {
		return nil, s.wrap("inbox", fmt.Errorf("%d addressees, at most %d", len(q.Addressees), store.MaxInboxAddressees))
	}
	upTo := int64(math.MaxInt64)
	if !q.Before.IsZero() {
		n, err := nanos(q.Before)
		if err != nil {
			return nil, s.wrap("inbox", err)
		}
		upTo = n.(int64) - 1 // before it
	}
	afterDue, afterID := int64(math.MinInt64), ""
	if q.After != nil {
		afterDue, afterID = math.MaxInt64, q.After.ID
		if !q.After.Deadline.IsZero() {
			n, err := nanos(q.After.Deadline)
			if err != nil {
				return nil, s.wrap("inbox", err)
			}
			afterDue = n.(int64)
		}
	}
	n := 1
	for n < len(q.Addressees) {
		n *= 2
	}
	args := []any{q.Owner, q.Kind, upTo, afterDue, afterID, max(q.Limit, 0)}
	for i := range n {
		a := ""
		if i < len(q.Addressees) {
			a = store.Text(q.Addressees[i])
		}
		args = append(args, a)
	}
	out, err := s.queryParks(ctx, inboxQuery(n), args...)
	if err != nil {
		return nil, s.wrap("inbox", err)
	}
	return out, nil
}

// inboxQuery is Inbox's statement for n addressees ($7 on).
func inboxQuery(n int) string {
	const due = `COALESCE(deadline, 9223372036854775807)`
	const filter = ` AND ($2 = '' OR kind = $2) AND ` + due + ` <= $3 AND (` + due + `, id) > ($4, $5) ORDER BY due, id LIMIT $6`
	var in strings.Builder
	for i := range n {
		if i > 0 {
			in.WriteString(", ")
		}
		in.WriteString("$" + strconv.Itoa(7+i))
	}
	return `SELECT ` + parkCols + ` FROM (
	SELECT * FROM (SELECT ` + parkCols + `, ` + due + ` AS due FROM parks
		WHERE state = 'pending' AND addressee <> '' AND addressee IN (` + in.String() + `)` + filter + `) AS addressed
	UNION ALL
	SELECT * FROM (SELECT ` + parkCols + `, ` + due + ` AS due FROM parks
		WHERE ck IN (SELECT ck FROM conversations WHERE owner = $1 AND owner <> '') AND state = 'pending' AND addressee = ''` + filter + `) AS owned
) AS inbox ORDER BY due, id LIMIT $6`
}
