// Package mcptest finds the reference MCP server the tests run against
// (@modelcontextprotocol/server-everything, which scripts/mcp.sh installs
// and scripts/test.sh names in KINDKIT_TEST_MCP_EVERYTHING).
package mcptest

import (
	"os"
	"testing"
)

// Everything returns the server's entry point, to run as "node PATH
// stdio". Without it the test is skipped, and under CI=true it fails.
func Everything(t testing.TB) string {
	t.Helper()
	main := os.Getenv("KINDKIT_TEST_MCP_EVERYTHING")
	if main == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("KINDKIT_TEST_MCP_EVERYTHING is not set in CI: install the server with scripts/mcp.sh")
		}
		t.Skip(`KINDKIT_TEST_MCP_EVERYTHING not set; eval "$(scripts/mcp.sh | tail -1)" to run the MCP tests`)
	}
	return main
}
