package mcp

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzInputRequests: whatever a server sends as a tool call's result, the
// memo kindkit makes of it (or its refusal) never panics; its requests are
// in the order of their ids, each elicitation's params read back, and the
// memo reads back as it was written.
func FuzzInputRequests(f *testing.F) {
	for _, seed := range []string{
		`{"resultType":"input_required","inputRequests":{"name":{"method":"elicitation/create","params":{"mode":"form","message":"Who?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}},"code":{"method":"elicitation/create","params":{"message":"Code?"}}},"requestState":"s1"}`,
		`{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list","params":{}}}}`,
		`{"resultType":"input_required","inputRequests":{},"requestState":"later"}`,
		`{"resultType":"input_required","inputRequests":{"u":{"method":"elicitation/create","params":{"mode":"url","message":"Sign in","url":"https://example.com/x","elicitationId":"e1"}}}}`,
		`{"resultType":"input_required","inputRequests":{"s":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}}}`,
		`{"content":[{"type":"text","text":"done"}]}`,
	} {
		f.Add([]byte(seed), 0)
	}
	f.Fuzz(func(t *testing.T, data []byte, rounds int) {
		var res sdk.CallToolResult
		if json.Unmarshal(data, &res) != nil {
			return
		}
		m := &memo{V: memoVersion, Rounds: rounds % (maxRounds + 2)}
		if err := m.next(&res, &CardKind{Name: "elicitation", URLSpec: func(string, string, string, string) json.RawMessage { return nil }}); err != nil {
			return
		}
		if !slices.IsSortedFunc(m.Requests, func(a, b request) int { return strings.Compare(a.ID, b.ID) }) {
			t.Fatalf("requests not in the order of their ids: %+v", m.Requests)
		}
		for _, r := range m.Requests {
			if r.Method == methodElicit {
				var p sdk.ElicitParams
				if err := json.Unmarshal(r.Params, &p); err != nil {
					t.Fatalf("elicitation %s does not read back: %v", r.ID, err)
				}
				requestedSchema(p.RequestedSchema)
			}
		}
		raw, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		back, err := memoOf(raw)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(m, back); d != "" {
			t.Fatalf("the memo reads back changed (-wrote +read):\n%s", d)
		}
	})
}
