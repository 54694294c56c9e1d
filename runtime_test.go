package kindkit_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/kindkit/kindkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A small kind written by hand, as kindgen would generate it.
const noteSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$defs": {
    "Spec": {"type": "object", "required": ["topic"], "additionalProperties": false,
             "properties": {"topic": {"type": "string", "maxLength": 5},
                            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2}}},
    "Values": {"type": "object", "required": ["text"], "additionalProperties": false,
               "properties": {"text": {"type": "string", "minLength": 1}}}
  }
}`

type noteSpec struct {
	Topic string   `json:"topic"`
	Tags  []string `json:"tags,omitempty"`
}

type noteValues struct {
	Text string `json:"text"`
}

type noteRules struct{ normalized *int }

func (noteRules) NormalizeRaise(args map[string]any) {
	if s, ok := args["topic"].(string); ok {
		args["topic"] = strings.TrimSpace(s)
	}
}

func (r noteRules) NormalizeValues(v any) any {
	*r.normalized++
	if v == nil {
		return map[string]any{"text": "(empty)"}
	}
	return v
}

func (noteRules) CheckSpec(s *noteSpec) []kindkit.FieldError {
	if s.Topic == "" {
		return []kindkit.FieldError{{Field: "topic", Message: "must not be blank"}}
	}
	return nil
}

func (noteRules) Validate(s *noteSpec, v *noteValues) (*noteValues, []kindkit.FieldError) {
	if s != nil && v.Text == s.Topic {
		return nil, []kindkit.FieldError{{Field: "text", Message: "must differ from the topic"}}
	}
	return &noteValues{Text: strings.ToUpper(v.Text)}, nil
}

func (noteRules) Fallback(s *noteSpec, reason string) string {
	return "ask about " + s.Topic + " <now> & " + reason
}

func (noteRules) ErrorField(_ any, loc []string) string { return kindkit.DefaultErrorField(loc) }

func newNote(t *testing.T) (kindkit.Kind, *int) {
	t.Helper()
	n := new(int)
	k, err := kindkit.NewKind[noteSpec, noteValues](kindkit.Descriptor{
		Name: "note", Capability: "note_card", ToolName: "request_note", Source: "note.schema.json", Schema: noteSchema,
	}, noteRules{normalized: n})
	if err != nil {
		t.Fatal(err)
	}
	return k, n
}

func TestParseRaise(t *testing.T) {
	k, _ := newNote(t)
	for name, c := range map[string]struct {
		args, spec, reason, err string
	}{
		"canonical":       {args: `{"topic":" cats ","reason":" to file it "}`, spec: `{"topic":"cats"}`, reason: "to file it"},
		"default reason":  {args: `{"topic":"cats"}`, spec: `{"topic":"cats"}`, reason: kindkit.DefaultReason},
		"blank reason":    {args: `{"topic":"cats","reason":"  "}`, spec: `{"topic":"cats"}`, reason: kindkit.DefaultReason},
		"null reason":     {args: `{"topic":"cats","reason":null}`, spec: `{"topic":"cats"}`, reason: kindkit.DefaultReason},
		"empty arguments": {args: ``, err: "invalid arguments for request_note: topic: this field is required. Fix the arguments and call the tool again."},
		"not JSON":        {args: `{"topic":`, err: "invalid arguments for request_note: arguments are not valid JSON: unexpected end of JSON input at offset 9. Fix the arguments and call the tool again."},
		"trailing data":   {args: `{"topic":"a"} {}`, err: "invalid arguments for request_note: arguments are not valid JSON: invalid character '{' after top-level value at offset 14. Fix the arguments and call the tool again."},
		"repeated key":    {args: `{"topic":"a","topic":"b"}`, err: "invalid arguments for request_note: arguments are not valid JSON: duplicate key \"topic\" at offset 13. Fix the arguments and call the tool again."},
		"not an object":   {args: `["cats"]`, err: "invalid arguments for request_note: arguments must be a JSON object. Fix the arguments and call the tool again."},
		"reason a number": {args: `{"topic":"cats","reason":5}`, err: "invalid arguments for request_note: reason: must be a string. Fix the arguments and call the tool again."},
		"every schema error": {args: `{"topic":"too long","tags":["a",1,"c"],"x":true}`,
			err: "invalid arguments for request_note: unknown field 'x'; tags: must have at most 2 entries (got 3); tags[1]: must be a string, not number; topic: must be at most 5 characters long (got 8). Fix the arguments and call the tool again."},
		"rules error": {args: `{"topic":"   "}`, err: "invalid arguments for request_note: topic: must not be blank. Fix the arguments and call the tool again."},
	} {
		t.Run(name, func(t *testing.T) {
			r, err := k.ParseRaise([]byte(c.args))
			if c.err != "" {
				if err == nil {
					t.Fatalf("no error, spec %s", r.Spec.JSON)
				}
				if diff := cmp.Diff(c.err, err.Error()); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(r.Spec.JSON) != c.spec || r.Reason != c.reason {
				t.Errorf("got %s %q, want %s %q", r.Spec.JSON, r.Reason, c.spec, c.reason)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	k, normalized := newNote(t)
	raise, err := k.ParseRaise([]byte(`{"topic":"cats"}`))
	if err != nil {
		t.Fatal(err)
	}
	stored, err := k.LoadSpec(raise.Spec.JSON)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		spec       *kindkit.Spec
		values     string
		want       string
		errs       []kindkit.FieldError
		normalizes bool
	}{
		"canonical":       {spec: &raise.Spec, values: `{"text":"hello"}`, want: `{"text":"HELLO"}`},
		"stored spec":     {spec: &stored, values: `{"text":"hello"}`, want: `{"text":"HELLO"}`},
		"format only":     {values: `{"text":"cats"}`, want: `{"text":"CATS"}`},
		"rules error":     {spec: &raise.Spec, values: `{"text":"cats"}`, errs: []kindkit.FieldError{{Field: "text", Message: "must differ from the topic"}}},
		"null normalized": {spec: &raise.Spec, values: `null`, want: `{"text":"(EMPTY)"}`, normalizes: true},
		"schema errors":   {spec: &raise.Spec, values: `{"text":"","more":1}`, normalizes: true, errs: []kindkit.FieldError{{Field: "values", Message: "unknown field 'more'"}, {Field: "text", Message: "must be at least 1 character long"}}},
		"missing":         {spec: &raise.Spec, values: `{}`, normalizes: true, errs: []kindkit.FieldError{{Field: "text", Message: "this field is required"}}},
		"wrong type":      {spec: &raise.Spec, values: `"text"`, normalizes: true, errs: []kindkit.FieldError{{Field: "values", Message: "must be an object, not string"}}},
		"not JSON":        {spec: &raise.Spec, values: `{"text":`, errs: []kindkit.FieldError{{Field: "values", Message: "invalid values shape: unexpected end of JSON input at offset 8"}}},
		"repeated key":    {spec: &raise.Spec, values: `{"text":"a","text":"b"}`, errs: []kindkit.FieldError{{Field: "values", Message: `invalid values shape: duplicate key "text" at offset 12`}}},
		"bad stored spec": {spec: &kindkit.Spec{JSON: json.RawMessage(`{"topic":7}`)}, values: `{"text":"a"}`, errs: []kindkit.FieldError{{Field: "values", Message: "the question can no longer be checked: load note spec: json: cannot unmarshal number into Go struct field noteSpec.topic of type string"}}},
	} {
		t.Run(name, func(t *testing.T) {
			before := *normalized
			got, errs := k.Validate(c.spec, []byte(c.values))
			if diff := cmp.Diff(c.errs, errs); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			if string(got) != c.want {
				t.Errorf("values = %s, want %s", got, c.want)
			}
			if (*normalized > before) != c.normalizes {
				t.Errorf("NormalizeValues called: %v, want %v", *normalized > before, c.normalizes)
			}
		})
	}
}

func TestFallbackEnvelope(t *testing.T) {
	k, _ := newNote(t)
	raise, _ := k.ParseRaise([]byte(`{"topic":"cats"}`))
	want := `{"instructions":"ask about cats <now> & to help you better","kind":"note","mode":"conversational","reason":"to help you better","spec":{"topic":"cats"}}`
	if got := k.Fallback(raise.Spec, raise.Reason); got != want {
		t.Errorf("Fallback =\n%s\nwant\n%s", got, want)
	}
}

// The payload's byte form is what the model reads; PROTOCOL.md §5 pins it.
func TestPayloadJSON(t *testing.T) {
	for _, c := range []struct {
		p    kindkit.Payload
		want string
	}{
		{kindkit.Submitted(json.RawMessage(`{"name":"Al <al@x.io>"}`)), `{"status":"submitted","values":{"name":"Al <al@x.io>"}}`},
		{kindkit.Declined(), `{"message":"The visitor declined. Continue helping them without this and do not ask again this conversation.","status":"declined"}`},
		{kindkit.NoResponse(), `{"message":"The visitor did not respond to the card. Continue without it; you may offer again later if it becomes relevant.","status":"no_response"}`},
	} {
		if got := c.p.JSON(); got != c.want {
			t.Errorf("JSON() = %s, want %s", got, c.want)
		}
	}
}

func TestCatalog(t *testing.T) {
	a, _ := newNote(t)
	b, _ := newNote(t)
	if _, err := kindkit.NewCatalog(a, b); err == nil {
		t.Error("two kinds with one name were accepted")
	}
	c, err := kindkit.NewCatalog(a)
	if err != nil {
		t.Fatal(err)
	}
	if k, ok := c.ByTool("request_note"); !ok || k != a {
		t.Error("ByTool did not find the kind")
	}
	if _, ok := c.Kind("nope"); ok {
		t.Error("found a kind that is not there")
	}
}

func TestNewKindBadSchema(t *testing.T) {
	for name, schema := range map[string]string{
		"not JSON":  `{`,
		"no Values": `{"$defs":{"Spec":{"type":"object"}}}`,
	} {
		if _, err := kindkit.NewKind[noteSpec, noteValues](kindkit.Descriptor{Name: "x", Schema: schema}, noteRules{}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// A number the schema validator cannot read (it panicked on one where the
// schema bounds it) or reads slowly is refused with an error, in a raise
// and in a submit, for a kind whose schema bounds a number.
func TestOutOfRangeNumbers(t *testing.T) {
	type measure struct {
		N float64 `json:"n"`
	}
	const bounded = `{"type":"object","required":["n"],"properties":{"n":{"type":"number","minimum":0,"maximum":100}}}`
	k, err := kindkit.NewKind[measure, measure](kindkit.Descriptor{Name: "measure", ToolName: "request_measure", Source: "measure.schema.json",
		Schema: `{"$defs":{"Spec":` + bounded + `,"Values":` + bounded + `}}`}, kindkit.Unimplemented[measure, measure]{})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := k.ParseRaise([]byte(`{"n":1e2}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"1E1000001", "-1e-1000001", "1e999999", "0." + strings.Repeat("0", 1_000_001) + "1", "1" + strings.Repeat("0", 400)} {
		want := "number " + n[:min(len(n), 20)]
		if _, err := k.ParseRaise([]byte(`{"n":` + n + `}`)); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("raise with %.30s: %v", n, err)
		}
		if _, errs := k.Validate(&spec.Spec, []byte(`{"n":`+n+`}`)); len(errs) != 1 || !strings.Contains(errs[0].Message, "out of range") {
			t.Errorf("submit of %.30s: %v", n, errs)
		}
	}
	for _, n := range []string{"1e400", "1" + strings.Repeat("0", 399), "1E-400", "99.5"} {
		_, errs := k.Validate(&spec.Spec, []byte(`{"n":`+n+`}`))
		if n == "99.5" || n == "1E-400" {
			if errs != nil {
				t.Errorf("submit of %.30s: %v", n, errs)
			}
		} else if len(errs) != 1 || !strings.Contains(errs[0].Message, "must be at most 100") {
			t.Errorf("submit of %.30s: want the schema's bound, got %v", n, errs)
		}
	}
}
