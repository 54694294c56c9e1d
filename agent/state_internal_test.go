package agent

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kindkit/kindkit/store"
)

// The engine's state goes to the store as a versioned value it alone
// reads: its own versions and the unversioned states written before
// versions are read; another version, or what is no state, is refused
// rather than misread. A state with a host tool's memo is version 2, so an
// engine of version 1, which would drop the memo, refuses it.
func TestTurnStateVersions(t *testing.T) {
	s := turnState{RequestID: "T", Text: "so far", Pending: []store.ToolCall{{ID: "c1", Name: "book"}}, Asked: map[string][]string{"c1": {`{"status":"submitted"}`}}}
	encoded := s.encode()
	var fields map[string]any
	if err := json.Unmarshal(encoded, &fields); err != nil || fields["v"] != float64(stateVersion) {
		t.Fatalf("encoded state %s: want its version %d", encoded, stateVersion)
	}
	for _, tc := range []struct {
		name string
		turn string
		want *turnState // nil: refused
	}{
		{"this version", string(encoded), &turnState{Version: stateVersion, RequestID: "T", Text: "so far",
			Pending: s.Pending, Asked: s.Asked}},
		{"written before versions", `{"requestId":"T","text":"so far","stashed":{"choices":"{}"}}`,
			&turnState{RequestID: "T", Text: "so far", Stashed: map[string]string{"choices": "{}"}}},
		{"with a memo", string(turnState{RequestID: "T", Memos: map[string]json.RawMessage{"c1": json.RawMessage(`{"round":1}`)}}.encode()),
			&turnState{Version: memoVersion, RequestID: "T", Memos: map[string]json.RawMessage{"c1": json.RawMessage(`{"round":1}`)}}},
		{"none", ``, &turnState{}},
		{"a later version", `{"v":3,"requestId":"T"}`, nil},
		{"not a state", `["requestId"]`, nil},
		{"not JSON", `{"requestId":`, nil},
	} {
		got, err := stateOf(&store.Park{ID: "p", Turn: json.RawMessage(tc.turn)})
		switch {
		case tc.want == nil && err == nil:
			t.Errorf("%s: read as %+v, want it refused", tc.name, got)
		case tc.want != nil && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != nil:
			if d := cmp.Diff(*tc.want, got); d != "" {
				t.Errorf("%s (-want +got):\n%s", tc.name, d)
			}
		}
	}
}
