// Package scenario reads and runs protocol conformance scenarios: the JSON
// files of the smooth-operator scenario corpus (../shared/reference/scenarios)
// and kindkit's own (spec/conformance/scenarios), in the format of
// PROTOCOL.md §7.
//
// A scenario describes the server it needs (tools, write-confirmation gates,
// knowledge, a scripted mock model) and a list of steps. Each step sends one
// client frame over a single WebSocket and matches the events that follow,
// strictly in order, against its expect list. Booting the server from
// Scenario.Server and Scenario.MockLLMScript is the caller's job; this
// package only loads files and drives the socket.
//
//	list, err := scenario.LoadDir("spec/conformance/scenarios")
//	...
//	res := s.Check(ctx, "ws://127.0.0.1:8787/ws", scenario.Lang)
//	if err := res.Failure(); err != nil { ... }
//
// Run reports the raw outcome of one run. Check applies the knownDivergences
// rule on top: a listed language that fails is tolerated, a listed language
// that passes is an error, because the marker has expired.
//
// Load validates what a runner cannot recover from later: an unknown
// mockLlmScript kind, a matcher without a type, an unknown matcher field, a
// malformed dot path, a placeholder that no earlier step captures. Every
// error names the file and the place in it, as in
// "x.json: steps[1].expect[0]: missing type".
package scenario
