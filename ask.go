package kindkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

var (
	// ErrDeclined is what Ask returns when the person declined to answer.
	ErrDeclined = errors.New("kindkit: the person declined to answer")
	// ErrNoResponse is what Ask returns when nobody answered in time.
	ErrNoResponse = errors.New("kindkit: nobody answered in time")
	// ErrParked is what Ask returns when the question is now waiting for a
	// person: the tool should return it (wrapped or not). The turn parks;
	// when the answer comes, the tool runs again from its start and this
	// Ask returns the answer. The engine parks the turn even when a tool
	// swallows the error, and throws that call's result away.
	ErrParked = errors.New("kindkit: waiting for a person's answer")
)

// An Asker asks a person a kind's question on behalf of host code; the
// engine puts one in a host tool's context. It returns the canonical
// values of an accepted answer, or ErrDeclined, ErrNoResponse or
// ErrParked.
type Asker interface {
	Ask(ctx context.Context, kind string, spec json.RawMessage, reason string, opts AskOptions) (json.RawMessage, error)
}

type askerKey struct{}

// WithAsker returns ctx carrying a.
func WithAsker(ctx context.Context, a Asker) context.Context {
	return context.WithValue(ctx, askerKey{}, a)
}

// Ask asks the person the question spec of kind, for reason, through the
// Asker in ctx, and returns the answer's values typed. Generated code
// wraps it as <kind>gen.Ask. WithDeadline gives it a deadline policy of
// its own.
//
// An Ask parks its turn and holds no goroutine: it returns ErrParked, and
// when the answer comes the tool runs again from its start, every earlier
// Ask returning its stored answer in order. Code before an Ask may
// therefore run more than once; keep it free of effects, or make them
// idempotent.
func Ask[S, V any](ctx context.Context, kind string, spec *S, reason string, opts ...AskOption) (*V, error) {
	var o AskOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.Deadline != nil {
		if err := o.Deadline.Check(); err != nil {
			return nil, fmt.Errorf("kindkit: ask %s: %w", kind, err)
		}
	}
	a, ok := ctx.Value(askerKey{}).(Asker)
	if !ok {
		return nil, fmt.Errorf("kindkit: ask %s: no asker in the context (Ask works inside a host tool)", kind)
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("kindkit: ask %s: %w", kind, err)
	}
	values, err := a.Ask(ctx, kind, raw, reason, o)
	if err != nil {
		return nil, err
	}
	var v V
	if err := json.Unmarshal(values, &v); err != nil {
		return nil, fmt.Errorf("kindkit: ask %s: decode the answer: %w", kind, err)
	}
	return &v, nil
}
