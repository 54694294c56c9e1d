// Package readmetest checks that a snippet the README shows is the code of
// an example that compiles and runs, not a copy that drifted from it.
package readmetest

import (
	"os"
	"strings"
	"testing"
)

// HasFunc fails t unless the README at readme holds, word for word, the
// top-level function of source file src whose declaration starts with
// decl (such as "func bookDemo(").
func HasFunc(t testing.TB, readme, src, decl string) {
	t.Helper()
	doc, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	code, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(code), decl)
	if start < 0 {
		t.Fatalf("%s has no %s…", src, decl)
	}
	end := strings.Index(string(code[start:]), "\n}\n")
	if end < 0 {
		t.Fatalf("%s: %s… does not end", src, decl)
	}
	if !strings.Contains(string(doc), string(code[start:start+end+3])) {
		t.Errorf("%s's %s… is not %s's: copy it again", readme, decl, src)
	}
}
