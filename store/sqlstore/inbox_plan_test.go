package sqlstore

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/kindkit/kindkit/store"
)

// inboxQueries are Inbox's statements, for every number of addressees.
func inboxQueries() []string {
	var qs []string
	for n := 1; n <= store.MaxInboxAddressees; n *= 2 {
		qs = append(qs, inboxQuery(n))
	}
	return qs
}

// TestInboxIndexesSQLite: Inbox reads no table whole; it finds its parks
// through parks_pending_addressee and, by the owner's conversations,
// parks_pending_conversation (SCAN of its own subqueries' rows is no read
// of a table).
func TestInboxIndexesSQLite(t *testing.T) {
	s := openT(t, sqliteDSN(t))
	tables := []string{"parks", "conversations", "messages", "sessions"}
	for _, q := range inboxQueries() {
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
		all := strings.Join(plan, "; ")
		for _, d := range plan {
			for _, table := range tables {
				if strings.HasPrefix(d, "SCAN "+table) {
					t.Errorf("%s\n  scans %s: %s", q, table, all)
				}
			}
		}
		for _, index := range []string{"parks_pending_addressee", "parks_pending_conversation", "conversations_owner"} {
			if !strings.Contains(all, "USING INDEX "+index) && !strings.Contains(all, "USING COVERING INDEX "+index) {
				t.Errorf("%s\n  does not read %s: %s", q, index, all)
			}
		}
	}
}

// TestInboxIndexesPostgres: the same on PostgreSQL's generic plans, over
// thousands of conversations and pending parks (a tenth addressed), with
// sequential scans priced out, as TestHotPathIndexesPostgres does.
func TestInboxIndexesPostgres(t *testing.T) {
	s := openT(t, postgresDSN(t))
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO conversations (id, owner, created_at, ck) SELECT 'c' || i, 'u' || (i % 500), i, i FROM generate_series(1, 5000) i`,
		`SELECT setval(pg_get_serial_sequence('conversations', 'ck'), 5000)`,
		`INSERT INTO parks (id, type, conversation_id, tool_call, deadline, state, turn, ck, addressee)
			SELECT 'p' || i, 'interaction', 'c' || i, '{}', i, 'pending', '{}', i, CASE WHEN i % 10 = 0 THEN 'u' || (i % 70) ELSE '' END
			FROM generate_series(1, 5000) i`,
		`INSERT INTO parks (id, type, conversation_id, tool_call, deadline, state, turn, ck, addressee)
			SELECT 'r' || i, 'interaction', 'c' || i, '{}', i, 'resolved', '{}', i, 'u1' FROM generate_series(1, 5000) i`,
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
	for i, q := range inboxQueries() {
		name := "inbox" + strconv.Itoa(i)
		if _, err := conn.ExecContext(ctx, `PREPARE `+name+` AS `+q); err != nil {
			t.Fatalf("prepare %s: %v", q, err)
		}
		args := strings.TrimSuffix(strings.Repeat("NULL, ", params(q)), ", ")
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
		for _, index := range []string{"parks_pending_addressee", "conversations_owner"} {
			if !strings.Contains(plan, `"Index Name": "`+index+`"`) {
				t.Errorf("%s\n  does not read %s: %s", q, index, plan)
			}
		}
	}
}
