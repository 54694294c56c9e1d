package choices_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/gen/choicesgen"
	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/kinds/choices"
	"github.com/kindkit/kindkit/kindtest"
)

// The spec most tests validate against: a single-select and a multi-select
// question.
const planTopics = `{"questions":[
	{"question":"Which plan?","header":"Plan","options":[{"label":"Basic","description":"For individuals"},"Pro"]},
	{"question":"Topics?","header":"Topics","options":["Sales","Support","Billing"],"multiSelect":true}],
	"reason":"to route you"}`

func newKind(t testing.TB) kindkit.Kind {
	t.Helper()
	k, err := choicesgen.New(choices.Rules{})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// raiseErrors returns the field errors of a failed raise, and fails the test
// when the raise succeeded or failed some other way.
func raiseErrors(t *testing.T, err error) []kindkit.FieldError {
	t.Helper()
	var re *kindkit.RaiseError
	if !errors.As(err, &re) {
		t.Fatalf("error = %v (%T), want *kindkit.RaiseError", err, err)
	}
	if re.Tool != choicesgen.ToolName {
		t.Errorf("Tool = %q, want %q", re.Tool, choicesgen.ToolName)
	}
	return re.Errors
}

func fe(field, message string) kindkit.FieldError {
	return kindkit.FieldError{Field: field, Message: message}
}

func TestParseRaise(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		args       string
		wantSpec   string
		wantReason string
	}{
		"protocol canonical spec": {
			args:       planTopics,
			wantSpec:   `{"questions":[{"question":"Which plan?","header":"Plan","options":[{"label":"Basic","description":"For individuals"},{"label":"Pro"}]},{"question":"Topics?","header":"Topics","options":[{"label":"Sales"},{"label":"Support"},{"label":"Billing"}],"multiSelect":true}]}`,
			wantReason: "to route you",
		},
		"string shorthand and objects mix": {
			args:       `{"questions":[{"question":"Which plan?","header":"Plan","options":[{"label":"Basic","description":"For individuals"},"Pro"]}],"reason":"r"}`,
			wantSpec:   `{"questions":[{"question":"Which plan?","header":"Plan","options":[{"label":"Basic","description":"For individuals"},{"label":"Pro"}]}]}`,
			wantReason: "r",
		},
		"texts are trimmed": {
			args:       `{"questions":[{"question":"  Which plan?\n","header":"  Plan  ","options":["  Basic ",{"label":"\tPro ","description":"  Best value  "}]}],"reason":"  to quote you  "}`,
			wantSpec:   `{"questions":[{"question":"Which plan?","header":"Plan","options":[{"label":"Basic"},{"label":"Pro","description":"Best value"}]}]}`,
			wantReason: "to quote you",
		},
		"blank description is dropped": {
			args:     `{"questions":[{"question":"q","header":"h","options":[{"label":"a","description":"   "},{"label":"b","description":""}]}],"reason":"r"}`,
			wantSpec: `{"questions":[{"question":"q","header":"h","options":[{"label":"a"},{"label":"b"}]}]}`,
		},
		"multiSelect true is kept": {
			args:     `{"questions":[{"question":"q","header":"h","options":["a","b"],"multiSelect":true}],"reason":"r"}`,
			wantSpec: `{"questions":[{"question":"q","header":"h","options":[{"label":"a"},{"label":"b"}],"multiSelect":true}]}`,
		},
		"multiSelect false is left out": {
			args:     `{"questions":[{"question":"q","header":"h","options":["a","b"],"multiSelect":false}],"reason":"r"}`,
			wantSpec: `{"questions":[{"question":"q","header":"h","options":[{"label":"a"},{"label":"b"}]}]}`,
		},
		"multiSelect that is not a boolean does not count": {
			args:     `{"questions":[{"question":"q","header":"h","options":["a","b"],"multiSelect":"true"},{"question":"q","header":"i","options":["a","b"],"multiSelect":1},{"question":"q","header":"j","options":["a","b"],"multiSelect":null}],"reason":"r"}`,
			wantSpec: `{"questions":[{"question":"q","header":"h","options":[{"label":"a"},{"label":"b"}]},{"question":"q","header":"i","options":[{"label":"a"},{"label":"b"}]},{"question":"q","header":"j","options":[{"label":"a"},{"label":"b"}]}]}`,
		},
		"duplicate option labels are accepted": {
			args:     `{"questions":[{"question":"q","header":"h","options":["a","a"]}],"reason":"r"}`,
			wantSpec: `{"questions":[{"question":"q","header":"h","options":[{"label":"a"},{"label":"a"}]}]}`,
		},
		"header of 12 code points is accepted": {
			args:     `{"questions":[{"question":"q","header":" Größenwahn12 ","options":["a","b"]}],"reason":"r"}`,
			wantSpec: `{"questions":[{"question":"q","header":"Größenwahn12","options":[{"label":"a"},{"label":"b"}]}]}`,
		},
		"four questions of four options": {
			args:     `{"questions":[{"question":"q","header":"a","options":["1","2","3","4"]},{"question":"q","header":"b","options":["1","2"]},{"question":"q","header":"c","options":["1","2"]},{"question":"q","header":"d","options":["1","2"]}],"reason":"r"}`,
			wantSpec: `{"questions":[{"question":"q","header":"a","options":[{"label":"1"},{"label":"2"},{"label":"3"},{"label":"4"}]},{"question":"q","header":"b","options":[{"label":"1"},{"label":"2"}]},{"question":"q","header":"c","options":[{"label":"1"},{"label":"2"}]},{"question":"q","header":"d","options":[{"label":"1"},{"label":"2"}]}]}`,
		},
		"reason defaults": {
			args:       `{"questions":[{"question":"q","header":"h","options":["a","b"]}]}`,
			wantSpec:   `{"questions":[{"question":"q","header":"h","options":[{"label":"a"},{"label":"b"}]}]}`,
			wantReason: kindkit.DefaultReason,
		},
		"blank reason defaults": {
			args:       `{"questions":[{"question":"q","header":"h","options":["a","b"]}],"reason":"   "}`,
			wantSpec:   `{"questions":[{"question":"q","header":"h","options":[{"label":"a"},{"label":"b"}]}]}`,
			wantReason: kindkit.DefaultReason,
		},
	}
	k := newKind(t)
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := kindtest.Raise(t, k, tt.args)
			if diff := cmp.Diff(tt.wantSpec, string(r.Spec.JSON)); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			if tt.wantReason != "" && r.Reason != tt.wantReason {
				t.Errorf("reason = %q, want %q", r.Reason, tt.wantReason)
			}
		})
	}
}

func TestParseRaiseErrors(t *testing.T) {
	t.Parallel()
	q := func(header string, options string) string {
		return `{"question":"q","header":"` + header + `","options":` + options + `}`
	}
	raise := func(questions ...string) string {
		return `{"questions":[` + strings.Join(questions, ",") + `],"reason":"r"}`
	}
	tests := map[string]struct {
		args string
		want []kindkit.FieldError
	}{
		// §6.2's rules, in its table's order.
		"questions not an array":           {`{"questions":"Plan?","reason":"r"}`, []kindkit.FieldError{fe("questions", "must be an array, not string")}},
		"questions missing":                {`{"reason":"r"}`, []kindkit.FieldError{fe("questions", "this field is required")}},
		"no questions":                     {raise(), []kindkit.FieldError{fe("questions", "must have at least 1 entry (got 0)")}},
		"five questions":                   {raise(q("a", `["1","2"]`), q("b", `["1","2"]`), q("c", `["1","2"]`), q("d", `["1","2"]`), q("e", `["1","2"]`)), []kindkit.FieldError{fe("questions", "must have at most 4 entries (got 5)")}},
		"question not an object":           {raise(`"Which plan?"`), []kindkit.FieldError{fe("questions[0]", "must be an object, not string")}},
		"question missing":                 {raise(`{"header":"h","options":["a","b"]}`), []kindkit.FieldError{fe("questions[0].question", "this field is required")}},
		"empty question":                   {raise(`{"question":"  ","header":"Plan","options":["a","b"]}`), []kindkit.FieldError{fe("questions[0].question", "each question needs a non-empty 'question'")}},
		"empty header":                     {raise(q("a", `["1","2"]`), q("   ", `["1","2"]`)), []kindkit.FieldError{fe("questions[1].header", "each question needs a non-empty 'header'")}},
		"header too long":                  {raise(q("Subscription", `["1","2"]`), q("Subscriptions", `["1","2"]`)), []kindkit.FieldError{fe("questions[1].header", "must be at most 12 characters long (got 13)")}},
		"duplicate header":                 {raise(q("Plan", `["1","2"]`), q("Size", `["1","2"]`), q(" Plan ", `["1","2"]`)), []kindkit.FieldError{fe("questions[2].header", "duplicate question header 'Plan'")}},
		"headers are case-sensitive":       {raise(q("Plan", `["1","2"]`), q("plan", `["1","2"]`)), nil},
		"options missing":                  {raise(`{"question":"q","header":"Plan"}`), []kindkit.FieldError{fe("questions[0].options", "this field is required")}},
		"options not an array":             {raise(q("Plan", `"Basic, Pro"`)), []kindkit.FieldError{fe("questions[0].options", "must be an array, not string")}},
		"one option":                       {raise(q("Plan", `["Pro"]`)), []kindkit.FieldError{fe("questions[0].options", "must have at least 2 entries (got 1)")}},
		"five options":                     {raise(q("Plan", `["1","2","3","4","5"]`)), []kindkit.FieldError{fe("questions[0].options", "must have at most 4 entries (got 5)")}},
		"option neither string nor object": {raise(q("Plan", `["Pro",7]`)), []kindkit.FieldError{fe("questions[0].options[1]", "must be an object, not number")}},
		"option without label":             {raise(q("Plan", `["Pro",{"description":"d"}]`)), []kindkit.FieldError{fe("questions[0].options[1].label", "this field is required")}},
		"blank shorthand label":            {raise(q("Plan", `["Pro","  "]`)), []kindkit.FieldError{fe("questions[0].options[1].label", "an option in 'Plan' has an empty label")}},
		"blank object label":               {raise(q("Plan", `[{"label":" "},"Pro"]`)), []kindkit.FieldError{fe("questions[0].options[0].label", "an option in 'Plan' has an empty label")}},
		"unknown question field":           {raise(`{"question":"q","header":"h","options":["a","b"],"hint":"x"}`), []kindkit.FieldError{fe("questions[0]", "unknown field 'hint'")}},
		"reason not a string":              {`{"questions":[],"reason":5}`, []kindkit.FieldError{fe("reason", "must be a string")}},
		"arguments not an object":          {`["Plan"]`, []kindkit.FieldError{fe("", "arguments must be a JSON object")}},
		"every rule error, question by question": {
			raise(`{"question":" ","header":" ","options":["",{"label":"b"}]}`, q("Plan", `["a","b"]`), `{"question":"","header":"Plan","options":["a"," "]}`),
			[]kindkit.FieldError{
				fe("questions[0].question", "each question needs a non-empty 'question'"),
				fe("questions[0].header", "each question needs a non-empty 'header'"),
				fe("questions[0].options[0].label", "an option in '' has an empty label"),
				fe("questions[2].question", "each question needs a non-empty 'question'"),
				fe("questions[2].header", "duplicate question header 'Plan'"),
				fe("questions[2].options[1].label", "an option in 'Plan' has an empty label"),
			},
		},
	}
	k := newKind(t)
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r, err := k.ParseRaise([]byte(tt.args))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("ParseRaise: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("ParseRaise = %s, want errors", r.Spec.JSON)
			}
			if diff := cmp.Diff(tt.want, raiseErrors(t, err)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRaiseErrorText(t *testing.T) {
	t.Parallel()
	_, err := newKind(t).ParseRaise([]byte(`{"questions":[{"question":"q","header":"Plan","options":["a","b"]},{"question":"q","header":"Plan","options":["a","b"]}],"reason":"r"}`))
	want := "invalid arguments for request_choices: questions[1].header: duplicate question header 'Plan'. Fix the arguments and call the tool again."
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		values string
		want   string
		errs   []kindkit.FieldError
	}{
		"protocol submitted example": {
			values: `{"answers":[{"header":"Plan","options":["Pro"]},{"header":"Topics","options":["Sales","Billing"],"other":"Partnerships"}]}`,
			want:   `{"answers":[{"header":"Plan","options":["Pro"]},{"header":"Topics","options":["Sales","Billing"],"other":"Partnerships"}]}`,
		},
		"answers come back in spec order": {
			values: `{"answers":[{"header":"Topics","options":["Support"]},{"header":"Plan","options":["Basic"]}]}`,
			want:   `{"answers":[{"header":"Plan","options":["Basic"]},{"header":"Topics","options":["Support"]}]}`,
		},
		"answers are trimmed and blanks dropped": {
			values: `{"answers":[{"header":"  Plan ","options":["  ","Pro  ",""],"other":"   "},{"header":"Topics","options":[" Sales","\tBilling\n"],"other":" Partnerships "}]}`,
			want:   `{"answers":[{"header":"Plan","options":["Pro"]},{"header":"Topics","options":["Sales","Billing"],"other":"Partnerships"}]}`,
		},
		"other alone answers a single-select question": {
			values: `{"answers":[{"header":"Plan","options":[],"other":" Enterprise "},{"header":"Topics","other":"Legal"}]}`,
			want:   `{"answers":[{"header":"Plan","other":"Enterprise"},{"header":"Topics","other":"Legal"}]}`,
		},
		"null options and other count as absent": {
			values: `{"answers":[{"header":"Plan","options":null,"other":"Enterprise"},{"header":"Topics","options":["Sales"],"other":null}]}`,
			want:   `{"answers":[{"header":"Plan","other":"Enterprise"},{"header":"Topics","options":["Sales"]}]}`,
		},
		// The reference drops these two silently; kindkit says so.
		"an answer to a question not asked": {
			values: `{"answers":[{"header":"Colour","options":["Red"]},{"header":"Plan","options":["Pro"]},{"header":"Topics","options":["Sales"]}]}`,
			errs:   []kindkit.FieldError{fe("Colour", "no question has the header 'Colour'")},
		},
		"an answer with a blank header": {
			values: `{"answers":[{"header":" ","options":["Pro"]},{"header":"Plan","options":["Pro"]},{"header":"Topics","options":["Sales"]}]}`,
			errs:   []kindkit.FieldError{fe("answers", "each answer needs the 'header' of its question")},
		},
		"a question answered twice": {
			values: `{"answers":[{"header":"Plan","options":["Basic"]},{"header":"Plan","options":["Nope"]},{"header":"Topics","options":["Sales"]}]}`,
			errs:   []kindkit.FieldError{fe("Plan", "this question is answered twice")},
		},
		"every problem at once": {
			values: `{"answers":[{"header":"Plan","options":["Basic","Pro"]},{"header":"Plan","options":["Pro"]},{"header":"Budget","options":["Low"]}]}`,
			errs: []kindkit.FieldError{
				fe("Plan", "this question is answered twice"),
				fe("Budget", "no question has the header 'Budget'"),
				fe("Plan", "this question takes a single answer"),
				fe("Topics", "this question must be answered"),
			},
		},
		"multi-select takes several labels and other": {
			values: `{"answers":[{"header":"Plan","options":["Pro"]},{"header":"Topics","options":["Sales","Support","Billing"],"other":"Legal"}]}`,
			want:   `{"answers":[{"header":"Plan","options":["Pro"]},{"header":"Topics","options":["Sales","Support","Billing"],"other":"Legal"}]}`,
		},
		"unanswered question": {
			values: `{"answers":[{"header":"Plan","options":["Pro"]}]}`,
			errs:   []kindkit.FieldError{fe("Topics", "this question must be answered")},
		},
		"empty object": {
			values: `{}`,
			errs:   []kindkit.FieldError{fe("Plan", "this question must be answered"), fe("Topics", "this question must be answered")},
		},
		"null": {
			values: `null`,
			errs:   []kindkit.FieldError{fe("Plan", "this question must be answered"), fe("Topics", "this question must be answered")},
		},
		"null answers": {
			values: `{"answers":null}`,
			errs:   []kindkit.FieldError{fe("Plan", "this question must be answered"), fe("Topics", "this question must be answered")},
		},
		"no answers": {
			values: `{"answers":[]}`,
			errs:   []kindkit.FieldError{fe("Plan", "this question must be answered"), fe("Topics", "this question must be answered")},
		},
		"label not offered": {
			values: `{"answers":[{"header":"Plan","options":["Gold"]},{"header":"Topics","options":["Sales"]}]}`,
			errs:   []kindkit.FieldError{fe("Plan", "'Gold' is not one of the offered options")},
		},
		"labels are case-sensitive": {
			values: `{"answers":[{"header":"Plan","options":["pro"]},{"header":"Topics","options":["Sales"]}]}`,
			errs:   []kindkit.FieldError{fe("Plan", "'pro' is not one of the offered options")},
		},
		"no pick": {
			values: `{"answers":[{"header":"Plan","options":["  "],"other":" "},{"header":"Topics"}]}`,
			errs:   []kindkit.FieldError{fe("Plan", "select an option or provide an 'other' answer"), fe("Topics", "select an option or provide an 'other' answer")},
		},
		"single-select with a label and other": {
			values: `{"answers":[{"header":"Plan","options":["Pro"],"other":"Enterprise"},{"header":"Topics","options":["Sales"]}]}`,
			errs:   []kindkit.FieldError{fe("Plan", "this question takes a single answer")},
		},
		"bad labels and the count both reported": {
			values: `{"answers":[{"header":"Plan","options":["Gold","Pro","Silver"]},{"header":"Topics","options":["Sales"]}]}`,
			errs: []kindkit.FieldError{
				fe("Plan", "'Gold' is not one of the offered options"),
				fe("Plan", "'Silver' is not one of the offered options"),
				fe("Plan", "this question takes a single answer"),
			},
		},
		"all errors in spec order": {
			values: `{"answers":[{"header":"Topics","options":["Sales","Legal"]},{"header":"Plan","options":["Basic","Pro"]}]}`,
			errs: []kindkit.FieldError{
				fe("Plan", "this question takes a single answer"),
				fe("Topics", "'Legal' is not one of the offered options"),
			},
		},
		// Shape errors come from the schema; those inside an answer name
		// its question when it has a header.
		"answers not an array":    {values: `{"answers":"x"}`, errs: []kindkit.FieldError{fe("answers", "must be an array, not string")}},
		"answer not an object":    {values: `{"answers":["Pro"]}`, errs: []kindkit.FieldError{fe("answers", "must be an object, not string")}},
		"label not a string":      {values: `{"answers":[{"header":" Plan ","options":[1]}]}`, errs: []kindkit.FieldError{fe("Plan", "must be a string, not number")}},
		"options not an array":    {values: `{"answers":[{"header":"Plan","options":"Pro"}]}`, errs: []kindkit.FieldError{fe("Plan", "must be an array, not string")}},
		"header not a string":     {values: `{"answers":[{"header":5,"options":["Pro"]}]}`, errs: []kindkit.FieldError{fe("answers", "must be a string, not number")}},
		"blank header":            {values: `{"answers":[{"header":" ","other":5}]}`, errs: []kindkit.FieldError{fe("answers", "must be a string, not number")}},
		"header missing":          {values: `{"answers":[{"options":["Pro"]}]}`, errs: []kindkit.FieldError{fe("answers", "this field is required")}},
		"unknown answer field":    {values: `{"answers":[{"header":"Plan","options":["Pro"],"note":"x"}]}`, errs: []kindkit.FieldError{fe("Plan", "unknown field 'note'")}},
		"unknown top-level field": {values: `{"answers":[],"extra":1}`, errs: []kindkit.FieldError{fe("values", "unknown field 'extra'")}},
		"values not an object":    {values: `"Pro"`, errs: []kindkit.FieldError{fe("values", "must be an object, not string")}},
		"values not JSON":         {values: `{"answers":`, errs: []kindkit.FieldError{fe("values", "invalid values shape: unexpected end of JSON input at offset 11")}},
	}
	k := newKind(t)
	raise := kindtest.Raise(t, k, planTopics)
	loaded, err := k.LoadSpec(raise.Spec.JSON)
	if err != nil {
		t.Fatal(err)
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// A spec fresh from a raise and one read back from storage
			// must check the same.
			for _, spec := range []kindkit.Spec{raise.Spec, loaded} {
				got, errs := k.Validate(&spec, []byte(tt.values))
				if diff := cmp.Diff(tt.errs, errs); diff != "" {
					t.Errorf("errors (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tt.want, string(got)); diff != "" {
					t.Errorf("values (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestValidateFormatOnly is a conversational submit whose raise was in an
// earlier turn: there is no spec to check against.
func TestValidateFormatOnly(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		values string
		want   string
		errs   []kindkit.FieldError
	}{
		"answers kept as submitted, normalised": {
			values: `{"answers":[{"header":" Topics ","options":["Sales"," ",""," Legal"],"other":"  "},{"header":"Colour","other":" red "},{"header":"Plan","options":["Basic","Pro"]}]}`,
			want:   `{"answers":[{"header":"Topics","options":["Sales","Legal"]},{"header":"Colour","other":"red"},{"header":"Plan","options":["Basic","Pro"]}]}`,
		},
		"duplicate headers kept": {
			values: `{"answers":[{"header":"Plan","options":["Basic"]},{"header":"Plan","options":["Pro"]}]}`,
			want:   `{"answers":[{"header":"Plan","options":["Basic"]},{"header":"Plan","options":["Pro"]}]}`,
		},
		"empty object": {values: `{}`, errs: []kindkit.FieldError{fe("answers", "provide an answer for each question, or declined=true")}},
		"null":         {values: `null`, errs: []kindkit.FieldError{fe("answers", "provide an answer for each question, or declined=true")}},
		"no answers":   {values: `{"answers":[]}`, errs: []kindkit.FieldError{fe("answers", "provide an answer for each question, or declined=true")}},
		"answers without a pick": {
			values: `{"answers":[{"header":"Plan","options":[" "]},{"header":"Topics","options":["Sales"]},{"header":"Size","other":""}]}`,
			errs:   []kindkit.FieldError{fe("Plan", "select an option or provide an 'other' answer"), fe("Size", "select an option or provide an 'other' answer")},
		},
		"blank header without a pick": {
			values: `{"answers":[{"header":"  "}]}`,
			errs:   []kindkit.FieldError{fe("answers", "select an option or provide an 'other' answer")},
		},
		"shape errors still apply": {values: `{"answers":"x"}`, errs: []kindkit.FieldError{fe("answers", "must be an array, not string")}},
	}
	k := newKind(t)
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, errs := k.Validate(nil, []byte(tt.values))
			if diff := cmp.Diff(tt.errs, errs); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFallback(t *testing.T) {
	t.Parallel()
	k := newKind(t)
	raise := kindtest.Raise(t, k, planTopics)
	var env kindkit.FallbackDirective
	if err := json.Unmarshal([]byte(k.Fallback(raise.Spec, raise.Reason)), &env); err != nil {
		t.Fatal(err)
	}
	if env.Kind != "choices" || env.Mode != "conversational" || env.Reason != "to route you" || string(env.Spec) != string(raise.Spec.JSON) {
		t.Errorf("envelope = %+v", env)
	}
	// The directive's prose is free; these parts of it are not.
	for _, want := range []string{
		"cannot show choice chips",
		"conversational",
		"to route you",
		"\n- [Plan] Which plan? Options: Basic, Pro.\n",
		"\n- [Topics] Topics? Options: Sales, Support, Billing (choose one or more).\n",
		"'other'",
		"ask again",
		"will not choose",
		"submit_interaction",
		`kind "choices"`,
		"{ answers: [{ header, options:[…], other? }] }",
		"declined=true",
	} {
		if !strings.Contains(env.Instructions, want) {
			t.Errorf("instructions lack %q:\n%s", want, env.Instructions)
		}
	}
}

// TestCatalog checks that kinds.All wires these rules, not the schema alone.
func TestCatalog(t *testing.T) {
	t.Parallel()
	k := kindtest.Kind(t, kinds.All, choicesgen.Name)
	_, err := k.ParseRaise([]byte(`{"questions":[{"question":"q","header":"Plan","options":["a","b"]},{"question":"q","header":"Plan","options":["a","b"]}]}`))
	var re *kindkit.RaiseError
	if !errors.As(err, &re) || len(re.Errors) != 1 || re.Errors[0].Message != "duplicate question header 'Plan'" {
		t.Errorf("catalog kind ParseRaise error = %v, want the duplicate header rule", err)
	}
}
