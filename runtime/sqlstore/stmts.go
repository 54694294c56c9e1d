package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// pool is a *sql.DB whose statements are prepared once and kept. SQLite
// otherwise parses every query on every call, which was a fifth of a
// cycle's CPU under load.
type pool struct {
	*sql.DB
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

func newPool(db *sql.DB) *pool { return &pool{DB: db, stmts: map[string]*sql.Stmt{}} }

func (p *pool) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st, ok := p.stmts[query]; ok {
		return st, nil
	}
	st, err := p.DB.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	p.stmts[query] = st
	return st, nil
}

func (p *pool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := p.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (p *pool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := p.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// QueryRowContext falls back to an unprepared query when preparing fails,
// so the error reaches the caller through Row.Scan.
func (p *pool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
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
