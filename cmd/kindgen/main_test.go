package main

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kindkit/kindkit/internal/kindgen"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata from kindgen's output")

// modulePrefix is the import path of testdata/: each case's want/ is a tree
// of packages in this module. It follows the module's path, so a renamed
// copy of the project passes too.
var modulePrefix = strings.TrimSuffix(reflect.TypeFor[kindgen.Output]().PkgPath(), "internal/kindgen") + "cmd/kindgen/testdata/"

// TestGolden runs kindgen on every case folder under testdata. A case holds
// spec/interactions/*.schema.json and either want/ (the expected generated
// tree, compared whole file by whole file) or error.txt (the expected error
// line; nothing may be written).
func TestGolden(t *testing.T) {
	cases, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if _, err := os.Stat(filepath.Join("testdata", c.Name(), "spec")); !c.IsDir() || err != nil {
			continue // testdata/new is TestNew's
		}
		t.Run(c.Name(), func(t *testing.T) {
			dir := filepath.Join("testdata", c.Name())
			root := t.TempDir()
			copyTree(t, filepath.Join(dir, "spec"), filepath.Join(root, "spec"))
			var stdout, stderr bytes.Buffer
			code := kindgen.Main([]string{"-root", root, "-module", modulePrefix + c.Name() + "/want"}, &stdout, &stderr)

			wantErr, err := os.ReadFile(filepath.Join(dir, "error.txt"))
			if err == nil || (*update && code != 0) {
				if *update {
					os.WriteFile(filepath.Join(dir, "error.txt"), stderr.Bytes(), 0o644)
					return
				}
				if code != 1 {
					t.Errorf("exit status %d, want 1", code)
				}
				if diff := cmp.Diff(string(wantErr), stderr.String()); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				for _, out := range []string{"gen", "kinds"} {
					if _, err := os.Stat(filepath.Join(root, out)); err == nil {
						t.Errorf("a failed run wrote %s/", out)
					}
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit status %d: %s", code, stderr.String())
			}
			got := generatedFiles(t, root)
			if *update {
				want := filepath.Join(dir, "want")
				for rel := range generatedFiles(t, want) {
					os.Remove(filepath.Join(want, rel))
				}
				for rel, data := range got {
					p := filepath.Join(want, rel)
					os.MkdirAll(filepath.Dir(p), 0o755)
					if err := os.WriteFile(p, data, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				return
			}
			want := generatedFiles(t, filepath.Join(dir, "want"))
			if len(want) == 0 {
				t.Fatal("no want/ folder and no error.txt; run go test -update to create one")
			}
			diffTrees(t, want, got)
		})
	}
}

// diffTrees reports every file that differs between two trees, whole file
// against whole file.
func diffTrees(t *testing.T, want, got map[string][]byte) {
	t.Helper()
	for rel := range want {
		if _, ok := got[rel]; !ok {
			t.Errorf("%s: not generated", rel)
		}
	}
	for rel, data := range got {
		if _, ok := want[rel]; !ok {
			t.Errorf("%s: generated, but not in the golden tree", rel)
			continue
		}
		if diff := cmp.Diff(string(want[rel]), string(data)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", rel, diff)
		}
	}
}

// TestGoldenPackagesRun builds, vets and tests each golden output tree: the
// generated code must compile, and each case's hand-written behaviour test
// (want/kinds/*_test.go) drives it through the kindkit package.
func TestGoldenPackagesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	wants, _ := filepath.Glob("testdata/*/want")
	if len(wants) == 0 {
		t.Fatal("no golden output trees")
	}
	for _, w := range wants {
		pkgs := "./" + filepath.ToSlash(w) + "/..."
		for _, args := range [][]string{{"vet", pkgs}, {"test", "-count=1", pkgs}} {
			cmd := exec.Command("go", args...)
			cmd.Dir = "."
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		}
	}
}

// TestRemovedSchema deletes a kind's schema and checks that regenerating
// removes its generated files and its catalog entry: what is left is exactly
// the tree of the kind that stays, and a file kindgen did not write stays.
func TestRemovedSchema(t *testing.T) {
	root := t.TempDir()
	copyTree(t, "testdata/basic/spec", filepath.Join(root, "spec"))
	copyTree(t, "testdata/untitled-nested/spec", filepath.Join(root, "spec"))
	module := modulePrefix + "untitled-nested/want"
	run := func(args ...string) {
		t.Helper()
		var stderr bytes.Buffer
		if code := kindgen.Main(append([]string{"-root", root, "-module", module}, args...), &bytes.Buffer{}, &stderr); code != 0 {
			t.Fatalf("kindgen %s: %d %s", strings.Join(args, " "), code, stderr.String())
		}
	}
	run()
	handwritten := []byte("package pollgen\n")
	if err := os.WriteFile(filepath.Join(root, "gen/pollgen/handwritten.go"), handwritten, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "spec/interactions/poll.schema.json")); err != nil {
		t.Fatal(err)
	}
	run()
	diffTrees(t, generatedFiles(t, "testdata/untitled-nested/want"), generatedFiles(t, root))
	if got, err := os.ReadFile(filepath.Join(root, "gen/pollgen/handwritten.go")); err != nil || !bytes.Equal(got, handwritten) {
		t.Errorf("a file kindgen did not write was changed or removed: %q, %v", got, err)
	}
	run("-check")
}

// TestCheck reports stale generated code without writing.
func TestCheck(t *testing.T) {
	root := t.TempDir()
	copyTree(t, "testdata/basic/spec", filepath.Join(root, "spec"))
	var stderr bytes.Buffer
	code := kindgen.Main([]string{"-root", root, "-module", "example.com/x", "-check"}, &bytes.Buffer{}, &stderr)
	const want = `kindgen: generated code is out of date; run go generate ./...:
  gen/pollgen/elicitation.json
  gen/pollgen/kind.gen.go
  gen/pollgen/schema.json
  gen/pollgen/tool.json
  gen/pollgen/types.gen.go
  gen/pollgen/values.json
  kinds/catalog.gen.go
`
	if diff := cmp.Diff(want, stderr.String()); code != 1 || diff != "" {
		t.Errorf("-check on an empty tree: exit %d, stderr (-want +got):\n%s", code, diff)
	}
	if _, err := os.Stat(filepath.Join(root, "gen")); err == nil {
		t.Error("-check wrote files")
	}
}

func TestBadFlags(t *testing.T) {
	var stderr bytes.Buffer
	if code := kindgen.Main([]string{"-nope"}, &bytes.Buffer{}, &stderr); code != 2 {
		t.Errorf("unknown flag: exit %d", code)
	}
	if code := kindgen.Main([]string{"-root", t.TempDir()}, &bytes.Buffer{}, &stderr); code != 1 {
		t.Errorf("no go.mod and no -module: exit %d", code)
	}
}

// generatedFiles reads every file kindgen writes under root (*.gen.go, and
// the schema files under gen/), keyed by slash path.
func generatedFiles(t *testing.T, root string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if !strings.HasSuffix(rel, ".gen.go") && !(strings.HasPrefix(rel, "gen/") && strings.HasSuffix(rel, ".json")) {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[rel] = data
		return nil
	})
	return files
}

// allFiles reads every file under root, keyed by slash path.
func allFiles(t *testing.T, root string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = data
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// kindgen new scaffolds a kind that generates at once, and never
// overwrites. In a module with no go:generate line for kindgen it writes one
// (kinds/doc.go). What it writes (schema, rules, and what kindgen generates from
// them) is compared whole with testdata/new/want, a tree of this module that
// TestGoldenPackagesRun builds.
func TestNew(t *testing.T) {
	root := t.TempDir()
	gomod := "module " + modulePrefix + "new/want\n\ngo 1.26\n"
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := kindgen.Main([]string{"new", "-root", root, "star_rating"}, &stdout, &stderr); code != 0 {
		t.Fatalf("kindgen new: %d %s", code, stderr.String())
	}
	wantOut := "wrote kinds/doc.go\nwrote kinds/starrating/rules.go\nwrote spec/interactions/star-rating.schema.json\n" +
		"go.mod has no tool directive for kindgen, which go generate runs: go get -tool " + kindgen.KindgenPath + "\n"
	if diff := cmp.Diff(wantOut, stdout.String()); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	got := allFiles(t, root)
	delete(got, "go.mod")
	want := filepath.Join("testdata", "new", "want")
	if *update {
		os.RemoveAll(want)
		for rel, data := range got {
			p := filepath.Join(want, rel)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	diffTrees(t, allFiles(t, want), got)
	for name, args := range map[string][]string{
		"existing":     {"new", "-root", root, "star_rating"},
		"not snake":    {"new", "-root", root, "StarRating"},
		"keyword":      {"new", "-root", root, "func"},
		"no name":      {"new", "-root", root},
		"two names":    {"new", "-root", root, "a", "b"},
		"bad trailing": {"new", "-root", root, "a_"},
	} {
		stderr.Reset()
		if code := kindgen.Main(args, &bytes.Buffer{}, &stderr); code == 0 {
			t.Errorf("%s: accepted", name)
		}
	}
}

// kindgen new writes a go:generate line only in a module that has none, and
// never over a file: beside a kinds/doc.go of the user's own it writes
// kinds/generate.go; with a line anywhere in the module, nothing. With a
// tool directive in go.mod it has nothing to say about one.
func TestNewGenerateLine(t *testing.T) {
	gomod := "module example.com/acme\n\ngo 1.26\n\ntool " + kindgen.KindgenPath + "\n"
	for name, c := range map[string]struct {
		have     map[string]string
		wantFile string // "" for none
	}{
		"empty module":          {wantFile: "kinds/doc.go"},
		"own doc.go":            {have: map[string]string{"kinds/doc.go": "// Package kinds is mine.\npackage kinds\n"}, wantFile: "kinds/generate.go"},
		"line elsewhere":        {have: map[string]string{"tools/gen.go": "package tools\n\n//go:generate go tool kindgen -root ..\n"}},
		"line in testdata only": {have: map[string]string{"testdata/x/gen.go": "package x\n\n//go:generate go tool kindgen\n"}, wantFile: "kinds/doc.go"},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			have := map[string]string{"go.mod": gomod}
			for rel, text := range c.have {
				have[rel] = text
			}
			for rel, text := range have {
				os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o755)
				if err := os.WriteFile(filepath.Join(root, rel), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var stdout, stderr bytes.Buffer
			if code := kindgen.Main([]string{"new", "-root", root, "poll"}, &stdout, &stderr); code != 0 {
				t.Fatalf("kindgen new: %d %s", code, stderr.String())
			}
			got := allFiles(t, root)
			for rel, text := range have {
				if string(got[rel]) != text {
					t.Errorf("%s was changed:\n%s", rel, got[rel])
				}
			}
			var written []string
			for rel, data := range got {
				if _, ok := have[rel]; !ok && strings.Contains(string(data), "//go:generate go tool kindgen -root ..") {
					written = append(written, rel)
				}
			}
			if want := []string{c.wantFile}; c.wantFile == "" && len(written) > 0 || c.wantFile != "" && !slices.Equal(written, want) {
				t.Errorf("generate line written in %v, want %q", written, c.wantFile)
			}
			if strings.Contains(stdout.String(), "tool directive") {
				t.Errorf("go.mod has the tool directive, yet kindgen new says:\n%s", stdout.String())
			}
		})
	}
}
