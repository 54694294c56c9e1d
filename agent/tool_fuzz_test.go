package agent

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

type fuzzArgs struct {
	Slot  string            `json:"slot"`
	Seats int               `json:"seats,omitempty"`
	Tags  []string          `json:"tags,omitempty"`
	Extra map[string]string `json:"extra,omitempty"`
	When  *struct {
		Day string `json:"day"`
	} `json:"when,omitempty"`
}

// FuzzToolArgs: whatever a model sends, the typed decoding of a host
// tool's arguments never panics, accepts only what its schema and
// encoding/json both accept, and decodes it as encoding/json does.
func FuzzToolArgs(f *testing.F) {
	for _, seed := range []string{``, `{}`, `{"slot":"a"}`, `{"slot":"a","seats":2,"tags":["x"],"extra":{"k":"v"},"when":{"day":"Tue"}}`,
		`{"slot":1}`, `{"slot":"a","seats":1.5}`, `{"slot":"a","nope":1}`, `[]`, `null`, `{"slot":"a","when":{}}`, `{"slot":"\u0000"}`, `{"slot":"a","seats":1e400}`} {
		f.Add([]byte(seed))
	}
	schema, err := jsonschema.For[fuzzArgs](nil)
	if err != nil {
		f.Fatal(err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := decodeArgs[fuzzArgs](resolved, raw)
		if err != nil {
			return
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			raw = []byte("{}")
		}
		var want fuzzArgs
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatalf("accepted %q, which encoding/json rejects: %v", raw, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decoded %q as %+v, encoding/json as %+v", raw, got, want)
		}
	})
}
