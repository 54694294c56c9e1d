package choices

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/gen/choicesgen"
)

// Rules is the choices kind's part that its schema cannot say.
type Rules struct {
	choicesgen.Unimplemented
}

var _ choicesgen.Rules = Rules{}

// Messages of the choices kind, as PROTOCOL §6.2 words them.
const (
	msgEmptyQuestion = "each question needs a non-empty 'question'"
	msgEmptyHeader   = "each question needs a non-empty 'header'"
	msgUnanswered    = "this question must be answered"
	msgNoPick        = "select an option or provide an 'other' answer"
	msgSinglePick    = "this question takes a single answer"
	msgNoAnswers     = "provide an answer for each question, or declined=true"
	// kindkit's own: the reference drops these answers silently.
	msgNotAsked      = "no question has the header '%s'"
	msgNoHeader      = "each answer needs the 'header' of its question"
	msgAnsweredTwice = "this question is answered twice"
)

// NormalizeRaise turns raw raise arguments into the spec's shape: an option
// given as a bare string becomes {"label": …}, texts are trimmed, a blank
// description is dropped and multiSelect is kept only when it is true. A
// value of the wrong type is left for the schema to report.
func (Rules) NormalizeRaise(args map[string]any) {
	questions, ok := args["questions"].([]any)
	if !ok {
		return
	}
	for _, q := range questions {
		question, ok := q.(map[string]any)
		if !ok {
			continue
		}
		trimField(question, "question")
		trimField(question, "header")
		if question["multiSelect"] != true {
			delete(question, "multiSelect")
		}
		options, ok := question["options"].([]any)
		if !ok {
			continue
		}
		for i, o := range options {
			switch option := o.(type) {
			case string:
				options[i] = map[string]any{"label": strings.TrimSpace(option)}
			case map[string]any:
				trimField(option, "label")
				if d, ok := option["description"].(string); ok && strings.TrimSpace(d) == "" {
					delete(option, "description")
				} else {
					trimField(option, "description")
				}
			}
		}
	}
}

// trimField trims obj[key] in place when it is a string with space to
// trim (storing a string in the map allocates).
func trimField(obj map[string]any, key string) {
	if s, ok := obj[key].(string); ok {
		if t := strings.TrimSpace(s); len(t) != len(s) {
			obj[key] = t
		}
	}
}

// CheckSpec reports empty questions, headers and labels, and a header used
// twice, question by question.
func (Rules) CheckSpec(spec *choicesgen.Spec) []kindkit.FieldError {
	var errs []kindkit.FieldError
	add := func(msg string, location ...string) {
		errs = append(errs, kindkit.FieldError{Field: kindkit.Path(location), Message: msg})
	}
	seen := map[string]bool{}
	for i, q := range spec.Questions {
		qi := fmt.Sprint(i)
		if strings.TrimSpace(q.Question) == "" {
			add(msgEmptyQuestion, "questions", qi, "question")
		}
		header := strings.TrimSpace(q.Header)
		switch {
		case header == "":
			add(msgEmptyHeader, "questions", qi, "header")
		case seen[header]:
			add(fmt.Sprintf("duplicate question header '%s'", header), "questions", qi, "header")
		}
		seen[header] = true
		for j, o := range q.Options {
			if strings.TrimSpace(o.Label) == "" {
				add(fmt.Sprintf("an option in '%s' has an empty label", header), "questions", qi, "options", fmt.Sprint(j), "label")
			}
		}
	}
	return errs
}

// NormalizeValues reads null, or an object whose answers are missing or
// null, as no answers, so that each question is reported unanswered rather
// than the shape wrong. An answer's null options or other counts as absent.
func (Rules) NormalizeValues(values any) any {
	if values == nil {
		return map[string]any{"answers": []any{}}
	}
	obj, ok := values.(map[string]any)
	if !ok {
		return values
	}
	answers := obj["answers"]
	if answers == nil {
		obj["answers"] = []any{}
		return obj
	}
	list, _ := answers.([]any)
	for _, a := range list {
		if answer, ok := a.(map[string]any); ok {
			for _, key := range []string{"options", "other"} {
				if v, present := answer[key]; present && v == nil {
					delete(answer, key)
				}
			}
		}
	}
	return obj
}

// Validate checks the answers against the spec's questions and returns one
// normalised answer per question, in spec order; an answer to a question
// the spec does not ask, or a second one, is a field error. Without a spec it checks only that every
// answer picks something, and keeps the answers as submitted.
func (Rules) Validate(spec *choicesgen.Spec, values *choicesgen.Values) (*choicesgen.Values, []kindkit.FieldError) {
	answers := make([]choicesgen.Answer, len(values.Answers))
	for i, a := range values.Answers {
		answers[i] = normalizeAnswer(a)
	}
	if spec == nil {
		return validateFormat(answers)
	}
	var errs []kindkit.FieldError
	add := func(header, msg string) {
		errs = append(errs, kindkit.FieldError{Field: header, Message: msg})
	}
	// An answer to a question the card did not ask, or a second answer to
	// one, is a mistake of the client's: said, not dropped (the reference
	// drops them silently).
	asked := map[string]bool{}
	for _, q := range spec.Questions {
		asked[q.Header] = true
	}
	seen := map[string]bool{}
	for _, a := range answers {
		switch {
		case a.Header == "":
			add("answers", msgNoHeader)
		case !asked[a.Header]:
			add(a.Header, fmt.Sprintf(msgNotAsked, a.Header))
		case seen[a.Header]:
			add(a.Header, msgAnsweredTwice)
		}
		seen[a.Header] = true
	}
	out := &choicesgen.Values{Answers: make([]choicesgen.Answer, 0, len(spec.Questions))}
	for _, q := range spec.Questions {
		i := slices.IndexFunc(answers, func(a choicesgen.Answer) bool { return a.Header == q.Header })
		if i < 0 {
			add(q.Header, msgUnanswered)
			continue
		}
		a := answers[i]
		for _, label := range a.Options {
			if !slices.ContainsFunc(q.Options, func(o choicesgen.Option) bool { return o.Label == label }) {
				add(q.Header, fmt.Sprintf("'%s' is not one of the offered options", label))
			}
		}
		switch n := picks(a); {
		case n == 0:
			add(q.Header, msgNoPick)
		case n > 1 && !q.MultiSelect:
			add(q.Header, msgSinglePick)
		}
		out.Answers = append(out.Answers, a)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// validateFormat is Validate without a spec: every answer needs a pick, and
// there must be at least one answer.
func validateFormat(answers []choicesgen.Answer) (*choicesgen.Values, []kindkit.FieldError) {
	if len(answers) == 0 {
		return nil, []kindkit.FieldError{{Field: "answers", Message: msgNoAnswers}}
	}
	var errs []kindkit.FieldError
	for _, a := range answers {
		if picks(a) == 0 {
			field := a.Header
			if field == "" {
				field = "answers"
			}
			errs = append(errs, kindkit.FieldError{Field: field, Message: msgNoPick})
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return &choicesgen.Values{Answers: answers}, nil
}

// normalizeAnswer trims the header, the picked labels and other, dropping
// blank labels and a blank other.
func normalizeAnswer(a choicesgen.Answer) choicesgen.Answer {
	out := choicesgen.Answer{Header: strings.TrimSpace(a.Header)}
	for _, label := range a.Options {
		if label = strings.TrimSpace(label); label != "" {
			out.Options = append(out.Options, label)
		}
	}
	if a.Other != nil {
		if other := strings.TrimSpace(*a.Other); other != "" {
			out.Other = &other
		}
	}
	return out
}

// picks counts an answer's picked labels, plus one for other.
func picks(a choicesgen.Answer) int {
	n := len(a.Options)
	if a.Other != nil {
		n++
	}
	return n
}

// ErrorField names a schema error inside an answer by that answer's header
// when it has one, so the person sees which question is wrong; anything else
// under answers is "answers", and the object itself is "values".
func (Rules) ErrorField(values any, location []string) string {
	if len(location) == 0 {
		return "values"
	}
	if location[0] != "answers" {
		return kindkit.DefaultErrorField(location)
	}
	if len(location) < 2 {
		return "answers"
	}
	i, ok := kindkit.Index(location[1])
	obj, _ := values.(map[string]any)
	list, _ := obj["answers"].([]any)
	if !ok || i >= len(list) {
		return "answers"
	}
	answer, _ := list[i].(map[string]any)
	header, _ := answer["header"].(string)
	if header = strings.TrimSpace(header); header != "" {
		return header
	}
	return "answers"
}

// Fallback tells the model to ask the questions in conversation and submit
// the answers through submit_interaction.
func (Rules) Fallback(spec *choicesgen.Spec, reason string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "This channel cannot show choice chips, so this is a conversational ask: put the question(s) below to the visitor in your own words, working in why you are asking (%s), and read out every option.\n", reason)
	if spec != nil {
		for _, q := range spec.Questions {
			labels := make([]string, len(q.Options))
			for i, o := range q.Options {
				labels[i] = o.Label
			}
			more := ""
			if q.MultiSelect {
				more = " (choose one or more)"
			}
			fmt.Fprintf(&b, "- [%s] %s Options: %s%s.\n", q.Header, q.Question, strings.Join(labels, ", "), more)
		}
	}
	b.WriteString("The visitor may answer in their own words instead of picking an option; take that as a free-text 'other' answer. " +
		"If they name something that was not offered, ask again with the offered options. " +
		"If they will not choose, carry on helping them without an answer.\n")
	b.WriteString(`When you have the answers, call the submit_interaction tool with kind "choices" and values { answers: [{ header, options:[…], other? }] }: ` +
		"one answer per question, named by the header in brackets, with options holding the exact labels picked and other the visitor's own words. " +
		"The tool checks the answers and tells you what to re-ask. " +
		"If the visitor declines, call submit_interaction with kind \"choices\" and declined=true instead.")
	return b.String()
}
