package kindgen

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/kindkit/kindkit/elicit"
	"github.com/kindkit/kindkit/internal/jsonx"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// FuzzLoad feeds arbitrary bytes to the schema loader, the derivations and
// the generator: they may reject a schema, but only with a located
// SchemaError, and never panic.
func FuzzLoad(f *testing.F) {
	seeds, _ := filepath.Glob("../../spec/interactions/*.schema.json")
	more, _ := filepath.Glob("../../cmd/kindgen/testdata/*/spec/interactions/*.schema.json")
	for _, p := range append(seeds, more...) {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"x-kind":{"name":"a","capability":"b","description":"c"},"$defs":{"Spec":{"$ref":"#/$defs/Spec"},"Values":{},"Payload":{}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Load("spec/interactions/f.schema.json", data)
		if err != nil {
			var se *SchemaError
			if !errors.As(err, &se) || se.Pointer == "" || !strings.HasPrefix(se.Pointer, "/") || se.Message == "" {
				t.Fatalf("error without location: %v", err)
			}
			return
		}
		for _, d := range derived {
			v, err := d.derive(s)
			if err != nil {
				var se *SchemaError
				if !errors.As(err, &se) || !strings.HasPrefix(se.Pointer, "/") || se.Message == "" {
					t.Fatalf("%s: error without location: %v", d.file, err)
				}
				return
			}
			if d.file == "elicitation.json" {
				// The run time reads what was derived: an error, never a panic.
				data, err := jsonx.Indent(v)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = elicit.NewForm(string(data), []byte(`{}`))
			}
		}
		if _, err := goTypes(s); err != nil {
			return
		}
		if _, err := kindFile(s); err != nil {
			return
		}
	})
}

func TestCamel(t *testing.T) {
	for in, want := range map[string]string{
		"identity_intake": "IdentityIntake", "identity-intake": "IdentityIntake", "ChoicesSpec": "ChoicesSpec",
		"2fa code": "X2faCode", "": "",
	} {
		if got := camel(in); got != want {
			t.Errorf("camel(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"questions": "question", "entries": "entry", "class": "class", "s": "s"} {
		if got := singular(in); got != want {
			t.Errorf("singular(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestHostOnlyKind: "tool": false declares a kind with no raise tool; any
// other non-string is an error at its pointer.
func TestHostOnlyKind(t *testing.T) {
	doc := func(tool string) []byte {
		return []byte(`{"x-kind":{"name":"asked","capability":"c","tool":` + tool + `,"description":"d"},` +
			`"$defs":{"Spec":{"type":"object","properties":{"q":{"type":"string"}}},"Values":{"type":"object"}}}`)
	}
	s, err := Load("spec/interactions/asked.schema.json", doc("false"))
	if err != nil {
		t.Fatal(err)
	}
	if s.ToolName != "" {
		t.Errorf("tool false: ToolName %q, want none", s.ToolName)
	}
	var se *SchemaError
	if _, err := Load("spec/interactions/asked.schema.json", doc("true")); !errors.As(err, &se) || se.Pointer != "/x-kind/tool" {
		t.Errorf("tool true: error %v, want one at /x-kind/tool", err)
	}
}
