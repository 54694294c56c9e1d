package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/storetest"
)

// hotPath runs, on s, every store operation of a cycle, a resume on a new
// session and the engine's sweep: what must cost the same with a million
// parks in the store as with a thousand.
func hotPath(t *testing.T, s store.Store) {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(storetest.Cycle(ctx, s, "a"))
	// A resume: the conversation, a new session on it, the card, the
	// history and its pages, the submit.
	_, err := s.Conversation(ctx, "a")
	must(err)
	must(s.CreateSession(ctx, &store.Session{ID: "a-s2", ConversationID: "a"}))
	must(s.SetSupports(ctx, "a", []string{"choice_chips"}))
	_, err = s.Session(ctx, "a-s2")
	must(err)
	now := time.Now()
	call := store.ToolCall{ID: "call2", Name: "request_choices", Arguments: "{}"}
	_, err = s.SavePark(ctx, &store.Park{ID: "a-p2", Type: store.ParkInteraction, ConversationID: "a", SessionID: "a-s2", Kind: "choices",
		Spec: json.RawMessage(`{}`), ToolCall: call, Deadline: now.Add(time.Hour), State: store.ParkPending}, nil)
	must(err)
	_, err = s.PendingPark(ctx, "a")
	must(err)
	if _, err = s.OwedTurn(ctx, "a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("OwedTurn = %v, want ErrNotFound", err)
	}
	_, _, err = s.Messages(ctx, "a", []store.Role{store.RoleUser, store.RoleAssistant, store.RoleTool}, "", 50)
	must(err)
	_, _, err = s.Messages(ctx, "a", []store.Role{store.RoleUser, store.RoleReply}, "a-m5", 50)
	must(err)
	_, err = s.EndedParks(ctx, "a", now.Add(-time.Hour), "a-m5", 500)
	must(err)
	l := store.Lease{ParkID: "a-p2", Owner: "o", Until: now.Add(time.Minute)}
	_, ok, err := s.TakePark(ctx, "a-p2", store.Answer{State: store.ParkResolved, Lease: &l,
		Messages: []*store.Message{{ID: "a-m6", ConversationID: "a", Role: store.RoleTool, ToolCallID: call.ID, CreatedAt: now}}})
	must(err)
	if !ok {
		t.Fatal("TakePark: not taken")
	}
	must(s.RenewLease(ctx, l))
	must(s.SetModelPos(ctx, "a", 1))
	pos := 2
	must(s.SaveStep(ctx, l, store.Step{ModelPos: &pos, Messages: []*store.Message{{ID: "a-m7", ConversationID: "a", Role: store.RoleAssistant, CreatedAt: now}}}))
	_, err = s.SavePark(ctx, &store.Park{ID: "a-p3", Type: store.ParkInteraction, ConversationID: "a", SessionID: "a-s2", Kind: "choices",
		Spec: json.RawMessage(`{}`), ToolCall: call, Deadline: now.Add(time.Hour), State: store.ParkPending}, &l)
	must(err)
	// The sweep.
	_, err = s.ExpiredParks(ctx, now, 100)
	must(err)
	_, err = s.OwedTurns(ctx, now, 100)
	must(err)
	_, _, err = s.ClaimTurn(ctx, store.Lease{ParkID: "a-p3", Owner: "o2", Until: now.Add(time.Minute)}, now)
	must(err)
}

// hotQueries runs hotPath on a SQLite file and returns every statement it
// prepared: all the statements of the hot path, as both dialects run them.
func hotQueries(t *testing.T) []string {
	s := openT(t, sqliteDSN(t))
	hotPath(t, s)
	var qs []string
	for _, p := range []*pool{s.db, s.rdb} {
		p.mu.Lock()
		qs = slices.AppendSeq(qs, maps.Keys(p.stmts))
		p.mu.Unlock()
	}
	// The group commit's own, which its last write's reply made visible.
	qs = slices.AppendSeq(qs, maps.Keys(s.commits.raw.stmts))
	qs = slices.DeleteFunc(qs, func(q string) bool {
		verb, _, _ := strings.Cut(strings.TrimSpace(q), " ")
		return verb != "SELECT" && verb != "UPDATE" && verb != "DELETE"
	})
	slices.Sort(qs)
	qs = slices.Compact(qs)
	if len(qs) < 10 {
		t.Fatalf("only %d statements on the hot path: %q", len(qs), qs)
	}
	return qs
}

// TestHotPathIndexesSQLite: no statement of the hot path scans a table or
// a whole index (EXPLAIN QUERY PLAN's "SCAN"); each finds its rows through
// an index (SEARCH), so its cost does not grow with the rows stored.
func TestHotPathIndexesSQLite(t *testing.T) {
	s := openT(t, sqliteDSN(t))
	for _, q := range hotQueries(t) {
		rows, err := s.db.DB.Query(`EXPLAIN QUERY PLAN `+q, make([]any, params(q))...)
		if err != nil {
			t.Fatalf("explain %s: %v", q, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		for _, d := range plan {
			if strings.HasPrefix(d, "SCAN ") {
				t.Errorf("%s\n  scans: %s", q, strings.Join(plan, "; "))
				break
			}
		}
	}
}

var param = regexp.MustCompile(`\$([0-9]+)`)

// params is the number of parameters of q: its highest $N.
func params(q string) int {
	n := 0
	for _, m := range param.FindAllStringSubmatch(q, -1) {
		v, _ := strconv.Atoi(m[1])
		n = max(n, v)
	}
	return n
}

// TestHotPathIndexesPostgres: the same on PostgreSQL, on each statement's
// generic plan (what a prepared statement runs) over tables of a few
// thousand parked conversations, analyzed, with sequential scans priced
// out: no Seq Scan, and every index scan with an Index Cond (not a walk of
// a whole index).
func TestHotPathIndexesPostgres(t *testing.T) {
	s := openT(t, postgresDSN(t))
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO conversations (id, created_at, ck) SELECT 'c' || i, i, i FROM generate_series(1, 5000) i`,
		`SELECT setval(pg_get_serial_sequence('conversations', 'ck'), 5000)`,
		`INSERT INTO sessions (id, conversation_id, ck) SELECT 's' || i, 'c' || i, i FROM generate_series(1, 5000) i`,
		`INSERT INTO messages (id, conversation_id, role, created_at, ck) SELECT 'm' || i || r, 'c' || i, r, i, i FROM generate_series(1, 5000) i, (VALUES ('user'), ('assistant')) v (r)`,
		`INSERT INTO parks (id, type, conversation_id, tool_call, deadline, state, turn, ck)
			SELECT 'p' || i, 'interaction', 'c' || i, '{}', i, 'pending', '{}', i FROM generate_series(1, 5000) i`,
		// Turns owed a reply, as many as a crash under load leaves.
		`INSERT INTO parks (id, type, conversation_id, tool_call, deadline, state, turn, owed, lease_owner, lease_until, ck)
			SELECT 'q' || i, 'interaction', 'c' || i, '{}', i, 'resolved', '{}', TRUE, 'dead', i, i FROM generate_series(1, 1000) i`,
		`ANALYZE`,
	} {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, set := range []string{`SET enable_seqscan = off`, `SET plan_cache_mode = force_generic_plan`} {
		if _, err := conn.ExecContext(ctx, set); err != nil {
			t.Fatal(err)
		}
	}
	// PostgreSQL's own statements of a cycle (pgwrites.go), which the
	// SQLite store does not prepare.
	pg := []string{createWithSession, turnStartsQuery[startTurn], turnStartsQuery[startFirstTurn],
		parkSavedQuery[1], parkTakenQuery[1], stepSavedQuery[2]}
	for i, q := range append(hotQueries(t), pg...) {
		n := params(q)
		name := "hot" + strconv.Itoa(i)
		if _, err := conn.ExecContext(ctx, `PREPARE `+name+` AS `+q); err != nil {
			t.Fatalf("prepare %s: %v", q, err)
		}
		args := strings.TrimSuffix(strings.Repeat("NULL, ", n), ", ")
		var plan string
		if err := conn.QueryRowContext(ctx, `EXPLAIN (FORMAT JSON) EXECUTE `+name+`(`+args+`)`).Scan(&plan); err != nil {
			t.Fatalf("explain %s: %v", q, err)
		}
		var nodes []struct{ Plan planNode }
		if err := json.Unmarshal([]byte(plan), &nodes); err != nil {
			t.Fatal(err)
		}
		for _, nd := range nodes {
			if bad := nd.Plan.scans(); bad != "" {
				t.Errorf("%s\n  %s; plan: %s", q, bad, plan)
			}
		}
	}
}

type planNode struct {
	NodeType     string     `json:"Node Type"`
	RelationName string     `json:"Relation Name"`
	IndexName    string     `json:"Index Name"`
	IndexCond    string     `json:"Index Cond"`
	Plans        []planNode `json:"Plans"`
}

// scans says which node of the plan reads a whole table or index, "" when
// none does.
func (n planNode) scans() string {
	switch n.NodeType {
	case "Seq Scan":
		return fmt.Sprintf("Seq Scan on %s", n.RelationName)
	case "Index Scan", "Index Only Scan", "Bitmap Index Scan":
		if n.IndexCond == "" {
			return fmt.Sprintf("%s of all of %s", n.NodeType, n.IndexName)
		}
	}
	for _, c := range n.Plans {
		if bad := c.scans(); bad != "" {
			return bad
		}
	}
	return ""
}

// TestEveryIndexRead: every index of the SQLite schema is read by a
// statement of the store (its plan names it), or enforces a uniqueness.
// An index that only the writes touch costs a page on every insert
// (TestCycleWrites) and buys nothing. The statements are those the
// contract suite prepares, which is every operation of the store.
func TestEveryIndexRead(t *testing.T) {
	var mu sync.Mutex
	stmts := map[string]bool{}
	t.Run("contract", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) store.Store {
			s := openT(t, sqliteDSN(t))
			t.Cleanup(func() { // before openT's Close
				mu.Lock()
				defer mu.Unlock()
				for _, p := range []*pool{s.db, s.rdb} {
					p.mu.Lock()
					for q := range p.stmts {
						stmts[q] = true
					}
					p.mu.Unlock()
				}
				for q := range s.commits.raw.stmts {
					stmts[q] = true
				}
			})
			return s
		})
	})
	s := openT(t, sqliteDSN(t))
	read := map[string][]string{} // index → the statements that read it
	using := regexp.MustCompile(`USING (?:COVERING )?INDEX (\w+)`)
	for q := range stmts {
		verb, _, _ := strings.Cut(strings.TrimSpace(q), " ")
		if verb != "SELECT" && verb != "UPDATE" && verb != "DELETE" && verb != "INSERT" && verb != "WITH" {
			continue
		}
		rows, err := s.db.DB.Query(`EXPLAIN QUERY PLAN `+q, make([]any, params(q))...)
		if err != nil {
			t.Fatalf("explain %s: %v", q, err)
		}
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			for _, m := range using.FindAllStringSubmatch(detail, -1) {
				read[m[1]] = append(read[m[1]], q)
			}
		}
		rows.Close()
	}
	rows, err := s.db.DB.Query(`SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, sql string
		if err := rows.Scan(&name, &sql); err != nil {
			t.Fatal(err)
		}
		unique := strings.HasPrefix(sql, "CREATE UNIQUE INDEX")
		t.Logf("%-30s unique %-5v read by %d statements", name, unique, len(read[name]))
		if !unique && len(read[name]) == 0 {
			t.Errorf("index %s is read by no statement of the store and enforces nothing: drop it (%s)", name, sql)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}
