// Package kindtest holds what the tests of a kind share, for kindkit's own
// kinds and for a module's: whatever is submitted, Validate answers with
// canonical values that check again to themselves, or with complete field
// errors and no values. It works on any catalog:
//
//	k := kindtest.Kind(t, kinds.All, "poll")
//	spec := kindtest.Spec(t, k, `{"question":"Lunch?","options":[…]}`)
//	v := kindtest.Accept[pollgen.Values](t, k, spec, `{"choice":"Pizza"}`)
//	_, errs := kindtest.Validate(t, k, spec, []byte(`{"choice":"Salad"}`))
package kindtest

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/kindkit/kindkit"
)

// Kind returns the kind called name from the catalog that all returns
// (a generated kinds.All, or a function that joins catalogs), wired to
// its rules as a server sees it.
func Kind(t testing.TB, all func() (*kindkit.Catalog, error), name string) kindkit.Kind {
	t.Helper()
	cat, err := all()
	if err != nil {
		t.Fatal(err)
	}
	k, ok := cat.Kind(name)
	if !ok {
		t.Fatalf("catalog has no %q kind", name)
	}
	return k
}

// Validate runs k.Validate(spec, values) and checks the properties every
// kind keeps. It returns the canonical values, or nil and the errors. spec
// may be nil: the format-only mode of Validate.
func Validate(t testing.TB, k kindkit.Kind, spec *kindkit.Spec, values []byte) (json.RawMessage, []kindkit.FieldError) {
	t.Helper()
	out, errs := k.Validate(spec, values)
	if len(errs) > 0 {
		if out != nil {
			t.Errorf("Validate returned values %s and errors %v", out, errs)
		}
		for _, e := range errs {
			if e.Field == "" || e.Message == "" {
				t.Errorf("incomplete field error %+v", e)
			}
		}
		return nil, errs
	}
	if !json.Valid(out) {
		t.Fatalf("Validate returned invalid JSON %q", out)
	}
	return out, nil
}

// Accept validates values against spec and fails t unless they are
// accepted; it checks that the canonical values check again to themselves
// and returns them decoded into V, the kind's Values type.
func Accept[V any](t testing.TB, k kindkit.Kind, spec *kindkit.Spec, values string) *V {
	t.Helper()
	out, errs := Validate(t, k, spec, []byte(values))
	if len(errs) > 0 {
		t.Fatalf("values %s refused: %v", values, errs)
	}
	Idempotent(t, k, spec, out)
	v := new(V)
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("canonical values %s do not decode into %T: %v", out, v, err)
	}
	return v
}

// Idempotent checks that canonical values check again to themselves.
func Idempotent(t testing.TB, k kindkit.Kind, spec *kindkit.Spec, canonical json.RawMessage) {
	t.Helper()
	again, errs := k.Validate(spec, canonical)
	if len(errs) > 0 {
		t.Fatalf("canonical %s does not check again: %v", canonical, errs)
	}
	if !bytes.Equal(again, canonical) {
		t.Errorf("canonical values change when checked again: %s, then %s", canonical, again)
	}
}

// Raise raises args on k and returns the canonical spec and the reason (for
// k.Fallback); a refused raise fails the test.
func Raise(t testing.TB, k kindkit.Kind, args string) kindkit.Raise {
	t.Helper()
	r, err := k.ParseRaise([]byte(args))
	if err != nil {
		t.Fatalf("ParseRaise(%s): %v", args, err)
	}
	return r
}

// Spec raises args on k and returns the canonical spec, as Validate,
// Accept and Idempotent take it; a refused raise fails the test.
func Spec(t testing.TB, k kindkit.Kind, args string) *kindkit.Spec {
	t.Helper()
	r := Raise(t, k, args)
	return &r.Spec
}

// Specs raises each of args on k and returns the specs, nil for "" (the
// format-only mode of Validate), for a fuzz test to pick from.
func Specs(t testing.TB, k kindkit.Kind, args ...string) []*kindkit.Spec {
	t.Helper()
	specs := make([]*kindkit.Spec, len(args))
	for i, a := range args {
		if a != "" {
			specs[i] = Spec(t, k, a)
		}
	}
	return specs
}
