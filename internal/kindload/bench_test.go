package kindload

import (
	"context"
	"net"
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
