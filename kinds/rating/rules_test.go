package rating_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/gen/ratinggen"
	"github.com/kindkit/kindkit/kinds/rating"
	"github.com/kindkit/kindkit/kindtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func kind(t testing.TB) kindkit.Kind {
	t.Helper()
	k, err := ratinggen.New(rating.Rules{})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestParseRaise(t *testing.T) {
	k := kind(t)
	for name, c := range map[string]struct{ args, spec, err string }{
		"canonical": {args: `{"question":" How did we do? ","scale":{"min":1,"max":5,"minLabel":" Badly ","maxLabel":"  "},"reason":"r"}`,
			spec: `{"question":"How did we do?","scale":{"min":1,"max":5,"minLabel":"Badly"}}`},
		"with comment": {args: `{"question":"Q","scale":{"min":0,"max":10},"allowComment":true}`,
			spec: `{"question":"Q","scale":{"min":0,"max":10},"allowComment":true}`},
		"upside down": {args: `{"question":"Q","scale":{"min":5,"max":1}}`,
			err: "invalid arguments for request_rating: scale: min (5) must be less than max (1). Fix the arguments and call the tool again."},
		"too wide": {args: `{"question":"Q","scale":{"min":0,"max":100}}`,
			err: "invalid arguments for request_rating: scale.max: must be at most 10. Fix the arguments and call the tool again."},
		"blank question": {args: `{"question":"  ","scale":{"min":1,"max":5}}`,
			err: "invalid arguments for request_rating: question: must be at least 1 character long. Fix the arguments and call the tool again."},
		"fractional bound": {args: `{"question":"Q","scale":{"min":1.5,"max":5}}`,
			err: "invalid arguments for request_rating: scale.min: must be an integer, not number. Fix the arguments and call the tool again."},
	} {
		t.Run(name, func(t *testing.T) {
			r, err := k.ParseRaise([]byte(c.args))
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("error %v, want %s", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(r.Spec.JSON) != c.spec {
				t.Errorf("spec %s, want %s", r.Spec.JSON, c.spec)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	k := kind(t)
	plain := kindtest.Raise(t, k, `{"question":"Q","scale":{"min":1,"max":5}}`)
	commented := kindtest.Raise(t, k, `{"question":"Q","scale":{"min":1,"max":5},"allowComment":true}`)
	for name, c := range map[string]struct {
		spec   *kindkit.Spec
		values string
		want   string
		errs   []kindkit.FieldError
	}{
		"score":            {spec: &plain.Spec, values: `{"score":4}`, want: `{"score":4}`},
		"blank comment":    {spec: &plain.Spec, values: `{"score":1,"comment":"  "}`, want: `{"score":1}`},
		"comment":          {spec: &commented.Spec, values: `{"score":5,"comment":" Great "}`, want: `{"score":5,"comment":"Great"}`},
		"unwanted comment": {spec: &plain.Spec, values: `{"score":5,"comment":"Great"}`, errs: []kindkit.FieldError{{Field: "comment", Message: "this question takes no comment"}}},
		"off the scale":    {spec: &plain.Spec, values: `{"score":6}`, errs: []kindkit.FieldError{{Field: "score", Message: "must be a whole number from 1 to 5"}}},
		"both wrong":       {spec: &plain.Spec, values: `{"score":0,"comment":"x"}`, errs: []kindkit.FieldError{{Field: "score", Message: "must be a whole number from 1 to 5"}, {Field: "comment", Message: "this question takes no comment"}}},
		"not a number":     {spec: &plain.Spec, values: `{"score":"4"}`, errs: []kindkit.FieldError{{Field: "score", Message: "must be an integer, not string"}}},
		"no score":         {spec: &plain.Spec, values: `{}`, errs: []kindkit.FieldError{{Field: "score", Message: "this field is required"}}},
		"format only":      {values: `{"score":9,"comment":"ok"}`, want: `{"score":9,"comment":"ok"}`},
		"format only, 11":  {values: `{"score":11}`, errs: []kindkit.FieldError{{Field: "score", Message: "must be a whole number from 0 to 10"}}},
	} {
		t.Run(name, func(t *testing.T) {
			got, errs := k.Validate(c.spec, []byte(c.values))
			if diff := cmp.Diff(c.errs, errs); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			if string(got) != c.want {
				t.Errorf("values %s, want %s", got, c.want)
			}
		})
	}
}

func TestFallback(t *testing.T) {
	k := kind(t)
	r := kindtest.Raise(t, k, `{"question":"How did we do?","scale":{"min":1,"max":5,"minLabel":"Badly","maxLabel":"Great"},"allowComment":true,"reason":"to improve"}`)
	want := `{"instructions":"This channel cannot show a rating scale, so ask in conversation, to improve: \"How did we do?\" Ask for a whole number from 1 (Badly) to 5 (Great). Invite a short comment too; it is optional. Then call the submit_interaction tool with kind \"rating\" and values {\"score\": <number>, \"comment\": \"<their words>\"}. It checks the score and tells you what to re-ask. If the visitor would rather not rate, call submit_interaction with declined=true and carry on.","kind":"rating","mode":"conversational","reason":"to improve","spec":{"question":"How did we do?","scale":{"min":1,"max":5,"minLabel":"Badly","maxLabel":"Great"},"allowComment":true}}`
	if got := k.Fallback(r.Spec, r.Reason); got != want {
		t.Errorf("Fallback =\n%s\nwant\n%s", got, want)
	}
}

func FuzzValidate(f *testing.F) {
	for _, v := range []string{`{"score":3}`, `{"score":3,"comment":" x "}`, `{"score":-1}`, `null`, `{"score":1e400}`, `[]`} {
		f.Add(v)
	}
	k := kind(f)
	r := kindtest.Raise(f, k, `{"question":"Q","scale":{"min":1,"max":5},"allowComment":true}`)
	f.Fuzz(func(t *testing.T, values string) {
		if out, errs := kindtest.Validate(t, k, &r.Spec, []byte(values)); errs == nil {
			kindtest.Idempotent(t, k, &r.Spec, out)
		}
	})
}
