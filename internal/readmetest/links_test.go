package readmetest_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kindkit/kindkit/internal/readmetest"
)

// Every relative link of the README and of docs/ leads to a file that
// exists, and an #anchor to a heading of it: a section that moves takes
// its links along, and the pages that point at it follow.
func TestLinks(t *testing.T) {
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("no docs/*.md")
	}
	broken, err := readmetest.BrokenLinks(append([]string{"../../README.md"}, docs...))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range broken {
		t.Error(b)
	}
}

// BrokenLinks finds a missing file, a missing heading and a missing image,
// and leaves alone links in code, absolute URLs and links that resolve.
func TestBrokenLinksFound(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("docs/page.md", "# A page\n\n## What's in it, and why?\n\n## Again\n\n## Again\n")
	write("docs/shot.png", "")
	readme := write("README.md", "See [the page](docs/page.md), [why](docs/page.md#whats-in-it-and-why),\n"+
		"[twice](docs/page.md#again-1), [here](#top), ![a shot](docs/shot.png) and [a site](https://example.com/x).\n"+
		"Broken: [gone](docs/gone.md), [no heading](docs/page.md#nowhere), ![no shot](docs/none.png).\n"+
		"In code: `[x](nothing.md)` and\n\n```go\nv := a[i](nothing.md)\n```\n\n# Top\n")
	broken, err := readmetest.BrokenLinks([]string{readme})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		readme + ": docs/gone.md: no such file",
		readme + ": docs/page.md#nowhere: " + filepath.Join(dir, "docs/page.md") + " has no heading #nowhere",
		readme + ": docs/none.png: no such file",
	}
	if !slices.Equal(broken, want) {
		t.Errorf("broken links:\n%q\nwant\n%q", broken, want)
	}
}
