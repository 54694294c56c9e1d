package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
	"github.com/kindkit/kindkit/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sqliteDSN is a fresh database file in t's temp dir.
func sqliteDSN(t testing.TB) string {
	return "sqlite:" + filepath.Join(t.TempDir(), "kindkit.db")
}

// postgresDSN is a fresh PostgreSQL database for t (see
// storetest.PostgresDB).
func postgresDSN(t testing.TB) string { return storetest.PostgresDB(t) }

func openT(t testing.TB, dsn string) *Store {
	t.Helper()
	return openCfg(t, dsn, config{})
}

func openCfg(t testing.TB, dsn string, cfg config) *Store {
	t.Helper()
	s, err := open(context.Background(), dsn, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

func TestConformanceSQLite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openT(t, sqliteDSN(t)) })
}

func TestConformanceSQLiteMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openT(t, "sqlite::memory:") })
}

func TestConformanceSQLiteOneConnection(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openCfg(t, sqliteDSN(t), config{readers: -1}) })
}

func TestConformancePostgres(t *testing.T) {
	postgresDSN(t) // skip or fail before the sub-tests
	storetest.Run(t, func(t *testing.T) store.Store { return openT(t, postgresDSN(t)) })
}

// TestTakeParkTwoProcesses: two pools on one PostgreSQL database, standing
// for two server processes, race to take each park; exactly one wins.
func TestTakeParkTwoProcesses(t *testing.T) {
	dsn := postgresDSN(t)
	a, b := openT(t, dsn), openT(t, dsn)
	ctx := context.Background()
	if err := a.CreateConversation(ctx, &store.Conversation{ID: "c1"}); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		id := fmt.Sprintf("p%d", i)
		if _, err := b.SavePark(ctx, &store.Park{ID: id, Type: store.ParkInteraction, ConversationID: "c1",
			Deadline: time.Now().Add(time.Minute), State: store.ParkPending}, nil); err != nil {
			t.Fatal(err)
		}
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			oks  []string
			errs []error
		)
		start := make(chan struct{})
		for j := range 8 {
			s, name := a, "a"
			if j%2 == 1 {
				s, name = b, "b"
			}
			wg.Go(func() {
				<-start
				_, ok, err := s.TakePark(ctx, id, store.Answer{State: store.ParkResolved})
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
				}
				if ok {
					oks = append(oks, name)
				}
			})
		}
		close(start)
		wg.Wait()
		if len(oks) != 1 || len(errs) > 0 {
			t.Fatalf("park %s: taken by %v, errors %v; want exactly one taker", id, oks, errs)
		}
	}
}

// TestStartTurnTwoProcesses: two pools on one PostgreSQL database race to
// start a turn of one conversation, first messages and later ones;
// exactly one starts it, and one record is owed. (The conversation's row
// lock makes the second wait and then see the first's message and
// record; without it both inserted.)
func TestStartTurnTwoProcesses(t *testing.T) {
	dsn := postgresDSN(t)
	a, b := openT(t, dsn), openT(t, dsn)
	ctx := context.Background()
	for i := range 30 {
		conv := fmt.Sprintf("c%d", i)
		made := &store.Conversation{ID: conv}
		if err := a.CreateConversation(ctx, made); err != nil {
			t.Fatal(err)
		}
		for _, first := range []*store.Conversation{made, nil} {
			if first == nil { // a later turn: the first one ended
				p, err := a.OwedTurn(ctx, conv)
				if err != nil {
					t.Fatal(err)
				}
				if err := a.SaveStep(ctx, store.Lease{ParkID: p.ID, Owner: p.LeaseOwner}, store.Step{Done: true}); err != nil {
					t.Fatal(err)
				}
			}
			var (
				wg   sync.WaitGroup
				mu   sync.Mutex
				oks  []string
				errs []error
			)
			start := make(chan struct{})
			for j := range 8 {
				s := a
				if j%2 == 1 {
					s = b
				}
				wg.Go(func() {
					<-start
					id := fmt.Sprintf("%s-first-%v-%d", conv, first != nil, j)
					_, ok, err := s.StartTurn(ctx, &store.Message{ID: id, ConversationID: conv, Role: store.RoleUser, CreatedAt: time.Now()},
						&store.Park{ID: id + "-t", Type: store.ParkTurn, ConversationID: conv, State: store.ParkRunning, Turn: json.RawMessage(`{}`),
							Owed: true, LeaseOwner: id, LeaseUntil: time.Now().Add(time.Minute)}, first, nil)
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						errs = append(errs, err)
					}
					if ok {
						oks = append(oks, id)
					}
				})
			}
			close(start)
			wg.Wait()
			if len(oks) != 1 || len(errs) > 0 {
				t.Fatalf("conversation %s (first message %v): started by %v, errors %v; want exactly one", conv, first != nil, oks, errs)
			}
			var owed int
			if err := a.db.QueryRowContext(ctx, `SELECT count(*) FROM parks WHERE conversation_id = $1 AND owed`, conv).Scan(&owed); err != nil {
				t.Fatal(err)
			}
			if owed != 1 {
				t.Fatalf("conversation %s: %d records owed, want 1", conv, owed)
			}
		}
	}
}

// TestSQLiteSharedFile: two stores on one SQLite file (two processes)
// share parks, and a take by one is seen by the other.
func TestSQLiteSharedFile(t *testing.T) {
	dsn := sqliteDSN(t)
	a, b := openT(t, dsn), openT(t, dsn)
	ctx := context.Background()
	if err := a.CreateConversation(ctx, &store.Conversation{ID: "c1"}); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		id := fmt.Sprintf("p%d", i)
		if _, err := a.SavePark(ctx, &store.Park{ID: id, ConversationID: "c1", State: store.ParkPending}, nil); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		oks := 0
		for _, s := range []*Store{a, b, a, b} {
			wg.Go(func() {
				_, ok, err := s.TakePark(ctx, id, store.Answer{State: store.ParkResolved})
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				defer mu.Unlock()
				if ok {
					oks++
				}
			})
		}
		wg.Wait()
		if oks != 1 {
			t.Fatalf("park %s taken %d times", id, oks)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	for _, dsn := range []string{"", "mysql://x", "sqlite:", "./kindkit.db"} {
		if s, err := Open(ctx, dsn); err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", dsn)
		}
	}
	if s, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "no", "such", "dir", "x.db")); err == nil {
		s.Close()
		t.Error("Open in a missing directory succeeded")
	}
}

func TestSQLitePragmas(t *testing.T) {
	s := openT(t, sqliteDSN(t))
	for _, db := range []*sql.DB{s.db.DB, s.rdb.DB} {
		var mode string
		var sync, fk, busy int
		if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRow("PRAGMA synchronous").Scan(&sync); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRow("PRAGMA busy_timeout").Scan(&busy); err != nil {
			t.Fatal(err)
		}
		if mode != "wal" || sync != 1 || fk != 1 || busy <= 0 {
			t.Errorf("journal_mode %s, synchronous %d, foreign_keys %d, busy_timeout %d; want wal, 1 (NORMAL), 1, > 0", mode, sync, fk, busy)
		}
	}
	if s.db.Stats().MaxOpenConnections != 1 {
		t.Errorf("writer pool of %d connections, want 1", s.db.Stats().MaxOpenConnections)
	}
	checkMemory(t, s, -defaultCache>>10, -defaultReadCache>>10, defaultMmap)
}

// TestSQLiteMemory: the DSN's cache, read_cache and mmap reach every
// connection of the pools they name.
func TestSQLiteMemory(t *testing.T) {
	s := openT(t, sqliteDSN(t)+"?cache=8MiB&read_cache=1536KiB&mmap=32MiB&_txlock=immediate")
	checkMemory(t, s, -8<<10, -1536, 32<<20)
	s = openT(t, sqliteDSN(t)+"?mmap=0")
	checkMemory(t, s, -defaultCache>>10, -defaultReadCache>>10, 0)
	// An in-memory database is all in its cache and has no file to map:
	// the settings are taken and have no effect.
	openT(t, "sqlite::memory:?cache=1MiB&mmap=1MiB")
}

// checkMemory fails t unless every connection of s's pools reports the
// cache_size and mmap_size given.
func checkMemory(t *testing.T, s *Store, writerCache, readerCache, mmap int64) {
	t.Helper()
	ctx := context.Background()
	for _, p := range []struct {
		name  string
		db    *sql.DB
		cache int64
	}{{"writer", s.db.DB, writerCache}, {"reader", s.rdb.DB, readerCache}} {
		n := p.db.Stats().MaxOpenConnections
		// Hold n connections at once, so each is a different one.
		var conns []*sql.Conn
		for range n {
			c, err := p.db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			conns = append(conns, c)
		}
		for i, c := range conns {
			var cache, mm int64
			if err := c.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&cache); err != nil {
				t.Fatal(err)
			}
			if err := c.QueryRowContext(ctx, "PRAGMA mmap_size").Scan(&mm); err != nil {
				t.Fatal(err)
			}
			if cache != p.cache || mm != mmap {
				t.Errorf("%s connection %d: cache_size %d, mmap_size %d; want %d, %d", p.name, i, cache, mm, p.cache, mmap)
			}
		}
	}
}

// TestTimes: times round-trip to the nanosecond and come back in UTC; the
// zero time stays zero; a time beyond int64 nanoseconds is refused.
func TestTimes(t *testing.T) {
	for _, dsn := range dsns(t) {
		t.Run(dsn.name, func(t *testing.T) {
			s := openT(t, dsn.open(t))
			ctx := context.Background()
			at := time.Date(2031, 2, 3, 4, 5, 6, 789123457, time.FixedZone("Y", -7*3600))
			if err := s.CreateConversation(ctx, &store.Conversation{ID: "c1", CreatedAt: at}); err != nil {
				t.Fatal(err)
			}
			c, err := s.Conversation(ctx, "c1")
			if err != nil {
				t.Fatal(err)
			}
			if !c.CreatedAt.Equal(at) || c.CreatedAt.Location() != time.UTC {
				t.Errorf("CreatedAt = %v, want %v in UTC", c.CreatedAt, at)
			}
			err = s.CreateConversation(ctx, &store.Conversation{ID: "c2", CreatedAt: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)})
			if err == nil {
				t.Error("year 3000 was stored")
			}
		})
	}
}

type dsnCase struct {
	name string
	open func(t testing.TB) string
}

// dsns are the databases a test runs on: SQLite always, PostgreSQL when
// KINDKIT_TEST_POSTGRES is set (and, in CI, it must be).
func dsns(t *testing.T) []dsnCase {
	cases := []dsnCase{{"sqlite", sqliteDSN}}
	if os.Getenv("KINDKIT_TEST_POSTGRES") != "" || os.Getenv("CI") == "true" {
		cases = append(cases, dsnCase{"postgres", postgresDSN})
	}
	return cases
}

func TestCloseThenUse(t *testing.T) {
	s, err := Open(context.Background(), sqliteDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = s.Conversation(context.Background(), "c1")
	if err == nil || errors.Is(err, store.ErrNotFound) {
		t.Errorf("Conversation after Close: %v, want a closed-database error", err)
	}
}

func BenchmarkCycleMemory(b *testing.B) { storetest.Bench(b, memstore.New()) }

func BenchmarkCycleSQLite(b *testing.B) { storetest.Bench(b, openT(b, sqliteDSN(b))) }

func BenchmarkCyclePostgres(b *testing.B) {
	if os.Getenv("KINDKIT_TEST_POSTGRES") == "" {
		b.Skip("KINDKIT_TEST_POSTGRES not set")
	}
	storetest.Bench(b, openT(b, postgresDSN(b)))
}

// BenchmarkOps*: each store operation of the hot path alone (see
// storetest.BenchOps).
func BenchmarkOpsSQLite(b *testing.B) {
	storetest.BenchOps(b, func(b *testing.B) store.Store { return openT(b, sqliteDSN(b)) })
}

func BenchmarkOpsPostgres(b *testing.B) {
	if os.Getenv("KINDKIT_TEST_POSTGRES") == "" {
		b.Skip("KINDKIT_TEST_POSTGRES not set")
	}
	storetest.BenchOps(b, func(b *testing.B) store.Store { return openT(b, postgresDSN(b)) })
}

// BenchmarkParallelSQLite compares, under concurrent load, the one-writer
// SQLite store with and without a separate pool of read connections. Each
// operation is one interaction cycle plus the reads a server makes around
// it (history for the model, the conversation and session on connect).
func BenchmarkParallelSQLite(b *testing.B) {
	for _, bc := range []struct {
		name    string
		readers int
	}{{"one-connection", -1}, {"readers-4", 4}, {"readers-8", 8}} {
		b.Run(bc.name, func(b *testing.B) {
			s := openCfg(b, sqliteDSN(b), config{readers: bc.readers})
			ctx, cancel := context.WithCancel(context.Background()) // as the server's
			defer cancel()
			var mu sync.Mutex
			n := 0
			b.ReportAllocs()
			b.SetParallelism(4)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					mu.Lock()
					n++
					id := fmt.Sprintf("p%d", n)
					mu.Unlock()
					if err := storetest.Cycle(ctx, s, id); err != nil {
						b.Fatal(err)
					}
					for range 3 {
						if _, _, err := s.Messages(ctx, id, nil, "", 50); err != nil {
							b.Fatal(err)
						}
					}
					if _, err := s.Conversation(ctx, id); err != nil {
						b.Fatal(err)
					}
					if _, err := s.Session(ctx, id+"-s"); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// Concurrent writes share SQLite transactions (group commit); a write that
// fails is undone alone and the others are committed.
func TestGroupCommitIsolatesFailures(t *testing.T) {
	s := openT(t, sqliteDSN(t))
	ctx := context.Background()
	if err := s.CreateConversation(ctx, &store.Conversation{ID: "c"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 60)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conv := "c"
			if i%3 == 0 {
				conv = "missing"
			}
			errs[i] = s.AppendMessages(ctx, &store.Message{ID: fmt.Sprint("m", i), ConversationID: conv, Role: store.RoleUser, Text: "x"})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if want := i%3 == 0; errors.Is(err, store.ErrNotFound) != want || (!want && err != nil) {
			t.Errorf("write %d: %v", i, err)
		}
	}
	msgs, _, err := s.Messages(ctx, "c", nil, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 40 {
		t.Errorf("%d messages stored, want 40", len(msgs))
	}
}

// Many concurrent cycles on a pool smaller than the concurrency: statements
// prepared for the first time while transactions hold the connections must
// not deadlock (kindload found this at c=50 on PostgreSQL).
func TestConcurrentCyclesSmallPool(t *testing.T) {
	dsns := map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return sqliteDSN(t) },
		"postgres": func(t *testing.T) string { return postgresDSN(t) + "&pool_max_conns=2" },
	}
	for name, dsn := range dsns {
		t.Run(name, func(t *testing.T) {
			s := openT(t, dsn(t))
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var wg sync.WaitGroup
			errs := make(chan error, 40)
			for i := range 40 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := storetest.Cycle(ctx, s, fmt.Sprint("cycle-", i)); err != nil {
						errs <- err
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}

// SQLite's statements are prepared once and kept: the reads' by the reader
// pool, the writes' by the group commit on the writer's connection.
// PostgreSQL's are left to pgx, which prepares each on a connection the
// first time it runs there and keeps it.
func TestStatementCaches(t *testing.T) {
	for _, c := range dsns(t) {
		t.Run(c.name, func(t *testing.T) {
			s := openT(t, c.open(t))
			ctx := context.Background()
			if err := storetest.Cycle(ctx, s, "cached"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Conversation(ctx, "cached"); err != nil { // a cycle reads nothing
				t.Fatal(err)
			}
			postgres := s.dialect == dialectPostgres
			kept := func(p *pool) int {
				p.mu.Lock()
				defer p.mu.Unlock()
				return len(p.stmts)
			}
			if !postgres {
				if n := len(s.commits.raw.stmts); n < 5 {
					t.Errorf("the group commit keeps %d statements", n)
				}
				if n := kept(s.rdb); n == 0 {
					t.Error("the reader pool keeps no statement")
				}
				return
			}
			for name, p := range map[string]*pool{"writer": s.db, "reader": s.rdb} {
				if n := kept(p); n != 0 {
					t.Errorf("the %s pool keeps %d statements", name, n)
				}
			}
			conn, err := s.db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			const q = `SELECT id FROM conversations WHERE id = $1`
			for range 3 {
				var id string
				if err := conn.QueryRowContext(ctx, q, "cached").Scan(&id); err != nil {
					t.Fatal(err)
				}
			}
			var prepared int
			if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM pg_prepared_statements WHERE statement = $1`, q).Scan(&prepared); err != nil {
				t.Fatal(err)
			}
			if prepared != 1 {
				t.Errorf("%q is prepared %d times on the connection, want once (pgx's cache)", q, prepared)
			}
		})
	}
}

// TestCheckpointOffTheWritePath: the writer never checkpoints (SQLite's
// automatic checkpoint ran inside the commit that crossed its threshold);
// the checkpointer's own connection copies the WAL after every so many
// writes.
func TestCheckpointOffTheWritePath(t *testing.T) {
	type result struct {
		frames, copied int
		err            error
	}
	// One result a checkpoint: the test waits for each before it writes
	// on, so no write races the copy (a write during a PASSIVE
	// checkpoint is left for the next one, and fails the "all" below).
	results := make(chan result, 4)
	s, err := open(context.Background(), sqliteDSN(t), config{checkpoint: 5, checkpointed: func(frames, copied int, err error) {
		results <- result{frames, copied, err}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if r := <-results; r.err != nil || r.copied != r.frames { // the open's own: the migrations' WAL
		t.Errorf("the open's checkpoint copied %d of %d WAL frames (%v); want all", r.copied, r.frames, r.err)
	}
	var auto int
	if err := s.db.QueryRow(`PRAGMA wal_autocheckpoint`).Scan(&auto); err != nil || auto != 0 {
		t.Errorf("the writer's wal_autocheckpoint = %d, %v; want 0", auto, err)
	}
	ctx := context.Background()
	for round := range 2 {
		for i := range 5 { // the fifth write asks for a checkpoint
			if err := s.CreateConversation(ctx, &store.Conversation{ID: fmt.Sprintf("c%d-%d", round, i)}); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case r := <-results:
			if r.err != nil || r.frames <= 0 || r.copied != r.frames {
				t.Errorf("checkpoint %d copied %d of %d WAL frames (%v); want all, and some", round+1, r.copied, r.frames, r.err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no checkpoint after %d writes", 5*(round+1))
		}
	}
	if err := s.CreateConversation(ctx, &store.Conversation{ID: "last"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(results); n != 0 {
		t.Errorf("%d checkpoints more than one per 5 writes", n)
	}
}

// The group commit scans its rows itself (rawRow): each destination the
// writes use gets SQLite's values as database/sql would store them, and
// what it cannot store is an error, never a panic.
func TestRawRowScan(t *testing.T) {
	var (
		s       string
		n       int
		n64     int64
		b, b2   bool
		ns      sql.NullString
		ni, ni2 sql.NullInt64
	)
	r := rawRow{vals: []driver.Value{"text", int64(7), int64(-1), int64(1), int64(0), nil, int64(5), nil}}
	if err := r.Scan(&s, &n, &n64, &b, &b2, &ns, &ni, &ni2); err != nil {
		t.Fatal(err)
	}
	if s != "text" || n != 7 || n64 != -1 || !b || b2 || ns.Valid || ni != (sql.NullInt64{Int64: 5, Valid: true}) || ni2.Valid {
		t.Errorf("scanned %q %d %d %v %v %v %v %v", s, n, n64, b, b2, ns, ni, ni2)
	}
	for _, bad := range []struct {
		val  driver.Value
		dest any
	}{{nil, &s}, {"x", &n}, {1.5, &n64}, {"yes", &b}, {int64(1), new(time.Time)}} {
		if err := (rawRow{vals: []driver.Value{bad.val}}).Scan(bad.dest); err == nil {
			t.Errorf("%#v into %T: no error", bad.val, bad.dest)
		}
	}
	if err := (rawRow{vals: []driver.Value{"a", "b"}}).Scan(&s); err == nil {
		t.Error("two columns into one destination: no error")
	}
	if err := (rawRow{err: sql.ErrNoRows}).Scan(&s); !errors.Is(err, sql.ErrNoRows) {
		t.Errorf("no row: %v", err)
	}
}
