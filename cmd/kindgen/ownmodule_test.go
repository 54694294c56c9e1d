package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kindkit/kindkit/internal/readmetest"
)

// TestOwnModule follows docs/own-module.md ("Use kindkit in your own
// module", once the README's section) in a fresh module outside the
// project, command by command: its sh blocks (the checkout variant in place
// of go get -tool, which needs kindkit on the module proxy, with this
// project as the checkout), the poll's schema and rules from
// docs/adding-a-kind.md (their import moved to the module, as the section
// says), and every file the section shows. Then go generate must
// change nothing, and go vet and go test pass. The section cannot rot
// without this test failing.
func TestOwnModule(t *testing.T) {
	if testing.Short() {
		t.Skip("makes a module and runs the go command")
	}
	if module != docModule {
		t.Skip("docs/own-module.md's commands name " + docModule + "; this copy is " + module)
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	section := readmetest.Section(t, filepath.Join(repo, "docs", "own-module.md"), "Use kindkit in your own module")
	shell := regexp.MustCompile("(?ms)^```sh\n(.*?)^```$").FindAllStringSubmatch(section, -1)
	if len(shell) != 3 {
		t.Fatalf("the section has %d sh blocks, want 3: start, the checkout variant, then", len(shell))
	}
	lines := func(block string) []string {
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(block), "\n") {
			l, _, _ = strings.Cut(l, "   #") // a comment after the command
			out = append(out, strings.TrimSpace(l))
		}
		return out
	}

	dir := filepath.Join(t.TempDir(), "acme")
	run := func(line string) {
		t.Helper()
		runIn(t, dir, []string{"GOWORK=off"}, "sh", "-c", line)
	}
	for _, l := range lines(shell[0][1]) {
		switch {
		case l == "mkdir acme && cd acme":
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(l, "go get -tool "):
			for _, c := range lines(shell[1][1]) {
				if !strings.Contains(c, "=../kindkit") && strings.HasPrefix(c, "go mod edit") {
					t.Fatalf("the checkout variant %q names no ../kindkit", c)
				}
				run(strings.ReplaceAll(c, "=../kindkit", "="+repo))
			}
		default:
			run(l)
		}
	}

	docs, err := os.ReadFile(filepath.Join(repo, "docs", "adding-a-kind.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := fileBlocks(t, docs)
	write := func(rel string, body []byte) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("spec/interactions/poll.schema.json", files["spec/interactions/poll.schema.json"])
	write("kinds/poll/rules.go", []byte(strings.ReplaceAll(string(files["kinds/poll/rules.go"]),
		`"`+docModule+`/gen/pollgen"`, `"example.com/acme/gen/pollgen"`)))
	shown := fileBlocks(t, []byte(section))
	if len(shown) == 0 {
		t.Fatal("the section shows no file")
	}
	for rel, body := range shown {
		write(rel, body)
	}

	for _, l := range lines(shell[2][1]) {
		if strings.HasPrefix(l, "go run ") {
			continue // a server, for a run by hand
		}
		run(l)
		if l == "go generate ./..." {
			before := generatedFiles(t, dir)
			run(l)
			diffTrees(t, before, generatedFiles(t, dir))
		}
	}
	run("go vet ./...")
}
