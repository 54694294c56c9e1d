package kinds_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/kinds"
)

// reference is the reference implementation's spec folder, read at test time
// and never copied into the project.
const reference = "../../shared/reference/spec"

type fixture struct {
	SchemaRef string          `json:"$schema_ref"`
	Instance  json.RawMessage `json:"instance"`
}

func readFixtures(t testing.TB) map[string]fixture {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(reference, "fixtures.json"))
	if err != nil {
		t.Fatalf("the reference corpus must sit at %s: %v", reference, err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	out := map[string]fixture{}
	for name, r := range raw {
		var f fixture
		if json.Unmarshal(r, &f) == nil && f.SchemaRef != "" {
			out[name] = f
		}
	}
	return out
}

// compiled compiles one $defs entry of a schema document found at path.
type schemaSet struct {
	c       *jsonschema.Compiler
	urls    map[string]string // file name → url
	payload map[string]string // file name → url of the payload schema around its Values
}

// payloadSchema is the canonical payload (kindkit.Payload) around a kind's
// Values, for the project's schemas, which no longer restate it: the
// reference's $defs/Payload must agree with it.
const payloadSchema = `{"type":"object","required":["status"],"additionalProperties":false,"properties":{
	"status":{"enum":["submitted","declined","no_response"]},
	"values":{"$ref":%q},
	"message":{"type":"string"}}}`

func loadSchemas(t testing.TB, dir string) *schemaSet {
	t.Helper()
	s := &schemaSet{c: jsonschema.NewCompiler(), urls: map[string]string{}, payload: map[string]string{}}
	paths, _ := filepath.Glob(filepath.Join(dir, "*.schema.json"))
	if len(paths) == 0 {
		t.Fatalf("no schemas in %s", dir)
	}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		url := "file://" + filepath.ToSlash(abs)
		if err := s.c.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
		s.urls[filepath.Base(p)] = url
		if defs, _ := doc.(map[string]any)["$defs"].(map[string]any); defs["Payload"] == nil {
			payload, err := jsonschema.UnmarshalJSON(strings.NewReader(fmt.Sprintf(payloadSchema, url+"#/$defs/Values")))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.c.AddResource(url+".payload", payload); err != nil {
				t.Fatal(err)
			}
			s.payload[filepath.Base(p)] = url + ".payload"
		}
	}
	return s
}

func (s *schemaSet) compile(t testing.TB, file, def string) *jsonschema.Schema {
	t.Helper()
	url, ok := s.urls[file]
	if !ok {
		t.Fatalf("no schema %s", file)
	}
	if u, ok := s.payload[file]; ok && def == "Payload" {
		url = u
	} else {
		url += "#/$defs/" + def
	}
	sch, err := s.c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

func valid(sch *jsonschema.Schema, instance string) (bool, error) {
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(instance))
	if err != nil {
		return false, err
	}
	return sch.Validate(v) == nil, nil
}

// TestReferenceFixturesValidate: every fixture of the reference corpus that
// names an interaction schema validates against the project's own schema.
func TestReferenceFixturesValidate(t *testing.T) {
	ours := loadSchemas(t, "../spec/interactions")
	n := 0
	for name, f := range readFixtures(t) {
		file, def, ok := strings.Cut(strings.TrimPrefix(f.SchemaRef, "interactions/"), "#/$defs/")
		if !strings.HasPrefix(f.SchemaRef, "interactions/") || !ok {
			continue
		}
		n++
		ok, err := valid(ours.compile(t, file, def), string(f.Instance))
		if err != nil || !ok {
			t.Errorf("%s: %s rejects the fixture (%v)", name, f.SchemaRef, err)
		}
	}
	if n < 6 {
		t.Errorf("only %d interaction fixtures found", n)
	}
}

// invalid holds instances both the reference schemas and ours must reject.
var invalid = []struct{ file, def, instance string }{
	{"choices.schema.json", "Spec", `{}`},
	{"choices.schema.json", "Spec", `{"questions":[]}`},
	{"choices.schema.json", "Spec", `{"questions":"x"}`},
	{"choices.schema.json", "Spec", `{"questions":[{"question":"Q","header":"H","options":[{"label":"a"}]}]}`},
	{"choices.schema.json", "Spec", `{"questions":[{"question":"Q","header":"H","options":[{"label":"a"},{"label":"b"},{"label":"c"},{"label":"d"},{"label":"e"}]}]}`},
	{"choices.schema.json", "Spec", `{"questions":[{"question":"Q","header":"Thirteen-char","options":[{"label":"a"},{"label":"b"}]}]}`},
	{"choices.schema.json", "Spec", `{"questions":[{"question":"Q","options":[{"label":"a"},{"label":"b"}]}]}`},
	{"choices.schema.json", "Spec", `{"questions":[{"question":"Q","header":"H","options":["a","b"]}]}`},
	{"choices.schema.json", "Spec", `{"questions":[{"question":"Q","header":"H","options":[{"label":"a"},{"label":"b"}],"multiSelect":"yes"}]}`},
	{"choices.schema.json", "Spec", `{"questions":[{"question":"Q","header":"H","options":[{"label":"a","extra":1},{"label":"b"}]}]}`},
	{"choices.schema.json", "Spec", `{"questions":[{"question":1,"header":"H","options":[{"label":"a"},{"label":"b"}]}],"x":1}`},
	{"choices.schema.json", "Spec", `{"questions":[1,2,3,4,5]}`},
	{"choices.schema.json", "Values", `{}`},
	{"choices.schema.json", "Values", `{"answers":"x"}`},
	{"choices.schema.json", "Values", `{"answers":[{"options":["a"]}]}`},
	{"choices.schema.json", "Values", `{"answers":[{"header":"H","options":"a"}]}`},
	{"choices.schema.json", "Values", `{"answers":[{"header":"H","options":[1]}]}`},
	{"choices.schema.json", "Values", `{"answers":[{"header":"H","other":false}]}`},
	{"choices.schema.json", "Values", `{"answers":[{"header":"H","note":"x"}]}`},
	{"choices.schema.json", "Values", `null`},
	{"choices.schema.json", "Payload", `{"values":{"answers":[]}}`},
	{"choices.schema.json", "Payload", `{"status":"done"}`},
	{"choices.schema.json", "Payload", `{"status":"submitted","values":{}}`},
	{"choices.schema.json", "Payload", `{"status":"submitted","values":{"answers":[{"header":"H","x":1}]}}`},
	{"choices.schema.json", "Payload", `{"status":"declined","message":5}`},
	{"identity-intake.schema.json", "Spec", `{}`},
	{"identity-intake.schema.json", "Spec", `{"fields":[]}`},
	{"identity-intake.schema.json", "Spec", `{"fields":["email"]}`},
	{"identity-intake.schema.json", "Spec", `{"fields":[{"key":"email"}]}`},
	{"identity-intake.schema.json", "Spec", `{"fields":[{"key":"address","required":true}]}`},
	{"identity-intake.schema.json", "Spec", `{"fields":[{"key":"email","required":"yes"}]}`},
	{"identity-intake.schema.json", "Spec", `{"fields":[{"key":"email","required":true,"label":7}]}`},
	{"identity-intake.schema.json", "Spec", `{"fields":[{"key":"email","required":true,"hint":"x"}]}`},
	{"identity-intake.schema.json", "Values", `{"email":5}`},
	{"identity-intake.schema.json", "Values", `{"company":"Acme"}`},
	{"identity-intake.schema.json", "Values", `"abc"`},
	{"identity-intake.schema.json", "Values", `[]`},
	{"identity-intake.schema.json", "Payload", `{}`},
	{"identity-intake.schema.json", "Payload", `{"status":"submitted","values":{"phone":15551234567}}`},
	{"identity-intake.schema.json", "Payload", `{"status":"no_response","extra":true}`},
}

// TestSchemasRejectWhatReferenceRejects: each invalid instance is rejected
// by both the reference schema and the project's.
func TestSchemasRejectWhatReferenceRejects(t *testing.T) {
	ref := loadSchemas(t, filepath.Join(reference, "interactions"))
	ours := loadSchemas(t, "../spec/interactions")
	if len(invalid) < 20 {
		t.Fatalf("only %d invalid instances", len(invalid))
	}
	for i, c := range invalid {
		t.Run(fmt.Sprintf("%d-%s-%s", i, strings.TrimSuffix(c.file, ".schema.json"), c.def), func(t *testing.T) {
			refOK, err := valid(ref.compile(t, c.file, c.def), c.instance)
			if err != nil {
				t.Fatal(err)
			}
			ourOK, _ := valid(ours.compile(t, c.file, c.def), c.instance)
			if refOK || ourOK {
				t.Errorf("%s accepted by reference=%v ours=%v, want both to reject", c.instance, refOK, ourOK)
			}
		})
	}
}

// TestSchemasAgreeOnMutations derives many instances from the fixtures by
// deleting, retyping and adding members at every position, and checks the
// reference schemas and the project's give the same verdict on each.
func TestSchemasAgreeOnMutations(t *testing.T) {
	ref := loadSchemas(t, filepath.Join(reference, "interactions"))
	ours := loadSchemas(t, "../spec/interactions")
	total, rejected := 0, 0
	for name, f := range readFixtures(t) {
		file, def, ok := strings.Cut(strings.TrimPrefix(f.SchemaRef, "interactions/"), "#/$defs/")
		if !strings.HasPrefix(f.SchemaRef, "interactions/") || !ok {
			continue
		}
		r, o := ref.compile(t, file, def), ours.compile(t, file, def)
		var doc any
		if err := json.Unmarshal(f.Instance, &doc); err != nil {
			t.Fatal(err)
		}
		for _, m := range mutations(doc) {
			b, _ := json.Marshal(m)
			refOK, err := valid(r, string(b))
			if err != nil {
				t.Fatal(err)
			}
			ourOK, _ := valid(o, string(b))
			total++
			if !refOK {
				rejected++
			}
			if refOK != ourOK {
				t.Errorf("%s: %s: reference valid=%v, ours valid=%v", name, b, refOK, ourOK)
			}
		}
	}
	if total < 200 || rejected < total/4 {
		t.Errorf("too few mutations to mean anything: %d, %d rejected", total, rejected)
	}
	t.Logf("%d mutations, %d rejected by both", total, rejected)
}

// mutations returns copies of v, each changed at one place.
func mutations(v any) []any {
	replacements := []any{nil, true, 7, "", "x", "Thirteen-char", []any{}, map[string]any{}}
	var out []any
	var walk func(cur any, set func(any) any)
	walk = func(cur any, set func(any) any) {
		for _, r := range replacements {
			out = append(out, set(r))
		}
		switch c := cur.(type) {
		case map[string]any:
			keys := make([]string, 0, len(c))
			for k := range c {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				out = append(out, set(without(c, k)))
				child := c[k]
				walk(child, func(r any) any { return set(with(c, k, r)) })
			}
			out = append(out, set(with(c, "unexpected", 1)))
		case []any:
			for i := range c {
				out = append(out, set(append(append([]any{}, c[:i]...), c[i+1:]...)))
				out = append(out, set(append(append([]any{}, c...), c[i])))
				child := c[i]
				walk(child, func(r any) any {
					cp := append([]any{}, c...)
					cp[i] = r
					return set(cp)
				})
			}
		}
	}
	walk(v, func(r any) any { return r })
	return out
}

func with(m map[string]any, k string, v any) map[string]any {
	cp := make(map[string]any, len(m)+1)
	for kk, vv := range m {
		cp[kk] = vv
	}
	cp[k] = v
	return cp
}

func without(m map[string]any, k string) map[string]any {
	cp := with(m, k, nil)
	delete(cp, k)
	return cp
}

// TestFixturePayloads: each kind's fixture spec and values, through the
// kind's validation, give exactly the fixture payload.
func TestFixturePayloads(t *testing.T) {
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	fx := readFixtures(t)
	for _, c := range []struct{ kind, prefix string }{{"choices", "choices"}, {"identity_intake", "identity_intake"}} {
		t.Run(c.kind, func(t *testing.T) {
			k, ok := catalog.Kind(c.kind)
			if !ok {
				t.Fatalf("no kind %s", c.kind)
			}
			spec, err := k.LoadSpec(fx[c.prefix+"_spec"].Instance)
			if err != nil {
				t.Fatal(err)
			}
			values, errs := k.Validate(&spec, fx[c.prefix+"_values"].Instance)
			if len(errs) > 0 {
				t.Fatalf("fixture values rejected: %v", errs)
			}
			var got, want any
			if err := json.Unmarshal([]byte(kindkit.Submitted(values).JSON()), &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(fx[c.prefix+"_payload"].Instance, &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("payload (-fixture +ours):\n%s", diff)
			}
		})
	}
}
