package kindkit

import (
	"context"
	"encoding/json"
	"fmt"
)

// Answered says where an accepted answer came from.
type Answered struct {
	ConversationID string
	SessionID      string
}

// A Hook is what the host does with every accepted answer of one kind,
// whichever path it came by: the card, or the conversation and the
// submit_interaction tool. Generated code makes them typed
// (<kind>gen.OnAnswer); the engine runs them.
type Hook struct {
	Kind string
	Run  func(ctx context.Context, a Answered, values json.RawMessage) error
}

// NewHook returns a Hook of kind that hands fn the canonical values
// decoded into V.
func NewHook[V any](kind string, fn func(ctx context.Context, a Answered, values *V) error) Hook {
	return Hook{Kind: kind, Run: func(ctx context.Context, a Answered, raw json.RawMessage) error {
		var v V
		if err := json.Unmarshal(raw, &v); err != nil {
			return fmt.Errorf("kindkit: %s hook: decode values: %w", kind, err)
		}
		return fn(ctx, a, &v)
	}}
}
