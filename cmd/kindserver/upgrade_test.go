package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/kindkit/kindkit/store/storetest"
)

// oldStores are testdata/oldstore/cards.json: stores that the previous
// release's kindserver made (testdata/oldstore/make.go says how), each
// with the cards it left waiting.
type oldStores struct {
	Release  string   `json:"release"`
	SQLite   oldStore `json:"sqlite"`
	Postgres oldStore `json:"postgres"`
}

type oldStore struct {
	File  string `json:"file"`
	Cards []struct {
		ConversationID string `json:"conversationId"`
		InteractionID  string `json:"interactionId"`
	} `json:"cards"`
}

// A store made by the previous release (at schema version 7, with random
// UUIDv4 keys, before park records, the outbox, park groups and the
// index drops), holding cards that wait, is upgraded in place by today's
// kindserver, and every card comes back on a reconnect and answers: the
// turn resumes and replies. On SQLite and PostgreSQL.
func TestUpgradeWaitingParks(t *testing.T) {
	dir := filepath.Join("testdata", "oldstore")
	b, err := os.ReadFile(filepath.Join(dir, "cards.json"))
	if err != nil {
		t.Fatal(err)
	}
	var old oldStores
	if err := json.Unmarshal(b, &old); err != nil {
		t.Fatal(err)
	}
	restore := map[string]func(t *testing.T) (dsn string, s oldStore){
		"sqlite": func(t *testing.T) (string, oldStore) {
			db, err := os.ReadFile(filepath.Join(dir, old.SQLite.File))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "old.db")
			if err := os.WriteFile(path, db, 0o644); err != nil {
				t.Fatal(err)
			}
			return "sqlite:" + path, old.SQLite
		},
		"postgres": func(t *testing.T) (string, oldStore) {
			dump, err := os.ReadFile(filepath.Join(dir, old.Postgres.File))
			if err != nil {
				t.Fatal(err)
			}
			url := storetest.PostgresDB(t)
			db, err := sql.Open("pgx", url)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			// No arguments: pgx sends the dump as one simple query.
			if _, err := db.ExecContext(context.Background(), string(dump)); err != nil {
				t.Fatalf("restoring the old dump: %v", err)
			}
			return url, old.Postgres
		},
	}
	for name, open := range restore {
		t.Run(name, func(t *testing.T) {
			dsn, s := open(t)
			if len(s.Cards) == 0 {
				t.Fatal("the old store names no waiting cards")
			}
			p := start(t, dsn, "-script", filepath.Join(dir, "script.json"))
			for _, c := range s.Cards {
				resumeAndSubmit(t, p.url, c.ConversationID, c.InteractionID)
			}
		})
	}
}
