package server_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kindkit/kindkit/internal/scenario"
	"github.com/kindkit/kindkit/server"
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

func TestScenarios(t *testing.T) {
	for _, dir := range scenarioDirs(t) {
		scenarios, err := scenario.LoadDir(dir)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if len(scenarios) == 0 {
			t.Fatalf("%s: no scenarios", dir)
		}
		for _, sc := range scenarios {
			t.Run(filepath.Base(dir)+"/"+filepath.Base(sc.File), func(t *testing.T) {
				runScenario(t, sc)
			})
		}
	}
}

// runScenario boots a fresh server (in-memory store, no auth) with the
// scenario's script and tools on a real port, and runs it on one socket.
func runScenario(t *testing.T, sc *scenario.Scenario) {
	t.Helper()
	if len(sc.Server.Knowledge) > 0 {
		t.Fatal("server.knowledge (citations) is not supported by kindkit")
	}
	entries := make([]server.ScriptEntry, len(sc.MockLLMScript))
	for i, e := range sc.MockLLMScript {
		entries[i] = server.ScriptEntry{Kind: e.Kind, Text: e.Text, Name: e.Name, Arguments: e.Arguments, ID: e.ID}
	}
	model, err := server.NewScripted(entries)
	if err != nil {
		t.Fatal(err)
	}
	cfg := server.Config{Model: model, ConfirmTools: sc.Server.ConfirmTools}
	for _, tool := range sc.Server.Tools {
		params := tool.Parameters
		if len(params) == 0 {
			params = scenario.DefaultToolParameters
		}
		cfg.Tools = append(cfg.Tools, server.FixedTool{Tool: server.Tool{Name: tool.Name, Description: tool.Description, Parameters: params}, Result: tool.Result})
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
