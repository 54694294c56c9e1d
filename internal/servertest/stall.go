package servertest

import (
	"context"

	"github.com/kindkit/kindkit/agent"
)

// Stall is a model that writes "Hello, there", signals Said, waits for
// Release to be closed, then finishes with " and goodbye.": a reply
// caught in the middle.
type Stall struct {
	Said    chan struct{} // one value per call, once its first words are out
	Release chan struct{} // close it to let every call finish
}

// NewStall returns a Stall ready for one waiting call.
func NewStall() *Stall {
	return &Stall{Said: make(chan struct{}, 1), Release: make(chan struct{})}
}

func (m *Stall) Respond(ctx context.Context, req agent.ModelRequest, onText func(string)) (agent.ModelResponse, error) {
	onText("Hello, ")
	onText("there")
	m.Said <- struct{}{}
	select {
	case <-m.Release:
	case <-ctx.Done():
		return agent.ModelResponse{}, ctx.Err()
	}
	onText(" and goodbye.")
	return agent.ModelResponse{Text: "Hello, there and goodbye.", Position: req.Position + 1}, nil
}
