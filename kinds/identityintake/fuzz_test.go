package identityintake_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/kindtest"
)

// fuzzSpecs are the specs FuzzValidate picks from by its spec argument; the
// empty one is format-only mode.
var fuzzSpecs = []string{
	"",
	nameEmailPhone,
	`{"fields":["name","email","phone"]}`,
}

// FuzzValidate checks that any values give either canonical JSON that checks
// to itself again, or at least one complete field error.
func FuzzValidate(f *testing.F) {
	for _, seed := range []struct {
		values string
		spec   uint8
	}{
		{`{"name":"Alice","email":"Alice@EXAMPLE.com","phone":"+1 (555) 123-4567"}`, 1},
		{`{"name":" Bob ","phone":"555.123.4567"}`, 0},
		{`{"email":"   "}`, 0},
		{`{"email":"   "}`, 2},
		{`{"email":"a@b@c.com","phone":"+0123456789"}`, 1},
		{`{"phone":"+44 07911 123456","company":"Acme"}`, 0},
		{`{"email":5}`, 1},
		{`"abc"`, 0},
		{`null`, 2},
		{`{"name":`, 0},
	} {
		f.Add([]byte(seed.values), seed.spec)
	}
	k := newKind(f)
	specs := kindtest.Specs(f, k, fuzzSpecs...)
	f.Fuzz(func(t *testing.T, values []byte, spec uint8) {
		s := specs[int(spec)%len(specs)]
		out, errs := kindtest.Validate(t, k, s, values)
		switch {
		case errs != nil:
		case string(out) == "{}":
			// Only blanks were given: they pass the nothing-given check,
			// which looks at the raw strings, but leave nothing behind.
			if _, errs := k.Validate(s, out); !cmp.Equal([]kindkit.FieldError{fe("values", msgNothingGiven)}, errs) {
				t.Errorf("checking {} again: %v", errs)
			}
		default:
			kindtest.Idempotent(t, k, s, out)
		}
	})
}
