package main

import (
	"bufio"
	"bytes"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestWalkthrough follows docs/adding-a-kind.md in a copy of the
// project: kindgen new poll, every block of the page that names a file,
// then go generate and go vet over the whole copy, and the tests that prove
// the page: the kinds' packages (the catalog with poll in it) and the
// scenarios (poll-park-resume among them). Then it deletes the kind and
// checks that the generated tree is back to what it was, whole file by
// whole file, and that the project still compiles (go vet). The page cannot rot without this test failing.
func TestWalkthrough(t *testing.T) {
	if os.Getenv("KINDKIT_WALKTHROUGH") != "" {
		t.Skip("already inside the walkthrough's copy")
	}
	if testing.Short() {
		t.Skip("copies the project and runs the go command")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dst := copyProject(t, repo)
	run := func(name string, args ...string) {
		t.Helper()
		runIn(t, dst, []string{"KINDKIT_WALKTHROUGH=1"}, name, args...)
	}

	run("go", "tool", "kindgen", "new", "poll")
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
		if strings.HasSuffix(rel, ".go") {
			// The page's code imports the project as docModule; a copy of
			// the project under another module path imports its own.
			body = renameModule(t, body, docModule, module, false)
		}
		if err := os.WriteFile(filepath.Join(dst, rel), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("go", "generate", "./...")
	run("go", "vet", "./...")
	run("go", "test", "-count=1", "./kinds/...")
	run("go", "test", "-count=1", "-run", "^TestScenarios$", "./server")

	// Removing the kind: delete its schema and rules, regenerate, build.
	for _, rel := range []string{"spec/interactions/poll.schema.json", "kinds/poll", "spec/conformance/scenarios/poll-park-resume.json"} {
		if err := os.RemoveAll(filepath.Join(dst, rel)); err != nil {
			t.Fatal(err)
		}
	}
	run("go", "generate", "./...")
	diffTrees(t, generatedFiles(t, repo), generatedFiles(t, dst))
	run("go", "vet", "./...")
}

// docModule is the module path the docs' code imports.
const docModule = "github.com/kindkit/kindkit"

// module is this module's path (docModule, or a renamed copy's).
var module = strings.TrimSuffix(modulePrefix, "/cmd/kindgen/testdata/")

// renameModule rewrites the imports of Go source from module from to module
// to, as gonew does: the root package keeps the name kindkit in the code, so
// it is imported under that name when its new path says otherwise. In a
// file of the root package (root), the package clause is renamed too.
func renameModule(t *testing.T, src []byte, from, to string, root bool) []byte {
	t.Helper()
	if from == to {
		return src
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	type edit struct {
		start, end token.Pos
		text       string
	}
	var edits []edit
	oldName, newName := path.Base(from), path.Base(to)
	if name := f.Name.Name; root && (name == oldName || name == oldName+"_test") {
		edits = append(edits, edit{f.Name.Pos(), f.Name.End(), newName + strings.TrimPrefix(name, oldName)})
	}
	for _, spec := range f.Imports {
		p, _ := strconv.Unquote(spec.Path.Value)
		switch {
		case p == from && spec.Name == nil && newName != oldName:
			edits = append(edits, edit{spec.Path.Pos(), spec.Path.End(), oldName + " " + strconv.Quote(to)})
		case p == from:
			edits = append(edits, edit{spec.Path.Pos(), spec.Path.End(), strconv.Quote(to)})
		case strings.HasPrefix(p, from+"/"):
			edits = append(edits, edit{spec.Path.Pos(), spec.Path.End(), strconv.Quote(to + strings.TrimPrefix(p, from))})
		}
	}
	out := append([]byte(nil), src...)
	for i := len(edits) - 1; i >= 0; i-- { // from the end, so offsets stay right
		start, end := fset.Position(edits[i].start).Offset, fset.Position(edits[i].end).Offset
		out = append(out[:start:start], append([]byte(edits[i].text), out[end:]...)...)
	}
	return out
}

// copyProject copies the project at repo into a temporary folder beside a
// link to ../shared (the tests read the reference corpus there) and
// returns the copy's root. It copies what git sees in the work tree, tracked
// or not (ignored files left out), or, outside git or in a repository with
// nothing in it yet, every file but .git's.
func copyProject(t *testing.T, repo string) string {
	t.Helper()
	work := t.TempDir()
	dst := filepath.Join(work, "project")
	if err := os.Symlink(filepath.Join(repo, "..", "shared"), filepath.Join(work, "shared")); err != nil {
		t.Fatal(err)
	}
	var files []string
	out, err := exec.Command("git", "-C", repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err == nil {
		for _, rel := range strings.Split(string(out), "\x00") {
			if rel != "" {
				files = append(files, rel)
			}
		}
	}
	if len(files) == 0 {
		err := filepath.WalkDir(repo, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == ".git" {
				return fs.SkipDir
			}
			if !d.IsDir() {
				rel, _ := filepath.Rel(repo, p)
				files = append(files, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, rel := range files {
		src := filepath.Join(repo, rel)
		if fi, err := os.Stat(src); err != nil || fi.IsDir() {
			continue // deleted in the work tree, or a nested repository
		}
		data, err := os.ReadFile(src)
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
	return dst
}

// runIn runs a command in dir with env added, and fails the test with its
// output if it fails.
func runIn(t *testing.T, dir string, env []string, name string, args ...string) {
	t.Helper()
	start := time.Now()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	t.Logf("%s %s: %s", name, strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
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
