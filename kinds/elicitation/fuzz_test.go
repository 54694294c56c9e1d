package elicitation_test

import (
	"encoding/json"
	"testing"

	"github.com/kindkit/kindkit/kindtest"
)

// FuzzRequested raises an arbitrary requested schema and, when it is one
// MCP allows, validates arbitrary values against it: a raise either fails
// with field errors or gives a spec whose answers check to themselves
// again or fail with complete field errors. Nothing panics.
func FuzzRequested(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"type":"string","format":"email"}},"required":["a"]}`, []byte(`{"a":"x@y.z"}`))
	f.Add(`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":5}}}`, []byte(`{"n":6}`))
	f.Add(`{"type":"object","properties":{"m":{"type":"array","items":{"anyOf":[{"const":"a","title":"A"}]}}}}`, []byte(`{"m":["a","a"]}`))
	f.Add(`{"type":"object","properties":{"s":{"type":"string","oneOf":[{"const":"x","title":"X"}]}}}`, []byte(`null`))
	f.Add(`{"type":"object","properties":{"a":{"type":"object"}}}`, []byte(`{}`))
	f.Add(`[`, []byte(`{`))
	k := newKind(f)
	f.Fuzz(func(t *testing.T, schema string, values []byte) {
		var requested any
		if json.Unmarshal([]byte(schema), &requested) != nil {
			return
		}
		args, _ := json.Marshal(map[string]any{"server": "s", "message": "m", "requestedSchema": requested})
		r, err := k.ParseRaise(args)
		if err != nil {
			return
		}
		if out, errs := kindtest.Validate(t, k, &r.Spec, values); len(errs) == 0 {
			kindtest.Idempotent(t, k, &r.Spec, out)
		}
	})
}
