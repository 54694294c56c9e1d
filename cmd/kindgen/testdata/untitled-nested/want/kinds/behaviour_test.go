package kinds_test

import (
	"testing"

	"github.com/kindkit/kindkit/cmd/kindgen/testdata/untitled-nested/want/gen/feedbackformgen"
	"github.com/kindkit/kindkit/cmd/kindgen/testdata/untitled-nested/want/kinds"
)

// Nested types without titles get names a person would write, and they
// decode what the kind accepts.
func TestFeedbackForm(t *testing.T) {
	catalog, err := kinds.All()
	if err != nil {
		t.Fatal(err)
	}
	k, ok := catalog.Kind("feedback_form")
	if !ok || k.Descriptor().ToolName != "ask_feedback" {
		t.Fatalf("feedback_form: %v %+v", ok, k)
	}
	raise, err := k.ParseRaise([]byte(`{"topics":[{"name":"speed","scales":[{"min":1,"max":5}]}],"reason":"r"}`))
	if err != nil {
		t.Fatal(err)
	}
	var _ feedbackformgen.Spec
	var _ = feedbackformgen.Topic{Scales: []feedbackformgen.Scale{{}}}
	values, errs := k.Validate(&raise.Spec, []byte(`{"entries":[{"topic":"speed","mood":"happy"}]}`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if string(values) != `{"entries":[{"topic":"speed","mood":"happy"}]}` { // the schema's order
		t.Errorf("values = %s", values)
	}
	if _, errs := k.Validate(&raise.Spec, []byte(`{"entries":[{"topic":"speed","mood":"meh"}]}`)); len(errs) != 1 {
		t.Errorf("an unknown mood: %v", errs)
	}
}
