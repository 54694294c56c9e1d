package kinds_test

import (
	"encoding/json"
	"testing"

	"github.com/kindkit/kindkit/gen/choicesgen"
	"github.com/kindkit/kindkit/kinds"
)

// BenchmarkValidateChoices measures what a submit costs: schema validation,
// decoding, the choices rules and the canonical encoding, on the reference
// fixture's values. BenchmarkValidateChoicesBaseline is the floor it is
// compared with: a plain json.Unmarshal of the same bytes into the generated
// struct, with no checks at all.
func BenchmarkValidateChoices(b *testing.B) {
	catalog, err := kinds.All()
	if err != nil {
		b.Fatal(err)
	}
	k, _ := catalog.Kind(choicesgen.Name)
	fx := readFixtures(b)
	spec, err := k.LoadSpec(fx["choices_spec"].Instance)
	if err != nil {
		b.Fatal(err)
	}
	values := []byte(fx["choices_values"].Instance)
	b.ReportAllocs()
	for b.Loop() {
		if _, errs := k.Validate(&spec, values); errs != nil {
			b.Fatal(errs)
		}
	}
}

func BenchmarkValidateChoicesBaseline(b *testing.B) {
	values := []byte(readFixtures(b)["choices_values"].Instance)
	b.ReportAllocs()
	for b.Loop() {
		var v choicesgen.Values
		if err := json.Unmarshal(values, &v); err != nil {
			b.Fatal(err)
		}
	}
}
