// Package kindtest holds what every kind's tests share, so a new
// kind's fuzz test is a few lines: whatever is submitted, Validate answers
// with canonical values that check again to themselves, or with complete
// field errors and no values.
package kindtest

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/kinds"
)

// Validate runs k.Validate(spec, values) and checks the properties every
// kind keeps. It returns the canonical values, or nil and the errors.
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

// Raise raises args on k; a refused raise fails the test.
func Raise(t testing.TB, k kindkit.Kind, args string) kindkit.Raise {
	t.Helper()
	r, err := k.ParseRaise([]byte(args))
	if err != nil {
		t.Fatalf("ParseRaise(%s): %v", args, err)
	}
	return r
}

// Specs raises each of args on k and returns the specs, nil for "" (the
// format-only mode of Validate), for a fuzz test to pick from.
func Specs(t testing.TB, k kindkit.Kind, args ...string) []*kindkit.Spec {
	t.Helper()
	specs := make([]*kindkit.Spec, len(args))
	for i, a := range args {
		if a != "" {
			r := Raise(t, k, a)
			specs[i] = &r.Spec
		}
	}
	return specs
}

// FromCatalog returns the kind called name from kinds.All, wired to its
// rules as the server sees it.
func FromCatalog(t testing.TB, name string) kindkit.Kind {
	t.Helper()
	cat, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	k, ok := cat.Kind(name)
	if !ok {
		t.Fatalf("catalog has no %q kind", name)
	}
	return k
}
