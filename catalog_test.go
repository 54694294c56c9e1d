package kindkit_test

import (
	"strings"
	"testing"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/gen/choicesgen"
	"github.com/kindkit/kindkit/gen/ratinggen"
)

// Several sources make one catalog: kindkit's kinds beside a module's own,
// or only some of them. A name or raise tool that two sources define is an
// error that names both.
func TestJoinCatalogs(t *testing.T) {
	choices, err := choicesgen.New(choicesgen.Unimplemented{})
	if err != nil {
		t.Fatal(err)
	}
	rating, err := ratinggen.New(ratinggen.Unimplemented{})
	if err != nil {
		t.Fatal(err)
	}
	builtin, err := kindkit.NewCatalog(choices, rating)
	if err != nil {
		t.Fatal(err)
	}
	mine, err := kindkit.NewCatalog(rating)
	if err != nil {
		t.Fatal(err)
	}
	only, err := builtin.Only("choices")
	if err != nil {
		t.Fatal(err)
	}
	joined, err := kindkit.Join(only.Named("kindkit"), mine.Named("example.com/acme"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range joined.Kinds() {
		names = append(names, k.Descriptor().Name)
	}
	if strings.Join(names, ",") != "choices,rating" {
		t.Errorf("joined kinds %v, want choices then rating", names)
	}
	if _, ok := joined.ByTool("request_rating"); !ok {
		t.Error("the joined catalog does not find the second source's raise tool")
	}
	_, err = kindkit.Join(builtin.Named("kindkit"), mine.Named("example.com/acme"))
	if err == nil || !strings.Contains(err.Error(), `"rating" in kindkit and one in example.com/acme`) {
		t.Errorf("a clash: %v, want an error naming both sources", err)
	}
	if _, err := builtin.Only("choices", "poll"); err == nil || !strings.Contains(err.Error(), `"poll"`) {
		t.Errorf("Only of an unknown kind: %v", err)
	}
	if _, err := kindkit.NewCatalog(rating, rating); err == nil || !strings.Contains(err.Error(), `two kinds named "rating"`) {
		t.Errorf("one source's clash: %v", err)
	}
}
