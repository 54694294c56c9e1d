package kindload

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/sqlstore"
)

// BenchmarkResumeWrites times the three writes of a resume of a card
// picked at random from a SQLite store filled as parks mode fills it:
// create_session, take_park and save_step, each reported in µs a resume,
// one at a time and with no server, so that their growth from /1000 to
// /KINDKIT_BENCH_PARKS (when set) is the store's alone, without the CPU
// the server and its sockets share with it or other writes in the same
// commit; cpu-µs/op is the process's CPU a resume (with the untimed new
// card), which a busy machine moves less than it moves times. After its
// resume, a conversation waits on a new card (untimed), so the store holds
// as many waiting cards throughout. SQLITE_QUERY is the query of the
// store's DSN as it is timed, as in scripts/parks.sh.
func BenchmarkResumeWrites(b *testing.B) {
	sizes := []int{1000}
	if env := os.Getenv("KINDKIT_BENCH_PARKS"); env != "" {
		n, err := strconv.Atoi(env)
		if err != nil || n < 1 {
			b.Fatalf("KINDKIT_BENCH_PARKS=%q: want a number of parks", env)
		}
		sizes = append(sizes, n)
	}
	for _, n := range sizes {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			ctx := context.Background()
			dsn := "sqlite:" + b.TempDir() + "/parked.db"
			fill := fillParks(b, dsn, n)
			if q := os.Getenv("SQLITE_QUERY"); q != "" {
				dsn += "?" + q
			}
			s, err := sqlstore.Open(ctx, dsn)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			parks := make([]string, n) // the waiting card of each conversation
			for k := range parks {
				parks[k] = fill.of(k).park
			}
			rng := rand.New(rand.NewPCG(1, 2))
			var took [3]time.Duration
			now := time.Now()
			cpu := selfCPU()
			for b.Loop() {
				k := rng.IntN(n)
				conv, sess := fill.of(k).conv, store.NewID()
				lease := store.Lease{ParkID: parks[k], Owner: "bench", Until: now.Add(time.Minute)}
				t0 := time.Now()
				if err := s.CreateSession(ctx, &store.Session{ID: sess, ConversationID: conv, AgentID: "kindload",
					UserParticipantID: sess + "-u", AgentParticipantID: sess + "-a"}); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, ok, err := s.TakePark(ctx, parks[k], store.Answer{State: store.ParkResolved, Lease: &lease,
					Messages: []*store.Message{{ID: store.NewID(), ConversationID: conv, Role: store.RoleTool,
						Text: `{"status":"submitted"}`, ToolCallID: "call", ToolName: "request_choices", CreatedAt: now}}}); err != nil || !ok {
					b.Fatalf("take park %d: %v (taken: %v)", k, err, ok)
				}
				t2 := time.Now()
				if err := s.SaveStep(ctx, lease, store.Step{Turn: []byte(`{"requestId":"r"}`), Done: true, Messages: []*store.Message{
					{ID: store.NewID(), ConversationID: conv, Role: store.RoleAssistant, Text: "Pro it is.", CreatedAt: now},
					{ID: store.NewID(), ConversationID: conv, Role: store.RoleReply, Text: "Pro it is.", CreatedAt: now}}}); err != nil {
					b.Fatal(err)
				}
				t3 := time.Now()
				took[0], took[1], took[2] = took[0]+t1.Sub(t0), took[1]+t2.Sub(t1), took[2]+t3.Sub(t2)
				next := parked(parkIDs{conv: conv, session: sess, park: store.NewID(), call: "call-" + store.NewID(), turn: "again"}, now).Park
				if _, err := s.SavePark(ctx, &next, nil); err != nil {
					b.Fatal(err)
				}
				parks[k] = next.ID
			}
			b.ReportMetric(float64((selfCPU()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
			for i, op := range []string{"create_session", "take_park", "save_step"} {
				b.ReportMetric(float64(took[i].Microseconds())/float64(b.N), op+"-µs")
			}
		})
	}
}
