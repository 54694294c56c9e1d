package choices_test

import (
	"encoding/json"
	"testing"
)

// The demo card's raise and an answer to it: what a cycle of kindload's
// load pays for in the kind.
var (
	benchRaise = []byte(`{"questions":[{"question":"Which plan are you curious about?","header":"Plan","options":[{"label":"Starter","description":"For one person"},` +
		`{"label":"Team","description":"Up to 20 seats"},{"label":"Enterprise"}]},` +
		`{"question":"What should the answer cover?","header":"Topics","options":[{"label":"Pricing"},{"label":"Security"},{"label":"Integrations"}],"multiSelect":true}],` +
		`"reason":"to tailor the answer to you"}`)
	benchValues = json.RawMessage(`{"answers":[{"header":"Plan","options":["Team"]},{"header":"Topics","options":["Pricing","Security"]}]}`)
)

// BenchmarkParseRaise is the raise of a card.
func BenchmarkParseRaise(b *testing.B) {
	k := newKind(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := k.ParseRaise(benchRaise); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSubmit is a submit: the stored spec loaded, the values checked.
func BenchmarkSubmit(b *testing.B) {
	k := newKind(b)
	r, err := k.ParseRaise(benchRaise)
	if err != nil {
		b.Fatal(err)
	}
	stored := r.Spec.JSON
	b.ReportAllocs()
	for b.Loop() {
		spec, err := k.LoadSpec(stored)
		if err != nil {
			b.Fatal(err)
		}
		if _, errs := k.Validate(&spec, benchValues); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}
