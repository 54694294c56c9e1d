// Package rating holds the rules of the rating interaction kind: what its
// schema (spec/interactions/rating.schema.json) cannot say.
package rating

import (
	"fmt"
	"strings"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/gen/ratinggen"
)

// Rules trims the spec and the comment, checks the scale's bounds against
// each other and the score against the scale, and writes the
// conversational fallback.
type Rules struct {
	ratinggen.Unimplemented
}

var _ ratinggen.Rules = Rules{}

// NormalizeRaise trims the texts the model wrote and drops blank labels.
func (Rules) NormalizeRaise(args map[string]any) {
	if q, ok := args["question"].(string); ok {
		args["question"] = strings.TrimSpace(q)
	}
	scale, ok := args["scale"].(map[string]any)
	if !ok {
		return
	}
	for _, key := range []string{"minLabel", "maxLabel"} {
		if s, ok := scale[key].(string); ok {
			if s = strings.TrimSpace(s); s == "" {
				delete(scale, key)
			} else {
				scale[key] = s
			}
		}
	}
}

// CheckSpec wants a scale that goes up.
func (Rules) CheckSpec(spec *ratinggen.Spec) []kindkit.FieldError {
	if spec.Scale.Min >= spec.Scale.Max {
		return []kindkit.FieldError{{Field: "scale", Message: fmt.Sprintf("min (%d) must be less than max (%d)", spec.Scale.Min, spec.Scale.Max)}}
	}
	return nil
}

// Validate keeps the score on the scale and the comment only when it says
// something. Without the spec (a conversational submit in a later turn)
// the score can only be checked against the widest scale the schema allows.
func (Rules) Validate(spec *ratinggen.Spec, values *ratinggen.Values) (*ratinggen.Values, []kindkit.FieldError) {
	lo, hi := 0, 10
	if spec != nil {
		lo, hi = spec.Scale.Min, spec.Scale.Max
	}
	var errs []kindkit.FieldError
	if values.Score < lo || values.Score > hi {
		errs = append(errs, kindkit.FieldError{Field: "score", Message: fmt.Sprintf("must be a whole number from %d to %d", lo, hi)})
	}
	out := &ratinggen.Values{Score: values.Score}
	if values.Comment != nil {
		if c := strings.TrimSpace(*values.Comment); c != "" {
			if spec != nil && (spec.AllowComment == nil || !*spec.AllowComment) {
				errs = append(errs, kindkit.FieldError{Field: "comment", Message: "this question takes no comment"})
			}
			out.Comment = &c
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// Fallback tells the model how to ask for the rating in words.
func (Rules) Fallback(spec *ratinggen.Spec, reason string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "This channel cannot show a rating scale, so ask in conversation, %s: %q ", reason, spec.Question)
	fmt.Fprintf(&b, "Ask for a whole number from %d%s to %d%s.", spec.Scale.Min, label(spec.Scale.MinLabel), spec.Scale.Max, label(spec.Scale.MaxLabel))
	if spec.AllowComment != nil && *spec.AllowComment {
		b.WriteString(" Invite a short comment too; it is optional.")
	}
	b.WriteString(` Then call the submit_interaction tool with kind "rating" and values {"score": <number>` +
		commentShape(spec) + `}. It checks the score and tells you what to re-ask. ` +
		`If the visitor would rather not rate, call submit_interaction with declined=true and carry on.`)
	return b.String()
}

func label(l *string) string {
	if l == nil {
		return ""
	}
	return fmt.Sprintf(" (%s)", *l)
}

func commentShape(spec *ratinggen.Spec) string {
	if spec.AllowComment != nil && *spec.AllowComment {
		return `, "comment": "<their words>"`
	}
	return ""
}
