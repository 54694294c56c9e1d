package sqlstore

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// embedded holds migrations/<dialect>/NNNN_name.sql: version NNNN of the
// schema is what the files up to NNNN make. A released file never changes;
// a change to the schema is a new file.
//
//go:embed migrations
var embedded embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations reads dir's migrations in version order; versions must be
// 1, 2, 3… with no gap.
func loadMigrations(fsys fs.FS, dir string) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		num, _, _ := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("%s: want NNNN_name.sql", path.Join(dir, e.Name()))
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(b)})
	}
	slices.SortFunc(ms, func(a, b migration) int { return a.version - b.version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("%s: version %d, want %d", path.Join(dir, m.name), m.version, i+1)
		}
	}
	return ms, nil
}

// migrateLock is the PostgreSQL advisory lock that queues processes
// migrating one database at the same time.
const migrateLock = 0x6b696e646b6974 // "kindkit"

// migrate applies, in one transaction, the migrations the database lacks
// (up to version upTo when it is not 0) and records each in
// schema_migrations. A database newer than every migration is refused.
func (s *Store) migrate(ctx context.Context, fsys fs.FS, upTo int) error {
	ms, err := loadMigrations(fsys, "migrations/"+s.dialect.String())
	if err != nil {
		return fmt.Errorf("sqlstore: load migrations: %w", err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlstore: migrate: %w", err)
	}
	defer tx.Rollback()
	if s.dialect == dialectPostgres {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(`+strconv.Itoa(migrateLock)+`)`); err != nil {
			return fmt.Errorf("sqlstore: migrate: lock: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)`); err != nil {
		return fmt.Errorf("sqlstore: migrate: create schema_migrations: %w", err)
	}
	var current int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return fmt.Errorf("sqlstore: migrate: read schema_migrations: %w", err)
	}
	if current > len(ms) {
		return fmt.Errorf("sqlstore: migrate: the database's schema is version %d, newer than this kindkit's %d", current, len(ms))
	}
	for _, m := range ms {
		if m.version <= current || (upTo > 0 && m.version > upTo) {
			continue
		}
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("sqlstore: migrate: %s/%s: %w", s.dialect, m.name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)`, m.version, time.Now().UnixNano()); err != nil {
			return fmt.Errorf("sqlstore: migrate: record version %d: %w", m.version, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlstore: migrate: %w", err)
	}
	return nil
}
