package poll_test

import (
	"testing"

	"github.com/kindkit/kindkit/kindtest"

	"example.com/acme/gen/pollgen"
	"example.com/acme/kinds"
)

// TestRules checks what the poll's rules add to its schema: a label picks
// its option's id, a pick must be an option, option ids are unique.
func TestRules(t *testing.T) {
	k := kindtest.Kind(t, kinds.All, pollgen.Name)
	spec := kindtest.Spec(t, k, `{"question":"Lunch?","options":[{"id":"p","label":"Pizza"},{"id":"s","label":"Soup"}],"reason":"to order"}`)
	if v := kindtest.Accept[pollgen.Values](t, k, spec, `{"choice":"soup"}`); v.Choice != "s" {
		t.Errorf("the label soup picked %q, want s", v.Choice)
	}
	if _, errs := kindtest.Validate(t, k, spec, []byte(`{"choice":"Salad"}`)); len(errs) != 1 || errs[0].Field != "choice" {
		t.Errorf("a pick that is no option: %v", errs)
	}
	if _, err := k.ParseRaise([]byte(`{"question":"Lunch?","options":[{"id":"p","label":"Pizza"},{"id":"p","label":"Pasta"}],"reason":"r"}`)); err == nil {
		t.Error("a poll whose option ids repeat was raised")
	}
}
