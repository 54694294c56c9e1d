package server_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/scenario"
	"github.com/kindkit/kindkit/knowledge"
	"github.com/kindkit/kindkit/server"
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
			runScenario(t, sc, db)
		})
	}
}

// runScenario boots a fresh server (no auth) on the given store with the
// scenario's script, tools and knowledge on a real port, and runs it on one
// socket.
func runScenario(t *testing.T, sc *scenario.Scenario, db store.Store) {
	t.Helper()
	entries := make([]agent.ScriptEntry, len(sc.MockLLMScript))
	for i, e := range sc.MockLLMScript {
		entries[i] = agent.ScriptEntry{Kind: e.Kind, Text: e.Text, Name: e.Name, Arguments: e.Arguments, ID: e.ID}
	}
	model, err := agent.NewScripted(entries)
	if err != nil {
		t.Fatal(err)
	}
	cfg := server.Config{Model: model, ConfirmTools: sc.Server.ConfirmTools, Store: db}
	if len(sc.Server.Knowledge) > 0 {
		docs := make([]knowledge.Doc, len(sc.Server.Knowledge))
		for i, d := range sc.Server.Knowledge {
			docs[i] = knowledge.Doc{Source: d.Source, Content: d.Content}
		}
		if cfg.Knowledge, err = knowledge.New(docs); err != nil {
			t.Fatal(err)
		}
	}
	for _, tool := range sc.Server.Tools {
		params := tool.Parameters
		if len(params) == 0 {
			params = scenario.DefaultToolParameters
		}
		cfg.Tools = append(cfg.Tools, agent.FixedTool(agent.Tool{Name: tool.Name, Description: tool.Description, Parameters: params}, tool.Result))
	}
	_, url := startServer(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res := sc.Check(ctx, url, scenario.Lang, scenario.WithLogf(t.Logf))
	if res.Tolerated {
		t.Logf("known divergence (%s): %v", sc.KnownDivergencesReason, res.Err)
	}
	if err := res.Failure(); err != nil {
		t.Fatal(err)
	}
}
