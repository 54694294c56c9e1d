package choices_test

import (
	"testing"

	"github.com/kindkit/kindkit/kindtest"
)

// fuzzSpecs are the specs FuzzValidate picks from by its spec argument; the
// empty one is format-only mode.
var fuzzSpecs = []string{
	"",
	planTopics,
	`{"questions":[{"question":"Colour?","header":"Colour","options":["Red","Green","Blue","Red"],"multiSelect":true}]}`,
}

// FuzzValidate checks that any values give either canonical JSON that checks
// to itself again, or at least one complete field error.
func FuzzValidate(f *testing.F) {
	for _, seed := range []struct {
		values string
		spec   uint8
	}{
		{`{"answers":[{"header":"Plan","options":["Pro"]},{"header":"Topics","options":["Sales","Billing"],"other":"Partnerships"}]}`, 1},
		{`{"answers":[{"header":" Plan ","options":[" Basic ",""],"other":"  "},{"header":"Topics","other":"x"}]}`, 1},
		{`{"answers":[{"header":"Plan","options":["Gold","Pro"]}]}`, 1},
		{`{"answers":[{"header":"Colour","options":["Red","Red"]}]}`, 2},
		{`{"answers":[{"header":"Any","options":["x"]},{"header":"","other":"y"}]}`, 0},
		{`{"answers":[{"header":"Any"}]}`, 0},
		{`{"answers":"x"}`, 1},
		{`null`, 0},
		{`{}`, 1},
		{`[`, 0},
	} {
		f.Add([]byte(seed.values), seed.spec)
	}
	k := newKind(f)
	specs := kindtest.Specs(f, k, fuzzSpecs...)
	f.Fuzz(func(t *testing.T, values []byte, spec uint8) {
		s := specs[int(spec)%len(specs)]
		if out, errs := kindtest.Validate(t, k, s, values); errs == nil {
			kindtest.Idempotent(t, k, s, out)
		}
	})
}
