package kindload

import (
	"context"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/kindkit/kindkit/internal/demo"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/internal/telemetry"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
	"github.com/kindkit/kindkit/store/sqlstore"
	"github.com/kindkit/kindkit/store/storetest"
)

// BenchmarkCycle runs kindload's cycle (a fresh socket: create, message,
// card, submit, reply, close), one at a time, against the canned floor and
// against kindkit as kindserver runs it (benchConfig) on the memory store
// and on SQLite, all in this process. Client and server allocate in the
// same process and the client is the same in each, so kindkit's
// allocations a cycle beyond the floor's are the difference of their
// allocs/op and B/op; these counts do not depend on how busy the machine
// is, as load.sh's CPU times do. As in load.sh, the per-client bounds are
// off: every socket comes from one address.
//
// With KINDKIT_BENCH_PARKS=N it also runs on stores where N cards wait
// (sqlite-parked, and postgres and postgres-parked when KINDKIT_TEST_POSTGRES
// names a cluster), filled once as parks mode fills them, so that the cost
// of a cycle at a million waiting asks is a benchmark the next change can
// be held against (issue 39): compare sqlite-parked with sqlite, and
// postgres-parked with postgres, in one run.
func BenchmarkCycle(b *testing.B) {
	targets := []struct {
		name  string
		start func(b *testing.B) string
	}{
		{"floor", func(b *testing.B) string {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			serveCanned(b, ln)
			return ln.Addr().String()
		}},
		{"memory", func(b *testing.B) string {
			return startServer(b, benchConfig(nil))
		}},
		{"sqlite", func(b *testing.B) string {
			st, err := sqlstore.Open(context.Background(), "sqlite:"+b.TempDir()+"/bench.db")
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			return startServer(b, benchConfig(st))
		}},
	}
	targets = append(targets, parkedTargets(b)...)
	for _, tg := range targets {
		b.Run(tg.name, func(b *testing.B) {
			cfg := Config{Addr: tg.start(b), Path: "/ws", Timeout: 10 * time.Second}
			ctx := context.Background()
			var t tally
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				cycle(ctx, cfg, &t, "k"+strconv.Itoa(i))
			}
			b.StopTimer()
			if t.errs != 0 || t.violations != 0 {
				b.Fatalf("%d cycles failed, %d order violations: %v %v", t.errs, t.violations, t.errMsgs, t.violMsgs)
			}
		})
	}
}

// benchConfig is the server's config for BenchmarkCycle: kindserver's with
// no flags but the store (nil: a memory store) and no per-client bounds:
// the demo model, metrics on, tracing off.
func benchConfig(st store.Store) servertest.Config {
	if st == nil {
		st = memstore.New()
	}
	metrics := telemetry.NewMetrics(prometheus.NewRegistry())
	return servertest.Config{Model: demo.Model{}, Store: metrics.Store(st), Metrics: metrics, TracerProvider: noop.NewTracerProvider(),
		ClientFrameRate: -1, ConversationRate: -1}
}

// parkedTargets are BenchmarkCycle's targets on stores filled with
// KINDKIT_BENCH_PARKS waiting cards; none when it is not set. A store is
// filled once, here, and each run of its target starts a server on it.
func parkedTargets(b *testing.B) []struct {
	name  string
	start func(b *testing.B) string
} {
	env := os.Getenv("KINDKIT_BENCH_PARKS")
	if env == "" {
		return nil
	}
	n, err := strconv.Atoi(env)
	if err != nil || n < 1 {
		b.Fatalf("KINDKIT_BENCH_PARKS=%q: want a number of parks", env)
	}
	on := func(dsn string) func(b *testing.B) string {
		return func(b *testing.B) string {
			st, err := sqlstore.Open(context.Background(), dsn)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			return startServer(b, benchConfig(st))
		}
	}
	dsns := []struct{ name, dsn string }{{"sqlite-parked", "sqlite:" + b.TempDir() + "/parked.db"}}
	var targets []struct {
		name  string
		start func(b *testing.B) string
	}
	if os.Getenv("KINDKIT_TEST_POSTGRES") != "" {
		targets = append(targets, struct {
			name  string
			start func(b *testing.B) string
		}{"postgres", on(storetest.PostgresDB(b))})
		dsns = append(dsns, struct{ name, dsn string }{"postgres-parked", storetest.PostgresDB(b)})
	}
	for _, d := range dsns {
		start := time.Now()
		fillParks(b, d.dsn, n)
		b.Logf("%s: %d parks filled in %v", d.name, n, time.Since(start).Round(time.Second))
		targets = append(targets, struct {
			name  string
			start func(b *testing.B) string
		}{d.name, on(d.dsn)})
	}
	return targets
}

// fillParks writes n conversations with a card waiting into the store dsn
// names, as parks mode does, and returns their ids.
func fillParks(b *testing.B, dsn string, n int) *fillIDs {
	ctx := context.Background()
	s, err := sqlstore.Open(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	fill := &fillIDs{}
	now := time.Now()
	for done := 0; done < n; {
		batch := make([]sqlstore.Parked, min(10000, n-done))
		for i := range batch {
			batch[i] = parked(fill.next(), now)
		}
		if err := s.Load(ctx, batch); err != nil {
			b.Fatal(err)
		}
		done += len(batch)
	}
	return fill
}
