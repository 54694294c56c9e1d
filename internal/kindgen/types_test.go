package kindgen

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"testing"
)

// Generated names are the ones a Go developer writes: Spec and Values, the
// kind's name dropped from titles, initialisms in capitals, and each
// struct's fields in the schema's order, not go-jsonschema's sorted one.
func TestGoNames(t *testing.T) {
	s, err := Load("spec/interactions/poll.schema.json", []byte(`{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "Poll",
  "x-kind": {"name": "poll", "capability": "poll_card", "description": "d"},
  "$defs": {
    "Spec": {"title": "PollSpec", "type": "object", "properties": {
      "zone": {"type": "string"}, "id": {"type": "string"}, "imageUrl": {"type": "string"},
      "options": {"type": "array", "items": {"$ref": "#/$defs/Option"}}, "apiKey": {"type": "string"}}},
    "Option": {"title": "PollOption", "type": "object", "properties": {"label": {"type": "string"}, "id": {"type": "string"}}},
    "Values": {"title": "PollValues", "type": "object", "properties": {"userIds": {"type": "array", "items": {"type": "string"}}}}
  }
}`))
	if err != nil {
		t.Fatal(err)
	}
	src, err := goTypes(s)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), "types.gen.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string][]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.TYPE {
			continue
		}
		for _, sp := range g.Specs {
			ts := sp.(*ast.TypeSpec)
			fields[ts.Name.Name] = nil
			if st, ok := ts.Type.(*ast.StructType); ok {
				for _, fd := range st.Fields.List {
					for _, n := range fd.Names {
						fields[ts.Name.Name] = append(fields[ts.Name.Name], n.Name)
					}
				}
			}
		}
	}
	for name, want := range map[string][]string{
		"Spec":   {"Zone", "ID", "ImageURL", "Options", "APIKey"},
		"Option": {"Label", "ID"},
		"Values": {"UserIDs"},
	} {
		got, ok := fields[name]
		if !ok {
			t.Errorf("no type %s; types: %v", name, fields)
			continue
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s fields %v, want %v", name, got, want)
		}
	}
}
