package elicit_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/elicit"
)

var update = flag.Bool("update", false, "rewrite testdata/*.form.json from the forms NewForm draws")

// TestFormGolden compares the requestedSchema drawn for each kind's sample
// spec with testdata/<kind>.form.json, whole file (go test ./elicit -update
// rewrites them), and checks it against MCP's rules.
func TestFormGolden(t *testing.T) {
	for name, spec := range map[string]any{"choices": choicesSpec, "rating": ratingSpec, "identity_intake": identitySpec} {
		t.Run(name, func(t *testing.T) {
			k := kind(t, name)
			f, err := elicit.NewForm(k.Descriptor().ElicitationSchema, mustRaise(t, k, spec))
			if err != nil {
				t.Fatal(err)
			}
			if err := elicit.CheckRequestedSchema(f.Schema); err != nil {
				t.Errorf("the form breaks MCP's rules:\n%v", err)
			}
			var got bytes.Buffer
			if err := json.Indent(&got, f.Schema, "", "  "); err != nil {
				t.Fatal(err)
			}
			got.WriteByte('\n')
			path := filepath.Join("testdata", name+".form.json")
			if *update {
				if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./elicit -update writes it)", err)
			}
			if diff := cmp.Diff(string(want), got.String()); diff != "" {
				t.Errorf("%s (-want +got):\n%s", path, diff)
			}
		})
	}
}

// Values maps a form's content back to the kind's Values: a question's
// fields into its answer, a single pick into a list, a null as absent, and a
// field the form did not ask as an error.
func TestFormValues(t *testing.T) {
	k := kind(t, "choices")
	f, err := elicit.NewForm(k.Descriptor().ElicitationSchema, mustRaise(t, k, choicesSpec))
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		content map[string]any
		want    string
		errs    []kindkit.FieldError
	}{
		"picks":    {map[string]any{"Plan.options": "Solo", "Topics.options": []any{"SSO"}, "Topics.other": "x"}, `{"answers":[{"header":"Plan","options":["Solo"]},{"header":"Topics","options":["SSO"],"other":"x"}]}`, nil},
		"nothing":  {nil, `{"answers":[{"header":"Plan"},{"header":"Topics"}]}`, nil},
		"null":     {map[string]any{"Plan.options": nil, "Plan.other": "mine"}, `{"answers":[{"header":"Plan","other":"mine"},{"header":"Topics"}]}`, nil},
		"unknown":  {map[string]any{"Plan": "Solo", "Zed.other": 1}, "", []kindkit.FieldError{{Field: "Plan", Message: "this form has no such field"}, {Field: "Zed.other", Message: "this form has no such field"}}},
		"any type": {map[string]any{"Plan.options": 7}, `{"answers":[{"header":"Plan","options":[7]},{"header":"Topics"}]}`, nil},
	} {
		t.Run(name, func(t *testing.T) {
			got, errs := f.Values(c.content)
			if diff := cmp.Diff(c.errs, errs); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			if string(got) != c.want {
				t.Errorf("values %s, want %s", got, c.want)
			}
		})
	}
}

// NewForm refuses a template that says the kind is not elicitable, and
// one it cannot read, with a clear error.
func TestNewFormRefuses(t *testing.T) {
	for template, want := range map[string]string{
		`{"x-not-elicitable": "x.schema.json: /$defs/Values: why"}`: "kindkit: this kind cannot be asked by MCP elicitation: x.schema.json: /$defs/Values: why",
		`[]`:                 "read the elicitation template: not a JSON object (<nil>)",
		`{"type": "object"}`: "read the elicitation template: no properties",
		`{"type": "object", "properties": {"a": {"type": "string", "x-ui": {"options": {"from": "/none", "value": "id"}}}}}`: "a: the spec's /none offers nothing to pick",
		`{"type": "object", "properties": {"a": {"type": "object"}}}`:                                                        "the form drawn from this spec breaks MCP's rules for a requested schema: /properties/a/type: must be string, number, integer, boolean or array (got object)",
	} {
		_, err := elicit.NewForm(template, json.RawMessage(`{}`))
		if err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %s", template, err, want)
		}
	}
}

// FuzzFormValues: whatever content a client sends, mapping it back and
// validating it with the kind gives values or field errors, never a panic.
func FuzzFormValues(f *testing.F) {
	f.Add(`{"Plan.options": "Solo", "Topics.options": ["SSO"], "Topics.other": "x"}`)
	f.Add(`{"Plan.options": ["Solo", "Team"], "Plan.other": null, "Topics.options": {"a": 1}}`)
	f.Add(`{"": 1, "Plan.options": 1e400}`)
	k, err := kindsForFuzz()
	if err != nil {
		f.Fatal(err)
	}
	form, err := elicit.NewForm(k.Descriptor().ElicitationSchema, mustRaise(f, k, choicesSpec))
	if err != nil {
		f.Fatal(err)
	}
	spec, err := k.ParseRaise(mustJSON(f, choicesSpec))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, content string) {
		var m map[string]any
		if json.Unmarshal([]byte(content), &m) != nil {
			return
		}
		values, errs := form.Values(m)
		if len(errs) > 0 {
			return
		}
		if out, errs := k.Validate(&spec.Spec, values); len(errs) == 0 && !json.Valid(out) {
			t.Errorf("accepted %s as invalid JSON %s", content, out)
		}
	})
}

// The template kindgen writes for cmd/kindgen's elicit-shapes case (every
// shape and hint) is filled in from a spec: bound bounds, picks from the
// spec (objects and strings), showIf, and a group whose element asks an
// array as one pick or several as multiIf says.
func TestFormHints(t *testing.T) {
	template, err := os.ReadFile("../cmd/kindgen/testdata/elicit-shapes/want/gen/bookinggen/elicitation.json")
	if err != nil {
		t.Fatal(err)
	}
	spec := `{"question": "Book a table?", "maxGuests": 6, "askNotes": false,
		"slots": [{"id": "t1", "label": "Tue 19:00"}, {"id": "w2", "label": "Wed 20:00"}],
		"extras": [{"name": "wine", "question": "Which wine?", "choices": ["red", "white"]},
		           {"name": "sides", "question": "Which sides?", "choices": ["fries", "salad"], "several": true}]}`
	f, err := elicit.NewForm(string(template), json.RawMessage(spec))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Book a table?"}, f.Texts); diff != "" {
		t.Errorf("texts (-want +got):\n%s", diff)
	}
	var got map[string]any
	if err := json.Unmarshal(f.Schema, &got); err != nil {
		t.Fatal(err)
	}
	props := got["properties"].(map[string]any)
	for name, want := range map[string]string{
		"slot":          `{"oneOf":[{"const":"t1","title":"Tue 19:00"},{"const":"w2","title":"Wed 20:00"}],"title":"Slot","type":"string"}`,
		"guests":        `{"maximum":6,"minimum":1,"type":"integer"}`,
		"wine.picks":    `{"oneOf":[{"const":"red","title":"red"},{"const":"white","title":"white"}],"title":"Which wine?","type":"string"}`,
		"sides.picks":   `{"items":{"anyOf":[{"const":"fries","title":"fries"},{"const":"salad","title":"salad"}]},"title":"Which sides?","type":"array"}`,
		"notes (shown)": "",
	} {
		if name == "notes (shown)" {
			if _, ok := props["notes"]; ok {
				t.Error("notes is asked though askNotes is false")
			}
			continue
		}
		data, _ := json.Marshal(props[name])
		if string(data) != want {
			t.Errorf("%s: %s, want %s", name, data, want)
		}
	}
	if diff := cmp.Diff([]any{"slot", "email", "guests", "wine.picks", "sides.picks"}, got["required"]); diff != "" {
		t.Errorf("required (-want +got):\n%s", diff)
	}
	values, errs := f.Values(map[string]any{"slot": "t1", "wine.picks": "red", "sides.picks": []any{"salad"}})
	want := `{"slot":"t1","extras":[{"name":"wine","picks":["red"]},{"name":"sides","picks":["salad"]}]}`
	if len(errs) > 0 || string(values) != want {
		t.Errorf("values %s %v, want %s", values, errs, want)
	}

	f, err = elicit.NewForm(string(template), json.RawMessage(`{"question": "", "askNotes": true, "slots": [{"id": "t1", "label": "Tue"}], "extras": []}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(f.Schema, &got); err != nil {
		t.Fatal(err)
	}
	props = got["properties"].(map[string]any)
	if _, ok := props["notes"]; !ok {
		t.Error("notes is not asked though askNotes is true")
	}
	if g := props["guests"].(map[string]any); g["maximum"] != nil {
		t.Errorf("guests has a maximum the spec does not give: %v", g)
	}
	if len(f.Texts) != 0 {
		t.Errorf("a blank question is a text: %q", f.Texts)
	}
}
