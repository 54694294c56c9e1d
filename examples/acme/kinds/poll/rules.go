// Package poll holds the rules of the poll interaction kind: what its
// schema (spec/interactions/poll.schema.json) cannot say.
package poll

import (
	"fmt"
	"strings"

	"github.com/kindkit/kindkit"

	"example.com/acme/gen/pollgen"
)

// Rules checks option ids and picks, and words the conversational fallback.
type Rules struct {
	pollgen.Unimplemented
}

var _ pollgen.Rules = Rules{}

// CheckSpec rejects a poll whose option ids repeat.
func (Rules) CheckSpec(spec *pollgen.Spec) []kindkit.FieldError {
	seen := map[string]bool{}
	var errs []kindkit.FieldError
	for i, o := range spec.Options {
		if seen[o.ID] {
			errs = append(errs, kindkit.FieldError{Field: fmt.Sprintf("options[%d].id", i), Message: fmt.Sprintf("duplicate option id '%s'", o.ID)})
		}
		seen[o.ID] = true
	}
	return errs
}

// Validate accepts an option's id, or its label, and answers with the id.
func (Rules) Validate(spec *pollgen.Spec, values *pollgen.Values) (*pollgen.Values, []kindkit.FieldError) {
	choice := strings.TrimSpace(values.Choice)
	if spec == nil {
		if choice == "" {
			return nil, []kindkit.FieldError{{Field: "choice", Message: "pick an option"}}
		}
		return &pollgen.Values{Choice: choice}, nil
	}
	for _, o := range spec.Options {
		if choice == o.ID || strings.EqualFold(choice, o.Label) {
			return &pollgen.Values{Choice: o.ID}, nil
		}
	}
	return nil, []kindkit.FieldError{{Field: "choice", Message: fmt.Sprintf("'%s' is not one of the options", choice)}}
}

// Fallback tells the model how to run the poll in conversation.
func (Rules) Fallback(spec *pollgen.Spec, reason string) string {
	labels := make([]string, len(spec.Options))
	for i, o := range spec.Options {
		labels[i] = fmt.Sprintf("%s (id %s)", o.Label, o.ID)
	}
	return fmt.Sprintf("This channel cannot show the poll, so ask in conversation, %s: %q Options: %s. "+
		"Then call submit_interaction with kind \"poll\" and values {\"choice\": \"<id>\"}; "+
		"if the visitor will not choose, call it with declined=true.", reason, spec.Question, strings.Join(labels, ", "))
}
