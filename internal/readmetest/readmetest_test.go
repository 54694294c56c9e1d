package readmetest_test

import (
	"testing"

	"github.com/kindkit/kindkit/internal/readmetest"
)

// docs/own-module.md ("Use kindkit in your own module") shows examples/acme's files
// as they are; CI builds and tests that module (.ci/run).
func TestAcme(t *testing.T) {
	readmetest.Files(t, "../../docs/own-module.md", "Use kindkit in your own module", "../../examples/acme")
}
