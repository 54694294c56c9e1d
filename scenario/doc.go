// Package scenario reads and runs protocol conformance scenarios: the JSON
// files of the smooth-operator scenario corpus and kindkit's own
// (spec/conformance/scenarios); docs/adding-a-kind.md (section 4) walks
// through one.
//
// A scenario describes the server it needs (tools, write-confirmation gates,
// knowledge, a scripted mock model) and a list of steps. Each step sends one
// client frame over a single WebSocket and matches the events that follow,
// strictly in order, against its expect list.
//
// Test runs a folder of scenario files against any catalog of kinds (a
// module's own, joined with kindkit's built-in ones or not) and the
// module's host tools, each against a fresh server of its own made from the
// scenario: its scripted model, tools, write-confirmation gates and
// knowledge:
//
//	func TestScenarios(t *testing.T) {
//		catalog, err := kinds.All()
//		if err != nil {
//			t.Fatal(err)
//		}
//		scenario.Test(t, scenario.Setup{Catalog: catalog}, "testdata/scenarios")
//	}
//
// Serve runs one scenario that way; Check and Run drive the socket of a
// server the caller started:
//
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
