package kindgen

import (
	"bytes"
	"errors"
	"fmt"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/template"
)

// NewKind writes the starting point of a kind under root: its schema and
// its rules package. It refuses to overwrite either. In a module with no
// go:generate line that runs kindgen, it also writes one, in kinds/doc.go
// (or kinds/generate.go when doc.go is there), so that go generate ./...
// runs kindgen from then on; it never overwrites that file either.
func NewKind(root, name string) ([]string, error) {
	if !wireName.MatchString(name) {
		return nil, fmt.Errorf("kindgen new: %q is not a lower_snake_case wire name (such as \"rating\" or \"identity_intake\")", name)
	}
	pkg := strings.ReplaceAll(name, "_", "")
	if token.IsKeyword(pkg) || !token.IsIdentifier(pkg) {
		return nil, fmt.Errorf("kindgen new: %q would make the package name %q, which Go does not allow", name, pkg)
	}
	// Title is the card's heading on the web page until the kind says better.
	title := strings.ReplaceAll(name, "_", " ")
	title = strings.ToUpper(title[:1]) + title[1:]
	data := struct{ Name, Package, Type, Title, Module string }{Name: name, Package: pkg, Type: camel(name), Title: title}
	files := map[string]*template.Template{
		filepath.Join(SpecDir, strings.ReplaceAll(name, "_", "-")+".schema.json"): schemaTemplate,
		filepath.Join("kinds", pkg, "rules.go"):                                   rulesTemplate,
	}
	module, err := modulePath(root)
	if err != nil {
		return nil, err
	}
	data.Module = module
	has, err := hasGenerateLine(root)
	if err != nil {
		return nil, err
	}
	if !has {
		for _, rel := range []string{filepath.Join("kinds", "doc.go"), filepath.Join("kinds", "generate.go")} {
			if _, err := os.Stat(filepath.Join(root, rel)); errors.Is(err, fs.ErrNotExist) {
				files[rel] = generateTemplate
				break
			}
		}
	}
	var written []string
	out := map[string][]byte{}
	for rel, tmpl := range files {
		if _, err := os.Stat(filepath.Join(root, rel)); err == nil {
			return nil, fmt.Errorf("kindgen new: %s exists; not overwriting it", rel)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		var b bytes.Buffer
		if err := tmpl.Execute(&b, data); err != nil {
			return nil, err
		}
		out[rel] = b.Bytes()
	}
	for _, rel := range sortedFiles(out) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, out[rel], 0o644); err != nil {
			return nil, err
		}
		written = append(written, filepath.ToSlash(rel))
	}
	return written, nil
}

// KindgenPath is the import path of the kindgen command: what go.mod's tool
// directive names.
var KindgenPath = kindkitPkg + "/cmd/kindgen"

// HasTool reports whether root/go.mod has a tool directive for kindgen.
func HasTool(root string) bool {
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "tool "))
		if line == KindgenPath {
			return true
		}
	}
	return false
}

// hasGenerateLine reports whether a Go file of the module at root (not in
// testdata, vendor, hidden folders or nested modules) has a go:generate
// line that runs kindgen.
func hasGenerateLine(root string) (bool, error) {
	found := false
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || found {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); p != root && err == nil {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(data), "\n") {
			if rest, ok := strings.CutPrefix(line, "//go:generate "); ok && strings.Contains(rest, "kindgen") {
				found = true
				return filepath.SkipAll
			}
		}
		return nil
	})
	return found, err
}

var generateTemplate = template.Must(template.New("generate").Parse(`// Package kinds holds the rules of this module's interaction kinds, one
// package per kind (kinds/<name>), and the catalog kindgen generates:
// All returns every kind of spec/interactions wired to its rules.
package kinds

// go generate ./... runs kindgen, which go.mod names in a tool directive.
//go:` + /* split, or go generate would run this line */ `generate go tool kindgen -root ..
`))

var schemaTemplate = template.Must(template.New("schema").Parse(`{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$comment": "The {{.Name}} interaction kind. Spec is what the agent asks (the raise tool's parameters, plus a reason kindkit adds); Values is what the person submits (the turn resumes with kindkit's payload around them). Describe every property: the model reads these descriptions. The x-ui hints are what the web page shows the person instead (docs/adding-a-kind.md, section 5). Then run go generate ./...",
  "title": "{{.Type}}",
  "description": "TODO: one sentence on what this card asks.",
  "x-kind": {
    "name": "{{.Name}}",
    "capability": "{{.Name}}_card",
    "tool": "request_{{.Name}}",
    "description": "TODO: tell the model when to call this tool and what to put in it."
  },
  "$defs": {
    "Spec": {
      "title": "{{.Type}}Spec",
      "description": "What the agent asks.",
      "type": "object",
      "required": ["prompt"],
      "additionalProperties": false,
      "properties": {
        "prompt": { "type": "string", "description": "The question, as the person reads it." }
      }
    },
    "Values": {
      "title": "{{.Type}}Values",
      "description": "What the person submits.",
      "type": "object",
      "required": ["answer"],
      "additionalProperties": false,
      "x-ui": { "title": "{{.Title}}", "text": ["/prompt"] },
      "properties": {
        "answer": {
          "type": "string",
          "minLength": 1,
          "maxLength": 2000,
          "description": "The person's answer.",
          "x-ui": { "label": "Your answer", "widget": "textarea" }
        }
      }
    }
  }
}
`))

var rulesTemplate = template.Must(template.New("rules").Parse(`// Package {{.Package}} holds the rules of the {{.Name}} interaction kind: what
// its schema (spec/interactions) cannot say.
package {{.Package}}

import "{{.Module}}/gen/{{.Package}}gen"

// Rules starts as the schema alone. Write the methods of {{.Package}}gen.Rules
// your kind needs (Validate, Fallback, …); the embedded Unimplemented
// covers the rest.
type Rules struct {
	{{.Package}}gen.Unimplemented
}

var _ {{.Package}}gen.Rules = Rules{}
`))
