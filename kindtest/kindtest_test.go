package kindtest_test

import (
	"testing"

	"github.com/kindkit/kindkit/gen/ratinggen"
	"github.com/kindkit/kindkit/kinds"
	"github.com/kindkit/kindkit/kindtest"
)

// The helpers fit one another: Spec returns what Validate and Accept take,
// and Accept returns the kind's own Values type, canonical.
func TestHelpersFit(t *testing.T) {
	k := kindtest.Kind(t, kinds.All, ratinggen.Name)
	spec := kindtest.Spec(t, k, `{"question":"Q","scale":{"min":1,"max":5},"allowComment":true}`)
	v := kindtest.Accept[ratinggen.Values](t, k, spec, `{"score":4,"comment":"  clear  "}`)
	if v.Score != 4 || v.Comment == nil || *v.Comment != "clear" {
		t.Errorf("Accept = %+v", v)
	}
	if _, errs := kindtest.Validate(t, k, spec, []byte(`{"score":9}`)); len(errs) != 1 || errs[0].Field != "score" {
		t.Errorf("a score off the scale: %v", errs)
	}
	if specs := kindtest.Specs(t, k, "", `{"question":"Q","scale":{"min":0,"max":3}}`); specs[0] != nil || specs[1] == nil {
		t.Errorf("Specs = %v", specs)
	}
}
