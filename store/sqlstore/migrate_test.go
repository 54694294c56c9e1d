package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kindkit/kindkit/store"
)

// v1Rows are rows in the shape of schema version 1, written as an older
// kindkit wrote them. Version 1 never changes, so neither does this.
var v1Rows = []string{
	`INSERT INTO conversations (id, owner, supports, model_pos, created_at) VALUES ('c1', 'ann', '["choices"]', 2, 1764493200000000001)`,
	`INSERT INTO sessions (id, conversation_id, agent_id, agent_name, user_name, contact_email, contact_phone, user_participant_id, agent_participant_id)
		VALUES ('s1', 'c1', 'agent', 'Agent', 'Ann', 'ann@example.com', '', 'up', 'ap')`,
	`INSERT INTO messages (id, conversation_id, role, text, tool_calls, tool_call_id, tool_name, is_error, created_at)
		VALUES ('m1', 'c1', 'user', 'hello', NULL, '', '', FALSE, 1764493200000000002)`,
	`INSERT INTO messages (id, conversation_id, role, text, tool_calls, tool_call_id, tool_name, is_error, created_at)
		VALUES ('m2', 'c1', 'assistant', '', '[{"id":"call1","name":"raise_choices","arguments":"{}"}]', '', '', FALSE, 1764493200000000003)`,
	`INSERT INTO parks (id, type, conversation_id, session_id, kind, spec, reason, tool_call, deadline, state, turn)
		VALUES ('p1', 'interaction', 'c1', 's1', 'choices', '{"question":"Which?"}', 'why', '{"id":"call1","name":"raise_choices","arguments":"{}"}',
		1764493260000000000, 'pending', '{"requestId":"r1","text":"so far","usage":{"promptTokens":10,"completionTokens":5},"stashed":{"k":"v"}}')`,
}

func checkV1Data(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	base := time.Unix(0, 1764493200000000000)
	c, err := s.Conversation(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	want := &store.Conversation{ID: "c1", Owner: "ann", Supports: []string{"choices"}, ModelPos: 2, CreatedAt: base.Add(1)}
	if d := cmp.Diff(want, c); d != "" {
		t.Errorf("conversation (-want +got):\n%s", d)
	}
	sess, err := s.Session(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if sess.ContactEmail != "ann@example.com" || sess.ConversationID != "c1" {
		t.Errorf("session = %+v", sess)
	}
	msgs, more, err := s.Messages(ctx, "c1", nil, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	wantMsgs := []*store.Message{
		{ID: "m2", ConversationID: "c1", Role: store.RoleAssistant, ToolCalls: []store.ToolCall{{ID: "call1", Name: "raise_choices", Arguments: "{}"}}, CreatedAt: base.Add(3)},
		{ID: "m1", ConversationID: "c1", Role: store.RoleUser, Text: "hello", CreatedAt: base.Add(2)},
	}
	if d := cmp.Diff(wantMsgs, msgs, cmpopts.IgnoreFields(store.Message{}, "Seq")); d != "" || more {
		t.Errorf("messages: more %v (-want +got):\n%s", more, d)
	}
	p, err := s.PendingPark(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != "p1" || string(p.Spec) != `{"question":"Which?"}` || !strings.Contains(string(p.Turn), `"stashed":{"k":"v"}`) || !p.Deadline.Equal(base.Add(time.Minute)) {
		t.Errorf("park = %+v", p)
	}
}

func versions(t *testing.T, s *Store) []int {
	t.Helper()
	rows, err := s.db.Query(`SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// withMigration is the embedded migrations plus one more for d.
func withMigration(t *testing.T, d dialect, name, sql string) fs.FS {
	m := fstest.MapFS{}
	err := fs.WalkDir(embedded, "migrations", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := fs.ReadFile(embedded, p)
		m[p] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	m["migrations/"+d.String()+"/"+name] = &fstest.MapFile{Data: []byte(sql)}
	return m
}

// TestMigrateUpgrade: a database made at version 1 by an older kindkit is
// upgraded in place, its data intact; a failing migration leaves it as it
// was; a database newer than this kindkit is refused.
func TestMigrateUpgrade(t *testing.T) {
	for _, dc := range dsns(t) {
		t.Run(dc.name, func(t *testing.T) {
			ctx := context.Background()
			dsn := dc.open(t)
			s, err := open(ctx, dsn, config{upTo: 1})
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range v1Rows {
				if _, err := s.db.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			if v := versions(t, s); !slices.Equal(v, []int{1}) {
				t.Errorf("versions after upTo 1: %v", v)
			}
			s.Close()

			// Today's Open: whatever came after version 1 is applied.
			s = openT(t, dsn)
			checkV1Data(t, s)
			n := len(versions(t, s))
			s.Close()

			// A failing migration changes nothing.
			bad := withMigration(t, dc.dialect(), "9999_bad.sql", "CREATE TABLE later (x INTEGER); THIS IS NOT SQL;")
			if _, err := open(ctx, dsn, config{migrations: bad}); err == nil {
				t.Fatal("a migration with a gap and bad SQL was applied")
			}
			bad = withMigration(t, dc.dialect(), pad(n+1)+"_bad.sql", "CREATE TABLE later (x INTEGER); THIS IS NOT SQL;")
			if _, err := open(ctx, dsn, config{migrations: bad}); err == nil || !strings.Contains(err.Error(), "_bad.sql") {
				t.Fatalf("bad migration: err = %v", err)
			}
			s = openT(t, dsn)
			if v := versions(t, s); len(v) != n {
				t.Errorf("versions after a failed migration: %v, want %d", v, n)
			}
			if _, err := s.db.Exec(`SELECT x FROM later`); err == nil {
				t.Error("the failed migration's table exists")
			}
			checkV1Data(t, s)
			s.Close()

			// A good next migration is applied once, and the store works on.
			good := withMigration(t, dc.dialect(), pad(n+1)+"_note.sql",
				"ALTER TABLE conversations ADD COLUMN note TEXT; CREATE TABLE later (x INTEGER);")
			s = openCfg(t, dsn, config{migrations: good})
			if v := versions(t, s); len(v) != n+1 || v[n] != n+1 {
				t.Errorf("versions after the next migration: %v", v)
			}
			checkV1Data(t, s)
			if _, ok, err := s.TakePark(ctx, "p1", store.Answer{State: store.ParkResolved}); err != nil || !ok {
				t.Errorf("TakePark after upgrade = %v, %v", ok, err)
			}
			s = openCfg(t, dsn, config{migrations: good}) // nothing left to apply
			if v := versions(t, s); len(v) != n+1 {
				t.Errorf("versions after opening again: %v", v)
			}

			// This kindkit does not know that last version: it refuses.
			if _, err := Open(ctx, dsn); err == nil || !strings.Contains(err.Error(), "newer") {
				t.Errorf("Open of a newer database: err = %v, want a refusal", err)
			}
		})
	}
}

// TestMigrateConcurrent: processes opening one fresh database at once
// migrate it once between them.
func TestMigrateConcurrent(t *testing.T) {
	for _, dc := range dsns(t) {
		t.Run(dc.name, func(t *testing.T) {
			dsn := dc.open(t)
			var wg sync.WaitGroup
			errs := make([]error, 4)
			stores := make([]*Store, 4)
			for i := range 4 {
				wg.Go(func() { stores[i], errs[i] = Open(context.Background(), dsn) })
			}
			wg.Wait()
			for _, s := range stores {
				if s != nil {
					defer s.Close()
				}
			}
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			if v := versions(t, stores[0]); len(v) == 0 || v[0] != 1 {
				t.Errorf("versions = %v", v)
			}
		})
	}
}

func TestLoadMigrations(t *testing.T) {
	for _, d := range []dialect{dialectSQLite, dialectPostgres} {
		ms, err := loadMigrations(embedded, "migrations/"+d.String())
		if err != nil || len(ms) == 0 {
			t.Fatalf("%s: %d migrations, %v", d, len(ms), err)
		}
	}
	for name, files := range map[string][]string{
		"gap":      {"0001_a.sql", "0003_c.sql"},
		"badname":  {"first.sql"},
		"zero":     {"0000_a.sql"},
		"twice":    {"0001_a.sql", "0001_b.sql"},
		"notfirst": {"0002_b.sql"},
	} {
		m := fstest.MapFS{}
		for _, f := range files {
			m["m/"+f] = &fstest.MapFile{Data: []byte("SELECT 1;")}
		}
		if _, err := loadMigrations(m, "m"); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
}

func (c dsnCase) dialect() dialect {
	if c.name == "postgres" {
		return dialectPostgres
	}
	return dialectSQLite
}

func pad(v int) string { return fmt.Sprintf("%04d", v) }

// TestMessagesWithoutAutoincrement: version 6 makes messages again without
// AUTOINCREMENT, so an append no longer rewrites sqlite_sequence. The rows
// of an older database keep their seq, and appends after the upgrade come
// after them in the history.
func TestMessagesWithoutAutoincrement(t *testing.T) {
	ctx := context.Background()
	dsn := sqliteDSN(t)
	s, err := open(ctx, dsn, config{upTo: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range v1Rows {
		if _, err := s.db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// A gap in seq, as deletes leave: the copy keeps each row's own seq.
	if _, err := s.db.Exec(`UPDATE messages SET seq = 10 WHERE id = 'm2'`); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s = openT(t, dsn)
	checkV1Data(t, s)
	var schema string
	if err := s.db.QueryRow(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'messages'`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.ToUpper(schema), "AUTOINCREMENT") {
		t.Errorf("messages is still AUTOINCREMENT: %s", schema)
	}
	if err := s.AppendMessages(ctx, &store.Message{ID: "m3", ConversationID: "c1", Role: store.RoleUser, Text: "later"}); err != nil {
		t.Fatal(err)
	}
	var seq int
	if err := s.db.QueryRow(`SELECT seq FROM messages WHERE id = 'm3'`).Scan(&seq); err != nil || seq != 11 {
		t.Errorf("seq of the message appended after the upgrade = %d, %v; want 11", seq, err)
	}
	msgs, _, err := s.Messages(ctx, "c1", nil, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range msgs {
		ids = append(ids, m.ID)
	}
	if !slices.Equal(ids, []string{"m3", "m2", "m1"}) {
		t.Errorf("history, newest first = %v", ids)
	}
	var n int
	if err := s.db.QueryRow(`SELECT COUNT(*) FROM sqlite_sequence WHERE name = 'messages'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("sqlite_sequence rows for messages = %d, %v; want none", n, err)
	}
}

// TestMigrateAddressees: version 12 gives the pending parks of an older
// database their addressee from their turn state, so an inbox finds them;
// a park that ended, or whose state only mentions the word in a string,
// gets none.
func TestMigrateAddressees(t *testing.T) {
	for _, dc := range dsns(t) {
		t.Run(dc.name, func(t *testing.T) {
			ctx := context.Background()
			dsn := dc.open(t)
			s, err := open(ctx, dsn, config{upTo: 11})
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{
				`INSERT INTO conversations (id, owner, created_at) VALUES ('c1', 'ada', 1)`,
				`INSERT INTO parks (id, type, conversation_id, tool_call, deadline, state, turn, ck) VALUES
					('p1', 'interaction', 'c1', '{}', 5, 'pending', '{"v":1,"addressee":"bob"}', 1),
					('p2', 'interaction', 'c1', '{}', 6, 'resolved', '{"v":1,"addressee":"bob"}', 1),
					('p3', 'interaction', 'c1', '{}', 7, 'pending', '{"v":1,"text":"\"addressee\": bob"}', 1),
					('p4', 'interaction', 'c1', '{}', 8, 'pending', '{"v":1,"addressee":"group:ops"}', 1)`,
			} {
				if _, err := s.db.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			s.Close()

			s = openT(t, dsn)
			got := map[string]string{}
			rows, err := s.db.Query(`SELECT id, addressee FROM parks`)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var id, to string
				if err := rows.Scan(&id, &to); err != nil {
					t.Fatal(err)
				}
				got[id] = to
			}
			rows.Close()
			want := map[string]string{"p1": "bob", "p2": "", "p3": "", "p4": "group:ops"}
			if !maps.Equal(got, want) {
				t.Errorf("addressees after the upgrade = %v, want %v", got, want)
			}
			ps, err := s.Inbox(ctx, store.InboxQuery{Addressees: []string{"bob", "group:ops"}, Owner: "bob", Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, p := range ps {
				ids = append(ids, p.ID)
			}
			if !slices.Equal(ids, []string{"p1", "p4"}) {
				t.Errorf("bob's inbox after the upgrade = %v, want [p1 p4]", ids)
			}
		})
	}
}
