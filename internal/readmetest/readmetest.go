// Package readmetest checks that a snippet the README or a page of docs/
// shows is the code of an example that compiles and runs, not a copy that
// drifted from it, and that their relative links lead somewhere.
package readmetest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// HasFunc fails t unless the Markdown file at readme holds, word for word, the
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

// fileBlock is a fenced block whose info string names a file: ```go file=main.go
var fileBlock = regexp.MustCompile("(?ms)^```[a-z]* file=(\\S+)\n(.*?)^```$")

// Files fails t unless every fenced block of the Markdown file's section
// under heading (see Section) that names a file= is, word for word, that
// file under dir, and the section has at least one such block.
func Files(t testing.TB, readme, heading, dir string) {
	t.Helper()
	section := Section(t, readme, heading)
	blocks := fileBlock.FindAllStringSubmatch(section, -1)
	if len(blocks) == 0 {
		t.Fatalf("%s: section %q shows no file= block", readme, heading)
	}
	for _, b := range blocks {
		code, err := os.ReadFile(filepath.Join(dir, b[1]))
		if err != nil {
			t.Errorf("%s: section %q shows %s: %v", readme, heading, b[1], err)
			continue
		}
		if string(code) != b[2] {
			t.Errorf("%s: section %q's %s is not %s: copy it again", readme, heading, b[1], filepath.Join(dir, b[1]))
		}
	}
}

// Section returns the text of the Markdown file's section under heading,
// a "# " or "## " line: from the line after it to the next "# " or "## "
// line outside a fenced block, or the end. It fails t when there is no
// such heading. A page's title ("# ") is its first section, so a section
// moved from the README to a page of its own keeps its tests.
func Section(t testing.TB, file, heading string) string {
	t.Helper()
	doc, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var section []string
	in, fenced := false, false
	for _, line := range strings.SplitAfter(string(doc), "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		top := !fenced && (strings.HasPrefix(line, "# ") || strings.HasPrefix(line, "## "))
		switch {
		case top && in:
			return strings.Join(section, "")
		case top:
			_, title, _ := strings.Cut(strings.TrimRight(line, "\n"), " ")
			in = title == heading
		case in:
			section = append(section, line)
		}
	}
	if !in {
		t.Fatalf("%s has no section %q", file, heading)
	}
	return strings.Join(section, "")
}
