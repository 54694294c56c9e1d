package kindgen

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Main runs kindgen with args and returns its exit status.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "new" {
		return mainNew(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("kindgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", ".", "the project root: the folder holding go.mod and "+SpecDir)
	module := fs.String("module", "", "the import path of the project root (default: read from root/go.mod)")
	check := fs.Bool("check", false, "write nothing; exit 1 and name the files when generated code is out of date")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: kindgen [flags]\n       kindgen new [-root DIR] <name>\n\n"+
			"kindgen reads every %s/*.schema.json, checks it, and writes gen/<kind>gen/ (Go code and\n"+
			"the schema files it embeds: schema.json, tool.json, values.json,\n"+
			"elicitation.json) and\n"+
			"kinds/catalog.gen.go; it removes the generated files of schemas that are gone.\n"+
			"kindgen new writes the schema and rules of a new kind, never overwriting a file,\n"+
			"then generates.\n\nFlags:\n", SpecDir)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "kindgen: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return 2
	}
	if *module == "" {
		m, err := modulePath(*root)
		if err != nil {
			fmt.Fprintf(stderr, "kindgen: %v\n", err)
			return 1
		}
		*module = m
	}
	out, err := Generate(*root, *module)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if *check {
		if stale := out.Diff(*root); len(stale) > 0 {
			fmt.Fprintf(stderr, "kindgen: generated code is out of date; run go generate ./...:\n  %s\n", strings.Join(stale, "\n  "))
			return 1
		}
		return 0
	}
	if err := out.Write(*root); err != nil {
		fmt.Fprintf(stderr, "kindgen: %v\n", err)
		return 1
	}
	return 0
}

// modulePath reads the module line of root/go.mod.
func modulePath(root string) (string, error) {
	f, err := os.Open(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("find module path: %w (or pass -module)", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	return "", fmt.Errorf("find module path: no module line in %s", f.Name())
}

func mainNew(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kindgen new", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", ".", "the project root")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: kindgen new [-root DIR] <name>\n\n"+
			"Writes %s/<name>.schema.json and kinds/<name>/rules.go, then generates.\n"+
			"name is the kind's lower_snake_case wire name.\n\nFlags:\n", SpecDir)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	written, err := NewKind(*root, fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	for _, w := range written {
		fmt.Fprintln(stdout, "wrote", w)
	}
	if !HasTool(*root) {
		fmt.Fprintf(stdout, "go.mod has no tool directive for kindgen, which go generate runs: go get -tool %s\n", KindgenPath)
	}
	return Main([]string{"-root", *root}, stdout, stderr)
}
