package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTemplate starts a project from kindkit as a new user would: a copy of
// the project renamed to example.com/acme/mykinds as gonew renames it (go.mod's
// module line, every Go import, the root package's name), in a fresh git init
// with nothing committed, and its go.mod's tool line renamed as
// docs/own-module.md says. In the copy go generate changes nothing, go build
// and go vet pass, and so do cmd/kindgen's tests: the goldens, the scaffold
// and the walkthrough, which pastes the docs' code and runs the kinds' tests
// and the scenarios. (The rest of the suite has nothing that depends on the
// module path; running it all again here would double CI's time.)
func TestTemplate(t *testing.T) {
	if os.Getenv("KINDKIT_TEMPLATE") != "" {
		t.Skip("already inside the template's copy")
	}
	if testing.Short() {
		t.Skip("copies the project and runs the go command")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	const renamed = "example.com/acme/mykinds"
	dst := copyProject(t, repo)
	err = filepath.WalkDir(dst, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dst, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		switch {
		case rel == "go.mod":
			line, rest, _ := strings.Cut(string(data), "\n")
			if line != "module "+module {
				t.Fatalf("go.mod starts with %q, want module %s", line, module)
			}
			data = []byte("module " + renamed + "\n" + rest)
		case strings.HasSuffix(rel, ".go"):
			data = renameModule(t, data, module, renamed, !strings.Contains(rel, string(filepath.Separator)))
		default:
			return nil
		}
		return os.WriteFile(p, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("git"); err == nil {
		runIn(t, dst, nil, "git", "init", "-q")
	}
	env := []string{"KINDKIT_TEMPLATE=1"}
	// gonew renames the module line, not the tool line: docs/own-module.md's
	// go mod edit does.
	runIn(t, dst, env, "go", "mod", "edit", "-droptool="+module+"/cmd/kindgen", "-tool="+renamed+"/cmd/kindgen")
	before := generatedFiles(t, dst)
	runIn(t, dst, env, "go", "generate", "./...")
	diffTrees(t, before, generatedFiles(t, dst))
	runIn(t, dst, env, "go", "build", "./...")
	runIn(t, dst, env, "go", "vet", "./...")
	runIn(t, dst, env, "go", "test", "-count=1", "./cmd/kindgen")
}
