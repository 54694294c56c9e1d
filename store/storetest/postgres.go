package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// PostgresDB creates a fresh database on the PostgreSQL server that
// KINDKIT_TEST_POSTGRES names (scripts/postgres.sh starts one), drops it
// when t ends, and returns its URL. Without the variable the test is
// skipped, except under CI=true, where a missing service is a failure.
func PostgresDB(t testing.TB) string {
	t.Helper()
	admin := os.Getenv("KINDKIT_TEST_POSTGRES")
	if admin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("KINDKIT_TEST_POSTGRES is not set in CI: start PostgreSQL with scripts/postgres.sh")
		}
		t.Skip("KINDKIT_TEST_POSTGRES not set; eval \"$(scripts/postgres.sh | tail -1)\" to run the PostgreSQL tests")
	}
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("KINDKIT_TEST_POSTGRES: %v", err)
	}
	var b [6]byte
	rand.Read(b[:])
	name := "kk_" + hex.EncodeToString(b[:])
	if err := adminExec(admin, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		if err := adminExec(admin, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}

// adminExec runs one statement on its own connection, closed at once so
// no idle connection keeps the database busy.
func adminExec(dsn, query string) error {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = db.ExecContext(ctx, query)
	return err
}
