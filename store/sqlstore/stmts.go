package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// pool is a *sql.DB that, on SQLite, prepares each statement once and keeps
// it: SQLite otherwise parses every query on every call, which was a fifth
// of a cycle's CPU under load. Its SQLite statements run without the
// caller's cancellation: every query the store makes is short and bounded
// by a limit, and a cancellable context cost each query two goroutines
// (the driver's, to interrupt it, and database/sql's, to close its rows). On PostgreSQL it is the *sql.DB as it is:
// pgx keeps a statement cache of its own on each connection (its default
// exec mode), and a second cache above it only prepared every statement
// twice, and once deadlocked a small pool (36bfb93).
type pool struct {
	*sql.DB
	cache bool // SQLite: prepare and keep the statements
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

func newPool(db *sql.DB, cache bool) *pool {
	return &pool{DB: db, cache: cache, stmts: map[string]*sql.Stmt{}}
}

func (p *pool) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	p.mu.Lock()
	st, ok := p.stmts[query]
	p.mu.Unlock()
	if ok {
		return st, nil
	}
	// Prepare without the lock: preparing waits for a free connection,
	// and the connections may be held by transactions that are looking up
	// their own statements.
	st, err := p.DB.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if have, ok := p.stmts[query]; ok {
		st.Close()
		return have, nil
	}
	if p.stmts == nil { // closed meanwhile
		st.Close()
		return nil, sql.ErrConnDone
	}
	p.stmts[query] = st
	return st, nil
}

func (p *pool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if !p.cache {
		return p.DB.ExecContext(ctx, query, args...)
	}
	st, err := p.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(context.WithoutCancel(ctx), args...)
}

func (p *pool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if !p.cache {
		return p.DB.QueryContext(ctx, query, args...)
	}
	st, err := p.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(context.WithoutCancel(ctx), args...)
}

// QueryRowContext falls back to an unprepared query when preparing fails,
// so the error reaches the caller through Row.Scan.
func (p *pool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if !p.cache {
		return p.DB.QueryRowContext(ctx, query, args...)
	}
	st, err := p.stmt(ctx, query)
	if err != nil {
		return p.DB.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(context.WithoutCancel(ctx), args...)
}

// Close closes the prepared statements and the pool.
func (p *pool) Close() error {
	p.mu.Lock()
	var errs []error
	for _, st := range p.stmts {
		errs = append(errs, st.Close())
	}
	p.stmts = nil
	p.mu.Unlock()
	return errors.Join(append(errs, p.DB.Close())...)
}

// executor is what a write runs its statements on: the pool, a
// transaction, or the shared transaction of a group commit.
type executor interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) row
}

// row is a *sql.Row, or a rawRow of the group commit.
type row interface{ Scan(dest ...any) error }

// sqlExec is a pool or a transaction: what PostgreSQL's writes run on.
type sqlExec interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// sqlExecutor is a sqlExec as an executor.
type sqlExecutor struct{ sqlExec }

func (e sqlExecutor) QueryRowContext(ctx context.Context, query string, args ...any) row {
	return e.sqlExec.QueryRowContext(ctx, query, args...)
}

// committer is SQLite's group commit. SQLite has one writer, and each
// commit writes its pages to the WAL; under concurrent load most of a
// write's cost was its own commit. The committer runs the writes that are
// waiting in one transaction, each inside a savepoint so a failing write
// is undone alone, and commits once for all of them.
type committer struct {
	p       *pool
	reqs    chan *writeReq
	done    chan struct{}
	closing sync.Once

	// Every `every` writes committed, the committer asks ckpt (when set)
	// for a checkpoint. Writes, not commits: a group commit of many writes
	// puts as many more pages in the WAL.
	every int
	ckpt  *checkpointer
	since int     // writes committed since the last kick; the loop's own
	raw   rawConn // the loop's own
}

type writeReq struct {
	ctx context.Context
	fn  func(executor) error
	err chan error
}

const maxBatch = 64

func newCommitter(p *pool, every int, ckpt *checkpointer) *committer {
	c := &committer{p: p, reqs: make(chan *writeReq), done: make(chan struct{}), every: every, ckpt: ckpt}
	go c.loop()
	return c
}

// run waits for its write to be committed (or to fail). It does not give
// up when ctx ends once the write has started, so a caller never believes
// a committed write failed.
func (c *committer) run(ctx context.Context, fn func(executor) error) error {
	r := &writeReq{ctx: ctx, fn: fn, err: make(chan error, 1)}
	select {
	case c.reqs <- r:
	case <-ctx.Done():
		return ctx.Err()
	}
	return <-r.err
}

func (c *committer) close() {
	c.closing.Do(func() { close(c.reqs) })
	<-c.done
}

func (c *committer) loop() {
	defer close(c.done)
	defer c.onConn(func(w *rawConn) { w.close() })
	for first := range c.reqs {
		batch := []*writeReq{first}
	more:
		for len(batch) < maxBatch {
			select {
			case r, ok := <-c.reqs:
				if !ok {
					break more
				}
				batch = append(batch, r)
			default:
				break more
			}
		}
		c.commit(batch)
		if c.ckpt == nil {
			continue
		}
		if c.since += len(batch); c.since >= c.every {
			c.since = 0
			c.ckpt.kick()
		}
		if c.ckpt.long.Swap(false) {
			c.catchUp()
		}
	}
}

// catchUp checkpoints, on the writer's connection between two commits,
// the frames the checkpointer's last checkpoint left. That checkpoint
// copied what was in the WAL when it began, on a connection of its own;
// the writes meanwhile went on adding frames, so under steady load no
// checkpoint ever had all of them, and SQLite, which starts the WAL over
// only once every frame is in the database file, let it grow without end
// (480 MB in 10 s at c=50). With no write in between, this one copies the
// rest, and the next commit starts the WAL over unless a reader still
// reads from it (the next catch-up tries again). Its cost is the two syncs
// of a checkpoint, once every walLimit frames; the copying was done off
// the write path. While the checkpointer runs its next checkpoint, this one
// is busy at once, and is tried again after the next batch.
//
// A checkpoint that fails leaves the WAL longer until the next.
func (c *committer) catchUp() {
	c.onConn(func(w *rawConn) {
		var busy, frames, copied int
		err := w.QueryRowContext(context.Background(), passiveCheckpoint).Scan(&busy, &frames, &copied)
		if err == nil && busy != 0 {
			c.ckpt.long.Store(true)
			return
		}
		if c.ckpt.seen != nil {
			c.ckpt.seen(frames, copied, err)
		}
	})
}

func (c *committer) commit(batch []*writeReq) {
	errs := make([]error, len(batch))
	err := c.onConn(func(w *rawConn) { w.commit(batch, errs) })
	for i, r := range batch {
		if err != nil {
			errs[i] = err
		}
		r.err <- errs[i]
	}
}

// onConn runs fn on the writer's connection as the driver has it.
func (c *committer) onConn(fn func(*rawConn)) error {
	ctx := context.Background()
	conn, err := c.p.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		if c.raw.dc != dc { // a new connection: none of its statements is prepared
			c.raw = rawConn{dc: dc.(driver.ConnPrepareContext), stmts: map[string]driver.Stmt{}}
		}
		fn(&c.raw)
		return nil
	})
}

// rawConn runs the group commit's statements on the driver's connection,
// below database/sql, with statements it prepares once and keeps. Through
// database/sql a transaction parsed BEGIN and COMMIT anew at every commit
// and bound each statement to itself anew: BenchmarkCycleSQLite went from
// 1.31 to 1.08 ms and from 683 to 550 allocations a cycle without them.
// Its statements run without their caller's context: a write that has
// started is finished (committer.run), and a cancellable context cost each
// statement the driver's goroutine that would interrupt it.
//
// Only the committer's loop uses it, inside onConn. The driver is
// modernc.org/sqlite, whose connections prepare with a context.
type rawConn struct {
	dc    driver.ConnPrepareContext
	stmts map[string]driver.Stmt
	args  []driver.NamedValue // namedValues'
}

// commit runs the writes of batch in one transaction and sets errs[i] to
// the outcome of batch[i].
func (w *rawConn) commit(batch []*writeReq, errs []error) {
	if _, err := w.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return
	}
	if len(batch) == 1 {
		// Alone, the write is the transaction: no savepoint needed.
		r := batch[0]
		err := r.ctx.Err()
		if err == nil {
			err = r.fn(w)
		}
		if err == nil {
			err = w.end("COMMIT")
		} else {
			w.end("ROLLBACK")
		}
		errs[0] = err
		return
	}
	for i, r := range batch {
		if errs[i] = r.ctx.Err(); errs[i] != nil {
			continue
		}
		if errs[i] = w.run("SAVEPOINT w"); errs[i] != nil {
			continue
		}
		if errs[i] = r.fn(w); errs[i] != nil {
			w.run("ROLLBACK TO w")
		}
		w.run("RELEASE w")
	}
	if err := w.end("COMMIT"); err != nil {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
	}
}

// end ends the transaction with query (COMMIT or ROLLBACK). A COMMIT that
// fails is rolled back, so that the connection is left outside any
// transaction.
func (w *rawConn) end(query string) error {
	err := w.run(query)
	if err != nil && query != "ROLLBACK" {
		w.run("ROLLBACK")
	}
	return err
}

// run runs a statement that takes no arguments.
func (w *rawConn) run(query string) error {
	_, err := w.ExecContext(context.Background(), query)
	return err
}

func (w *rawConn) stmt(query string) (driver.Stmt, error) {
	if st, ok := w.stmts[query]; ok {
		return st, nil
	}
	st, err := w.dc.PrepareContext(context.Background(), query)
	if err != nil {
		return nil, err
	}
	w.stmts[query] = st
	return st, nil
}

// namedValues converts args into w.args, which is reused: the driver
// reads them only while the statement runs. A new slice for every
// statement was a sixth of what the SQLite store allocates in a cycle.
func (w *rawConn) namedValues(args []any) ([]driver.NamedValue, error) {
	w.args = w.args[:0]
	for i, a := range args {
		v, err := driver.DefaultParameterConverter.ConvertValue(a)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: argument $%d: %w", i+1, err)
		}
		w.args = append(w.args, driver.NamedValue{Ordinal: i + 1, Value: v})
	}
	return w.args, nil
}

func (w *rawConn) ExecContext(_ context.Context, query string, args ...any) (sql.Result, error) {
	st, err := w.stmt(query)
	if err != nil {
		return nil, err
	}
	nv, err := w.namedValues(args)
	if err != nil {
		return nil, err
	}
	return st.(driver.StmtExecContext).ExecContext(context.Background(), nv)
}

// QueryRowContext runs the query at once and keeps its first row.
func (w *rawConn) QueryRowContext(_ context.Context, query string, args ...any) row {
	st, err := w.stmt(query)
	if err != nil {
		return rawRow{err: err}
	}
	nv, err := w.namedValues(args)
	if err != nil {
		return rawRow{err: err}
	}
	rows, err := st.(driver.StmtQueryContext).QueryContext(context.Background(), nv)
	if err != nil {
		return rawRow{err: err}
	}
	defer rows.Close()
	vals := make([]driver.Value, len(rows.Columns()))
	switch err := rows.Next(vals); {
	case errors.Is(err, io.EOF):
		return rawRow{err: sql.ErrNoRows}
	case err != nil:
		return rawRow{err: err}
	}
	return rawRow{vals: vals}
}

// close closes the statements; the connection stays the pool's.
func (w *rawConn) close() {
	for _, st := range w.stmts {
		st.Close()
	}
	*w = rawConn{}
}

// rawRow is a row of rawConn.QueryRowContext.
type rawRow struct {
	vals []driver.Value
	err  error
}

func (r rawRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	if len(dest) != len(r.vals) {
		return fmt.Errorf("sqlstore: scan: %d destinations for %d columns", len(dest), len(r.vals))
	}
	for i, d := range dest {
		if err := assign(d, r.vals[i]); err != nil {
			return fmt.Errorf("sqlstore: scan column %d: %w", i, err)
		}
	}
	return nil
}

// assign stores v, as SQLite's driver returns it (int64, float64, string,
// []byte or nil), in d: the destinations the store's writes scan into.
func assign(d any, v driver.Value) error {
	switch d := d.(type) {
	case sql.Scanner:
		return d.Scan(v)
	case *string:
		switch v := v.(type) {
		case string:
			*d = v
			return nil
		case []byte:
			*d = string(v)
			return nil
		}
	case *int64:
		if n, ok := v.(int64); ok {
			*d = n
			return nil
		}
	case *int:
		if n, ok := v.(int64); ok {
			*d = int(n)
			return nil
		}
	case *bool:
		switch v := v.(type) {
		case int64:
			*d = v != 0
			return nil
		case bool:
			*d = v
			return nil
		}
	}
	return fmt.Errorf("cannot store %T in %T", v, d)
}

// checkpointEvery is how many writes go by between two checkpoints: about
// SQLite's own 1,000 WAL frames at a cycle's three to five pages a write.
const checkpointEvery = 250

// checkpointer copies the WAL into the database file on a connection of its
// own, so that no write waits for it. A PASSIVE checkpoint takes no lock
// that writers or readers wait on: it copies what no reader still needs
// and leaves the rest for the next one. A checkpoint that fails only leaves
// the WAL longer until the next; the commits in it are as durable as ever.
type checkpointer struct {
	db      *pool
	wake    chan struct{}
	done    chan struct{}
	seen    func(walFrames, copied int, err error)
	closing sync.Once
	err     error

	// long is set when a checkpoint found the WAL longer than limit
	// (walLimit) frames, for the committer to catch up with it
	// (committer.catchUp).
	long  atomic.Bool
	limit int
}

// passiveCheckpoint copies what no reader still needs, and waits on no
// lock; its row is (busy, WAL frames, frames copied).
const passiveCheckpoint = `PRAGMA wal_checkpoint(PASSIVE)`

// walLimit is how many frames the WAL may hold before the committer
// catches a checkpoint up with it, so that SQLite starts it over: 64 MiB.
// A catch-up holds the writes back for 2-4 ms at c=1 (3-18 ms at c=50):
// at this length that is one write in every 3,000 or so at c=1, outside
// the p99.
const walLimit = 16384

func newCheckpointer(db *pool, limit int, seen func(int, int, error)) *checkpointer {
	c := &checkpointer{db: db, wake: make(chan struct{}, 1), done: make(chan struct{}), seen: seen, limit: limit}
	go c.loop()
	return c
}

// kick asks for a checkpoint; one asked for while another runs is merged
// into the next.
func (c *checkpointer) kick() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *checkpointer) loop() {
	defer close(c.done)
	for range c.wake {
		c.checkpoint()
	}
}

// checkpoint runs a passive checkpoint on the checkpointer's connection and
// waits for it (for one that runs meanwhile too: the connection is one).
func (c *checkpointer) checkpoint() {
	var busy, frames, copied int
	err := c.db.DB.QueryRowContext(context.Background(), passiveCheckpoint).Scan(&busy, &frames, &copied)
	if c.seen != nil {
		c.seen(frames, copied, err)
	}
	if err == nil && frames > c.limit {
		c.long.Store(true)
	}
}

// close waits for a running checkpoint and closes the connection. Only
// after the committer's close: no kick may come after it.
func (c *checkpointer) close() error {
	c.closing.Do(func() {
		close(c.wake)
		<-c.done
		c.err = c.db.Close()
	})
	return c.err
}
