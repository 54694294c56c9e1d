package main

import (
	"testing"

	"github.com/kindkit/kindkit/scenario"
)

// TestScenarios runs every scenario of testdata/scenarios against this
// module's catalog and host tools, each on a fresh server.
func TestScenarios(t *testing.T) {
	catalog, err := catalog()
	if err != nil {
		t.Fatal(err)
	}
	tools, err := tools()
	if err != nil {
		t.Fatal(err)
	}
	scenario.Test(t, scenario.Setup{Catalog: catalog, Tools: tools}, "testdata/scenarios")
}
