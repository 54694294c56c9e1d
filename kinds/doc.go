// Package kinds holds the hand-written rules of each interaction kind, one
// package per kind (kinds/choices, kinds/identityintake, kinds/rating), and
// the generated catalog: All returns every kind of spec/interactions wired
// to its rules.
package kinds

//go:generate go tool kindgen -root ..
