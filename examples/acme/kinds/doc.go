// Package kinds holds the rules of this module's interaction kinds, one
// package per kind (kinds/<name>), and the catalog kindgen generates:
// All returns every kind of spec/interactions wired to its rules.
package kinds

// go generate ./... runs kindgen, which go.mod names in a tool directive.
//go:generate go tool kindgen -root ..
