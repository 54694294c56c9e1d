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
// its rules package. It refuses to overwrite either.
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
