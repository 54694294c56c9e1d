package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestWalkthrough follows docs/adding-a-kind.md in a copy of the
// repository: kindgen new poll, every block of the page that names a file,
// then go generate, go vet and go test over the whole copy. Then it deletes
// the kind and checks that the project still builds. The page cannot rot
// without this test failing.
func TestWalkthrough(t *testing.T) {
	if os.Getenv("KINDKIT_WALKTHROUGH") != "" {
		t.Skip("already inside the walkthrough's copy")
	}
	if testing.Short() {
		t.Skip("copies the repository and runs its tests")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	dst := filepath.Join(work, "kindkit")
	// The copy sits beside a shared/ like the repository does, for the
	// tests that read the reference corpus.
	if err := os.Symlink(filepath.Join(repo, "..", "shared"), filepath.Join(work, "shared")); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", repo, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, rel := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		data, err := os.ReadFile(filepath.Join(repo, rel))
		if os.IsNotExist(err) {
			continue // deleted in the work tree
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(name string, args ...string) {
		t.Helper()
		start := time.Now()
		cmd := exec.Command(name, args...)
		cmd.Dir = dst
		cmd.Env = append(os.Environ(), "KINDKIT_WALKTHROUGH=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		t.Logf("%s %s: %s", name, strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	}

	run("go", "run", "./cmd/kindgen", "new", "poll")
	page, err := os.ReadFile(filepath.Join(repo, "docs", "adding-a-kind.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := fileBlocks(t, page)
	for _, want := range []string{"spec/interactions/poll.schema.json", "kinds/poll/rules.go", "spec/conformance/scenarios/poll-park-resume.json"} {
		if _, ok := blocks[want]; !ok {
			t.Fatalf("the page has no block for %s", want)
		}
	}
	for rel, body := range blocks {
		if err := os.WriteFile(filepath.Join(dst, rel), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("go", "generate", "./...")
	run("go", "vet", "./...")
	run("go", "test", "-count=1", "./...")

	// Removing the kind: delete its schema and rules, regenerate, build.
	for _, rel := range []string{"spec/interactions/poll.schema.json", "kinds/poll", "spec/conformance/scenarios/poll-park-resume.json"} {
		if err := os.RemoveAll(filepath.Join(dst, rel)); err != nil {
			t.Fatal(err)
		}
	}
	run("go", "generate", "./...")
	if _, err := os.Stat(filepath.Join(dst, "gen", "poll")); !os.IsNotExist(err) {
		t.Errorf("gen/poll is still there after its schema was removed (%v)", err)
	}
	catalog, _ := os.ReadFile(filepath.Join(dst, "kinds", "catalog.gen.go"))
	if bytes.Contains(catalog, []byte("poll")) {
		t.Error("the catalog still names poll")
	}
	run("go", "build", "./...")
	run("go", "vet", "./...")
}

var fence = regexp.MustCompile("^```[a-z]+ file=(\\S+)$")

// fileBlocks returns the fenced blocks of a markdown page that name a file.
func fileBlocks(t *testing.T, page []byte) map[string][]byte {
	blocks := map[string][]byte{}
	sc := bufio.NewScanner(bytes.NewReader(page))
	var name string
	var body bytes.Buffer
	for sc.Scan() {
		line := sc.Text()
		switch {
		case name == "":
			if m := fence.FindStringSubmatch(line); m != nil {
				name = m[1]
				body.Reset()
			}
		case line == "```":
			blocks[name] = append([]byte(nil), body.Bytes()...)
			name = ""
		default:
			body.WriteString(line + "\n")
		}
	}
	if name != "" {
		t.Fatalf("unterminated block for %s", name)
	}
	return blocks
}
