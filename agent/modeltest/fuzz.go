package modeltest

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/kindkit/kindkit/store"
)

// FuzzStream feeds h's adapter arbitrary bytes as the body of a 200 stream,
// seeded with the provider's frames of whole and broken answers. Every
// call must end, with an error that names the provider or with a whole
// response: its text what reached onText, each tool call named, with JSON
// arguments. A panic fails.
//
//	func FuzzStream(f *testing.F) { modeltest.FuzzStream(f, harness) }
func FuzzStream(f *testing.F, h Harness) {
	args := `{"order":"A-1"}`
	for _, r := range []Reply{
		{Text: []string{"Hel", "lo"}, Usage: store.Usage{PromptTokens: 3, CompletionTokens: 2}},
		{Text: []string{"Let me check."}, Calls: []Call{{ID: "call_a", Name: "lookup", Args: []string{args[:5], args[5:]}}, {ID: "call_b", Name: "list"}}},
		{Text: []string{"Hel"}, End: Truncated},
		{Text: []string{"Hel"}, End: Malformed},
		{Text: []string{"Hel"}, End: ErrorEvent, Error: "Overloaded"},
	} {
		f.Add([]byte(strings.Join(h.Frames(r), "")))
	}
	var (
		mu   sync.Mutex
		body []byte
	)
	s := NewServer(f, h.Path, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		b := body
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.Write(b)
	})
	m := h.New(f, s.URL, Config{Model: modelName, MaxRetries: -1, HTTPClient: Client(f), Logger: quiet})
	f.Fuzz(func(t *testing.T, stream []byte) {
		mu.Lock()
		body = stream
		mu.Unlock()
		var text strings.Builder
		resp, err := m.Respond(t.Context(), UserRequest("hi"), func(s string) { text.WriteString(s) })
		if err != nil {
			if !strings.HasPrefix(err.Error(), h.Provider+": ") {
				t.Errorf("error %q does not name the provider", err)
			}
			return
		}
		if resp.Text != text.String() {
			t.Errorf("response text %q, but onText got %q", resp.Text, text.String())
		}
		for _, c := range resp.ToolCalls {
			if c.Name == "" || !json.Valid([]byte(c.Arguments)) {
				t.Errorf("tool call %+v: want a name and JSON arguments", c)
			}
		}
	})
}
