package sqlstore

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kindkit/kindkit/store/storetest"
)

// walFrames is the number of frames in the WAL of the SQLite file dsn.
func walFrames(t testing.TB, dsn string) float64 {
	fi, err := os.Stat(strings.TrimPrefix(dsn, "sqlite:") + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	const header, frame = 32, 24 + 4096
	return float64(max(fi.Size()-header, 0)) / frame
}

// cycleStore is a SQLite store that never checkpoints, holding n cycles
// under random ids (the server's UUIDs), its WAL emptied.
func cycleStore(t testing.TB, n int) (*Store, string) {
	dsn := sqliteDSN(t)
	s := openCfg(t, dsn, config{checkpoint: 1 << 30})
	ctx := context.Background()
	for range n {
		if err := storetest.Cycle(ctx, s, uuid.NewString()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	return s, dsn
}

// TestIndexesByConversationKey: no index on a conversation's rows begins
// with the conversation's random id; they begin with its key, ck
// (migration 7). BenchmarkCycleWAL shows what that is worth: 29 WAL
// frames a cycle with the ids, 21 with the keys.
func TestIndexesByConversationKey(t *testing.T) {
	for _, dc := range dsns(t) {
		t.Run(dc.name, func(t *testing.T) {
			s := openT(t, dc.open(t))
			q := `SELECT il.name, COALESCE(ii.name, '') FROM sqlite_schema m, pragma_index_list(m.name) il, pragma_index_info(il.name) ii
				WHERE m.name IN ('sessions', 'messages', 'parks') AND ii.seqno = 0`
			if dc.name == "postgres" {
				q = `SELECT i.relname, a.attname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class r ON r.oid = x.indrelid
					JOIN pg_attribute a ON a.attrelid = r.oid AND a.attnum = x.indkey[0]
					WHERE r.relname IN ('sessions', 'messages', 'parks') AND r.relnamespace = 'public'::regnamespace`
			}
			rows, err := s.db.DB.Query(q)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			first := map[string]string{}
			for rows.Next() {
				var index, col string
				if err := rows.Scan(&index, &col); err != nil {
					t.Fatal(err)
				}
				first[index] = col
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			for _, index := range []string{"sessions_conversation", "messages_conversation_seq", "messages_conversation_id",
				"parks_pending_conversation", "parks_conversation_created"} {
				if first[index] != "ck" {
					t.Errorf("index %s begins with %q, want ck", index, first[index])
				}
			}
			for index, col := range first {
				if col == "conversation_id" {
					t.Errorf("index %s begins with conversation_id", index)
				}
			}
		})
	}
}

// TestWALStartsOver: under steady concurrent writes the WAL stays near
// its limit. Each checkpoint copies what was there when it began, and the
// writes go on meanwhile; without the committer's catch-up no checkpoint
// had every frame, SQLite never started the WAL over, and it grew by every
// write (here to some 11,000-12,500 frames, 45 MB). With it the longest is
// 800-1,900 frames on an idle machine (a cycle writes its turn's record
// too, since the message's turn is owed its reply from the start), and up
// to 3,900 seen while another test suite loaded both cores, which delays
// the checkpoints; the bound lies between.
func TestWALStartsOver(t *testing.T) {
	const limit = 300
	dsn := sqliteDSN(t)
	s := openCfg(t, dsn, config{checkpoint: 20, walLimit: limit})
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 60 {
				if err := storetest.Cycle(ctx, s, uuid.NewString()); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var longest float64
	for running := true; running; {
		select {
		case <-done:
			running = false
		case <-time.After(time.Millisecond):
		}
		longest = max(longest, walFrames(t, dsn))
	}
	t.Logf("the WAL's longest: %.0f frames", longest)
	if longest > 16*limit {
		t.Errorf("the WAL grew to %.0f frames; want it started over near %d", longest, limit)
	}
}

// BenchmarkCycleWAL: cycles from 8 goroutines (the group commit merges
// their writes) on a store of 20,000 conversations, with the WAL frames
// each writes.
func BenchmarkCycleWAL(b *testing.B) {
	s, dsn := cycleStore(b, 20000)
	ctx := context.Background()
	b.SetParallelism(4)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := storetest.Cycle(ctx, s, uuid.NewString()); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(walFrames(b, dsn)/float64(b.N), "frames/op")
}
