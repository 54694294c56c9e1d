package sqlstore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/storetest"
)

// walPageNumbers is the page number of each frame of the WAL of the SQLite
// file dsn, from frame from on (a frame is a 24-byte header, which begins
// with the page's number, and the page).
func walPageNumbers(t testing.TB, dsn string, from int) []uint32 {
	f, err := os.Open(strings.TrimPrefix(dsn, "sqlite:") + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const header, frame = 32, 24 + 4096
	data, err := io.ReadAll(io.NewSectionReader(f, int64(header+from*frame), 1<<40))
	if err != nil {
		t.Fatal(err)
	}
	var pages []uint32
	for off := 0; off+frame <= len(data); off += frame {
		pages = append(pages, binary.BigEndian.Uint32(data[off:]))
	}
	return pages
}

// btreeOfPage names the table or index each page of the SQLite file
// belongs to, as dbstat tells.
func btreeOfPage(t testing.TB, s *Store) map[uint32]string {
	rows, err := s.db.DB.Query(`SELECT name, pageno FROM dbstat`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	names := map[uint32]string{}
	for rows.Next() {
		var name string
		var page uint32
		if err := rows.Scan(&name, &page); err != nil {
			t.Fatal(err)
		}
		names[page] = name
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return names
}

// cycleWriteBudget bounds the pages (WAL frames) one cycle writes on
// SQLite, one write at a time, on a store of many conversations: 40.3-40.7
// at 66244c5, 39.0-39.5 once sessions_conversation was dropped, 37.6-37.7
// once the turn's record became its first park (an UPDATE of its row, not a
// DELETE and an INSERT). A new index or statement on the hot path shows here
// first.
const cycleWriteBudget = 38

// TestCycleWrites counts the pages each write of a cycle puts in the WAL,
// by the table or index each page belongs to, on a store where 5,000
// asks wait under the server's ids, one write at a time (the group
// commit shares pages between concurrent cycles: BenchmarkCycleWAL). Run
// with -v for the table that issue 39 asks for.
func TestCycleWrites(t *testing.T) {
	const filled, cycles = 5000, 100
	dsn := sqliteDSN(t)
	s := openCfg(t, dsn, config{checkpoint: 1 << 30, walLimit: 1 << 30})
	ctx := context.Background()
	fill(t, s, filled)
	if _, err := s.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	var names []string               // the steps, in order
	written := map[string][]uint32{} // step → the pages of its frames
	frames := 0                      // in the WAL so far
	for range cycles {
		for _, step := range storetest.CycleSteps(ctx, s, store.NewID()) {
			if err := step.Run(); err != nil {
				t.Fatalf("%s: %v", step.Name, err)
			}
			pages := walPageNumbers(t, dsn, frames)
			frames += len(pages)
			if _, ok := written[step.Name]; !ok {
				names = append(names, step.Name)
			}
			written[step.Name] = append(written[step.Name], pages...)
		}
	}
	btree := btreeOfPage(t, s)
	var table strings.Builder
	total := 0.0
	for _, name := range names {
		by := map[string]int{}
		for _, p := range written[name] {
			by[cmpOr(btree[p], "(freed or the file's header)")]++
		}
		perCycle := float64(len(written[name])) / cycles
		total += perCycle
		fmt.Fprintf(&table, "%-20s %5.1f pages:", name, perCycle)
		for _, b := range slices.Sorted(maps.Keys(by)) {
			fmt.Fprintf(&table, " %s %.1f,", b, float64(by[b])/cycles)
		}
		table.WriteString("\n")
	}
	t.Logf("pages written per cycle on a store of %d conversations, by write and by table or index:\n%s%-20s %5.1f pages", filled, table.String(), "a cycle", total)
	if total > cycleWriteBudget {
		t.Errorf("a cycle writes %.1f pages, over the budget of %d", total, cycleWriteBudget)
	}
}

// fill loads n conversations, each with a card waiting, as the load tools
// do (Load, in one transaction).
func fill(t testing.TB, s *Store, n int) {
	now := time.Now()
	var batch []Parked
	for range n {
		id := store.NewID()
		call := store.ToolCall{ID: "call-" + id, Name: "request_choices", Arguments: `{"questions":[]}`}
		batch = append(batch, Parked{
			Conversation: store.Conversation{ID: id, Supports: []string{"choice_chips"}, CreatedAt: now},
			Session:      store.Session{ID: store.NewID(), ConversationID: id, AgentID: "a", UserParticipantID: "up", AgentParticipantID: "ap"},
			Messages: []*store.Message{
				{ID: store.NewID(), ConversationID: id, Role: store.RoleUser, Text: "I want to upgrade my plan", CreatedAt: now},
				{ID: store.NewID(), ConversationID: id, Role: store.RoleAssistant, ToolCalls: []store.ToolCall{call}, CreatedAt: now},
			},
			Park: store.Park{ID: store.NewID(), Type: store.ParkInteraction, ConversationID: id, Kind: "choices",
				Spec: json.RawMessage(`{"questions":[]}`), Reason: "to pick a plan", ToolCall: call, Deadline: now.Add(time.Hour),
				State: store.ParkPending, Turn: json.RawMessage(`{"requestId":"r"}`)},
		})
	}
	if err := s.Load(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// statements counts the round trips to PostgreSQL: each statement sent on
// its own, BEGIN and COMMIT included, and each batch, whose statements
// pgx sends together and reads the results of together.
type statements struct {
	mu    sync.Mutex
	sent  []string
	batch []string // the statements of the batch being sent
}

func (c *statements) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.mu.Lock()
	c.batch = nil
	c.mu.Unlock()
	return ctx
}

func (c *statements) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	c.mu.Lock()
	c.batch = append(c.batch, d.SQL)
	c.mu.Unlock()
}

func (c *statements) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {
	c.mu.Lock()
	c.sent = append(c.sent, "batch: "+strings.Join(c.batch, "; "))
	c.mu.Unlock()
}

func (c *statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	c.mu.Lock()
	c.sent = append(c.sent, d.SQL)
	c.mu.Unlock()
	return ctx
}

func (*statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *statements) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	sent := c.sent
	c.sent = nil
	return sent
}

// cycleRoundTripBudget bounds the round trips of a cycle on PostgreSQL:
// 24 at 66244c5, 23 once a turn's record became its first park, 5 once
// each write was one statement or one batch (pgwrites.go).
const cycleRoundTripBudget = 5

// TestCycleRoundTripsPostgres counts the statements each write of a cycle
// sends to PostgreSQL, each a round trip on the network (issue 39, item 4),
// and prints them with -v.
func TestCycleRoundTripsPostgres(t *testing.T) {
	var sent statements
	s := openCfg(t, postgresDSN(t), config{tracer: &sent})
	ctx := context.Background()
	if err := storetest.Cycle(ctx, s, store.NewID()); err != nil { // the statements prepared, the pool warm
		t.Fatal(err)
	}
	sent.take()
	var table strings.Builder
	total := 0
	for _, step := range storetest.CycleSteps(ctx, s, store.NewID()) {
		if err := step.Run(); err != nil {
			t.Fatalf("%s: %v", step.Name, err)
		}
		qs := sent.take()
		total += len(qs)
		fmt.Fprintf(&table, "%s: %d round trips\n", step.Name, len(qs))
		for _, q := range qs {
			fmt.Fprintf(&table, "    %s\n", strings.Join(strings.Fields(q), " "))
		}
	}
	t.Logf("a cycle on PostgreSQL:\n%s%d round trips", table.String(), total)
	if total > cycleRoundTripBudget {
		t.Errorf("a cycle takes %d round trips, over the budget of %d", total, cycleRoundTripBudget)
	}
}

// TestResumeLeavesConversationPostgres: a resume (a new session on the
// conversation, the take of its park with the answer's message, the
// turn's last step with its messages) writes none of the conversation's
// row. A foreign key to conversations locked the row (FOR KEY SHARE) on
// every insert of a session or message, and a lock writes the row's page:
// at a million waiting asks that page is cold, and its first write after
// a checkpoint is the whole page in the WAL (migration 13). A lock sets
// the row's xmax; the test checks it stays as the park left it.
func TestResumeLeavesConversationPostgres(t *testing.T) {
	s := openT(t, postgresDSN(t))
	ctx := context.Background()
	id := store.NewID()
	steps := storetest.CycleSteps(ctx, s, id)
	for _, step := range steps[:3] { // up to save_park: the ask waits
		if err := step.Run(); err != nil {
			t.Fatalf("%s: %v", step.Name, err)
		}
	}
	xmax := func() (x string) {
		t.Helper()
		if err := s.db.DB.QueryRowContext(ctx, `SELECT xmax::text FROM conversations WHERE id = $1`, id).Scan(&x); err != nil {
			t.Fatal(err)
		}
		return x
	}
	parked := xmax()
	if err := s.CreateSession(ctx, &store.Session{ID: id + "-s2", ConversationID: id, AgentID: "agent"}); err != nil {
		t.Fatal(err)
	}
	for _, step := range steps[3:] { // take_park, save_step
		if err := step.Run(); err != nil {
			t.Fatalf("%s: %v", step.Name, err)
		}
	}
	if after := xmax(); after != parked {
		t.Errorf("the conversation's xmax went from %s to %s over a resume: its row was locked, so its page written", parked, after)
	}
}
