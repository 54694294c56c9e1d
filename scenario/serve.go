package scenario

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/agent"
	"github.com/kindkit/kindkit/internal/servertest"
	"github.com/kindkit/kindkit/knowledge"
	"github.com/kindkit/kindkit/store"
)

// Setup is what a scenario runs on besides what its file says: the
// module's kinds, host tools and hooks. The zero Setup is kindkit's
// built-in kinds alone.
type Setup struct {
	Catalog *kindkit.Catalog // nil: kindkit's built-in kinds
	Tools   []agent.HostTool // the host's tools, beside the scenario's own
	Hooks   []kindkit.Hook   // run with every accepted answer of their kind
	Store   store.Store      // nil: a fresh memory store for each scenario
}

// Test runs every scenario file (*.json) in each of dirs on setup, one
// subtest per file, each against a fresh server: see Serve. A folder
// without a scenario fails t, so a mistyped path cannot pass.
func Test(t *testing.T, setup Setup, dirs ...string) {
	t.Helper()
	for _, dir := range dirs {
		list, err := LoadDir(dir)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if len(list) == 0 {
			t.Fatalf("%s: no scenario files", dir)
		}
		for _, s := range list {
			t.Run(filepath.Base(dir)+"/"+filepath.Base(s.File), func(t *testing.T) {
				s.Serve(t, setup)
			})
		}
	}
}

// Serve runs s on one socket against a kindkit server of its own, on a
// loopback port until the test ends: setup's kinds, tools, hooks and
// store, with the scripted model of s's mockLlmScript and the tools,
// write-confirmation gates and knowledge its server names. It fails t
// unless s passes, or fails as a known divergence of Lang (logged).
func (s *Scenario) Serve(t *testing.T, setup Setup) {
	t.Helper()
	entries := make([]agent.ScriptEntry, len(s.MockLLMScript))
	for i, e := range s.MockLLMScript {
		entries[i] = agent.ScriptEntry{Kind: e.Kind, Text: e.Text, Name: e.Name, Arguments: e.Arguments, ID: e.ID}
	}
	model, err := agent.NewScripted(entries)
	if err != nil {
		t.Fatal(err)
	}
	cfg := servertest.Config{Catalog: setup.Catalog, Model: model, ConfirmTools: s.Server.ConfirmTools, Store: setup.Store,
		Tools: slices.Clone(setup.Tools), Hooks: setup.Hooks}
	if len(s.Server.Knowledge) > 0 {
		docs := make([]knowledge.Doc, len(s.Server.Knowledge))
		for i, d := range s.Server.Knowledge {
			docs[i] = knowledge.Doc{Source: d.Source, Content: d.Content}
		}
		if cfg.Knowledge, err = knowledge.New(docs); err != nil {
			t.Fatal(err)
		}
	}
	for _, tool := range s.Server.Tools {
		params := tool.Parameters
		if len(params) == 0 {
			params = DefaultToolParameters
		}
		cfg.Tools = append(cfg.Tools, agent.FixedTool(agent.Tool{Name: tool.Name, Description: tool.Description, Parameters: params}, tool.Result))
	}
	srv := servertest.Start(t, cfg, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res := s.Check(ctx, srv.WS(), Lang, WithLogf(t.Logf))
	if res.Tolerated {
		t.Logf("known divergence (%s): %v", s.KnownDivergencesReason, res.Err)
	}
	if err := res.Failure(); err != nil {
		t.Fatal(err)
	}
}
