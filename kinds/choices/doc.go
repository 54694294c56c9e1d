// Package choices holds the hand-written rules of the choices kind: the
// multiple-choice card of spec/interactions/choices.schema.json.
//
// The schema says what a question, an option and an answer look like. Rules
// adds what it cannot: the option shorthand and trimming of a raise, unique
// headers, picks that must be offered labels, single-select taking one pick,
// the canonical answers in spec order, and the directive the model follows
// when the channel cannot show chips.
//
// Wire the rules to the generated kind with choicesgen.New(choices.Rules{});
// kinds.All does that for every kind.
package choices
