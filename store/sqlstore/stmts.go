package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// pool is a *sql.DB that, on SQLite, prepares each statement once and keeps
// it: SQLite otherwise parses every query on every call, which was a fifth
// of a cycle's CPU under load. On PostgreSQL it is the *sql.DB as it is:
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
	return st.ExecContext(ctx, args...)
}

func (p *pool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if !p.cache {
		return p.DB.QueryContext(ctx, query, args...)
	}
	st, err := p.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
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
	return st.QueryRowContext(ctx, args...)
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
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// txExec runs statements of SQLite's group commit in tx with the pool's
// prepared statements. It never prepares on the pool itself: the
// transaction may hold the pool's only connection. A query not prepared yet
// runs as it is and is noted in missed, to be prepared once the transaction
// is over.
//
// Its statements run without the caller's context: a write that has
// started is finished (committer.run), and a cancellable context cost each
// statement two goroutines, the driver's to interrupt it and database/sql's
// to close its rows (44 of a cycle's 727 allocations).
type txExec struct {
	p      *pool
	tx     *sql.Tx
	missed *[]string
}

func (e *txExec) stmt(query string) *sql.Stmt {
	e.p.mu.Lock()
	st := e.p.stmts[query]
	e.p.mu.Unlock()
	if st == nil {
		*e.missed = append(*e.missed, query)
		return nil
	}
	return e.tx.Stmt(st)
}

func (e *txExec) ExecContext(_ context.Context, query string, args ...any) (sql.Result, error) {
	if st := e.stmt(query); st != nil {
		return st.Exec(args...)
	}
	return e.tx.Exec(query, args...)
}

func (e *txExec) QueryRowContext(_ context.Context, query string, args ...any) *sql.Row {
	if st := e.stmt(query); st != nil {
		return st.QueryRow(args...)
	}
	return e.tx.QueryRow(query, args...)
}

// prepare prepares the queries a transaction ran unprepared.
func (p *pool) prepare(ctx context.Context, queries []string) {
	for _, q := range queries {
		p.stmt(ctx, q) // an error here only means the query stays unprepared
	}
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

	// Every `every` writes committed, kick (when set) asks for a
	// checkpoint. Writes, not commits: a group commit of many writes puts
	// as many more pages in the WAL.
	every int
	kick  func()
	since int // writes committed since the last kick; the loop's own
}

type writeReq struct {
	ctx context.Context
	fn  func(executor) error
	err chan error
}

const maxBatch = 64

func newCommitter(p *pool, every int, kick func()) *committer {
	c := &committer{p: p, reqs: make(chan *writeReq), done: make(chan struct{}), every: every, kick: kick}
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
		if c.kick != nil {
			if c.since += len(batch); c.since >= c.every {
				c.since = 0
				c.kick()
			}
		}
	}
}

func (c *committer) commit(batch []*writeReq) {
	ctx := context.Background()
	errs := make([]error, len(batch))
	tx, err := c.p.BeginTx(ctx, nil)
	if err != nil {
		for _, r := range batch {
			r.err <- err
		}
		return
	}
	var missed []string
	ex := &txExec{p: c.p, tx: tx, missed: &missed}
	if len(batch) == 1 {
		// Alone, the write is the transaction: no savepoint needed.
		r := batch[0]
		err := r.ctx.Err()
		if err == nil {
			err = r.fn(ex)
		}
		if err != nil {
			tx.Rollback()
		} else {
			err = tx.Commit()
		}
		r.err <- err
		c.p.prepare(ctx, missed)
		return
	}
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		if _, err := ex.ExecContext(ctx, "SAVEPOINT w"); err != nil {
			errs[i] = err
			continue
		}
		if errs[i] = r.fn(ex); errs[i] != nil {
			ex.ExecContext(ctx, "ROLLBACK TO w")
		}
		ex.ExecContext(ctx, "RELEASE w")
	}
	if err := tx.Commit(); err != nil {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
	}
	for i, r := range batch {
		r.err <- errs[i]
	}
	c.p.prepare(ctx, missed)
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
}

func newCheckpointer(db *pool, seen func(int, int, error)) *checkpointer {
	c := &checkpointer{db: db, wake: make(chan struct{}, 1), done: make(chan struct{}), seen: seen}
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
		var busy, frames, copied int
		err := c.db.DB.QueryRowContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &copied)
		if c.seen != nil {
			c.seen(frames, copied, err)
		}
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
