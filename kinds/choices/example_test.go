package choices_test

import (
	"encoding/json"
	"fmt"

	"github.com/kindkit/kindkit/gen/choicesgen"
	"github.com/kindkit/kindkit/kinds/choices"
)

// A raise is read into its canonical spec; answers are checked against it
// and come back normalised, in the spec's order.
func Example() {
	k, err := choicesgen.New(choices.Rules{})
	if err != nil {
		panic(err)
	}
	raise, err := k.ParseRaise([]byte(`{
		"questions": [
			{"question": "Which plan?", "header": "Plan",
			 "options": [{"label": "Basic", "description": "For individuals"}, "Pro"]},
			{"question": "Topics?", "header": "Topics",
			 "options": ["Sales", "Support", "Billing"], "multiSelect": true}],
		"reason": "to route you"}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(string(raise.Spec.JSON))

	values, _ := k.Validate(&raise.Spec, []byte(`{"answers": [
		{"header": "Topics", "options": ["Sales", " Billing "], "other": "Partnerships"},
		{"header": "Plan", "options": ["Pro"], "other": "  "}]}`))
	fmt.Println(string(values))

	_, errs := k.Validate(&raise.Spec, []byte(`{"answers": [{"header": "Plan", "options": ["Gold", "Pro"]}]}`))
	for _, e := range errs {
		fmt.Printf("%s: %s\n", e.Field, e.Message)
	}
	// Output:
	// {"questions":[{"question":"Which plan?","header":"Plan","options":[{"label":"Basic","description":"For individuals"},{"label":"Pro"}]},{"question":"Topics?","header":"Topics","options":[{"label":"Sales"},{"label":"Support"},{"label":"Billing"}],"multiSelect":true}]}
	// {"answers":[{"header":"Plan","options":["Pro"]},{"header":"Topics","options":["Sales","Billing"],"other":"Partnerships"}]}
	// Plan: 'Gold' is not one of the offered options
	// Plan: this question takes a single answer
	// Topics: this question must be answered
}

// On a channel that cannot show chips, the raise tool's result is a
// directive for the model instead of a park.
func Example_fallback() {
	k, err := choicesgen.New(choices.Rules{})
	if err != nil {
		panic(err)
	}
	raise, err := k.ParseRaise([]byte(`{"questions": [
		{"question": "Which plan?", "header": "Plan", "options": ["Basic", "Pro"]},
		{"question": "Topics?", "header": "Topics", "options": ["Sales", "Billing"], "multiSelect": true}],
		"reason": "to route you"}`))
	if err != nil {
		panic(err)
	}
	var envelope struct {
		Instructions string `json:"instructions"`
		Mode         string `json:"mode"`
	}
	if err := json.Unmarshal([]byte(k.Fallback(raise.Spec, raise.Reason)), &envelope); err != nil {
		panic(err)
	}
	fmt.Println(envelope.Mode)
	fmt.Println(envelope.Instructions)
	// Output:
	// conversational
	// This channel cannot show choice chips, so this is a conversational ask: put the question(s) below to the visitor in your own words, working in why you are asking (to route you), and read out every option.
	// - [Plan] Which plan? Options: Basic, Pro.
	// - [Topics] Topics? Options: Sales, Billing (choose one or more).
	// The visitor may answer in their own words instead of picking an option; take that as a free-text 'other' answer. If they name something that was not offered, ask again with the offered options. If they will not choose, carry on helping them without an answer.
	// When you have the answers, call the submit_interaction tool with kind "choices" and values { answers: [{ header, options:[…], other? }] }: one answer per question, named by the header in brackets, with options holding the exact labels picked and other the visitor's own words. The tool checks the answers and tells you what to re-ask. If the visitor declines, call submit_interaction with kind "choices" and declined=true instead.
}
