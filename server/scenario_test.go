package server_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/kindkit/kindkit/scenario"
	"github.com/kindkit/kindkit/store"
	"github.com/kindkit/kindkit/store/memstore"
	"github.com/kindkit/kindkit/store/sqlstore"
	"github.com/kindkit/kindkit/store/storetest"
)

// scenarioDirs are the corpora every run checks: the reference corpus
// (read in place, never copied), kindkit's own scenarios, and the folder
// named by SCENARIOS_DIR when it is set.
func scenarioDirs(t *testing.T) []string {
	dirs := []string{"../../shared/reference/scenarios", "../spec/conformance/scenarios"}
	if d := os.Getenv("SCENARIOS_DIR"); d != "" {
		dirs = append(dirs, d)
	}
	return dirs
}

// TestScenarios runs every scenario on each store: parks and history go
// through the store, so a store that bends the protocol fails here.
func TestScenarios(t *testing.T) {
	for _, st := range scenarioStores(t) {
		t.Run(st.name, func(t *testing.T) {
			db := st.open(t)
			for _, dir := range scenarioDirs(t) {
				runDir(t, dir, db)
			}
		})
	}
}

type namedStore struct {
	name string
	open func(t *testing.T) store.Store
}

// scenarioStores are memory, SQLite, and PostgreSQL when
// KINDKIT_TEST_POSTGRES names a server (required under CI=true). One
// database per store serves every scenario: each scenario works in
// conversations of its own.
func scenarioStores(t *testing.T) []namedStore {
	stores := []namedStore{
		{"memory", func(t *testing.T) store.Store { return memstore.New() }},
		{"sqlite", func(t *testing.T) store.Store {
			return openSQL(t, "sqlite:"+filepath.Join(t.TempDir(), "kindkit.db"))
		}},
	}
	if os.Getenv("KINDKIT_TEST_POSTGRES") != "" {
		stores = append(stores, namedStore{"postgres", func(t *testing.T) store.Store { return openSQL(t, storetest.PostgresDB(t)) }})
	} else if os.Getenv("CI") == "true" {
		t.Fatal("KINDKIT_TEST_POSTGRES is not set: CI must start PostgreSQL (scripts/postgres.sh)")
	}
	return stores
}

func openSQL(t *testing.T, dsn string) store.Store {
	t.Helper()
	s, err := sqlstore.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func runDir(t *testing.T, dir string, db store.Store) {
	t.Helper()
	scenarios, err := scenario.LoadDir(dir)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	for _, sc := range scenarios {
		t.Run(filepath.Base(dir)+"/"+filepath.Base(sc.File), func(t *testing.T) {
			sc.Serve(t, scenario.Setup{Store: db}) // kindkit's own kinds
		})
	}
}
