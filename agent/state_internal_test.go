package agent

import (
	"encoding/json"
	"testing"
	"time"

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

// The state is written and read as encoding/json writes and reads it: the
// states stored before were written by it, and an engine of an older
// version reads what this one writes.
func TestTurnStateAsEncodingJSON(t *testing.T) {
	at := 2
	s := turnState{Version: memoVersion, RequestID: "T", Text: "<b>so far</b> & \u2028 é", Usage: store.Usage{PromptTokens: 3, CompletionTokens: 4},
		Pending: []store.ToolCall{{ID: "c1", Name: "book", Arguments: `{"a":1}`}}, Stashed: map[string]string{"b": "{}", "a": "{}"},
		Citations: []Citation{{ID: "d", Title: "t", Snippet: "s", Score: 0.5}}, Approved: "c1", Edited: "c1",
		Asked: map[string][]string{"c2": {"x"}, "c1": {`{"status":"submitted"}`}}, Memos: map[string]json.RawMessage{"c1": json.RawMessage(`{"round":1}`)},
		Asking: "c1", AskGroup: "g", AskSince: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), AskAt: &at, Live: "e",
		AskedBy: map[string]store.ToolCall{"z": {ID: "c3"}, "y": {ID: "c4"}}, Trace: "00-ab-cd-01", ParkedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Expiry: &expiry{On: "default", Default: json.RawMessage(`{"x":1}`)}, KindVersion: "2", Addressee: "ann"}
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.encode(); string(got) != string(want) {
		t.Errorf("encode:\n got %s\nwant %s", got, want)
	}
	got, err := stateOf(&store.Park{ID: "p", Turn: want})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(s, got); d != "" {
		t.Errorf("decoded (-want +got):\n%s", d)
	}
}

// BenchmarkTurnState encodes and decodes a turn's state as a cycle's card
// park has it; a cycle encodes the state four times and decodes it once.
func BenchmarkTurnState(b *testing.B) {
	s := turnState{RequestID: "0193a4c2-7d2e-7c41-9a3b-5f0e2d1c8b7a", Text: "Let me ask you a couple of questions first.",
		Usage:       store.Usage{PromptTokens: 120, CompletionTokens: 30},
		AskedBy:     map[string]store.ToolCall{"choices": {ID: "call_1", Name: "ask_choices", Arguments: `{"questions":[]}`}},
		KindVersion: "1", Addressee: ""}
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = s.encode()
		}
	})
	p := &store.Park{ID: "p", Turn: s.encode()}
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := stateOf(p); err != nil {
				b.Fatal(err)
			}
		}
	})
}
