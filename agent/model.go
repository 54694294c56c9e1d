package agent

import (
	"context"
	"encoding/json"

	"github.com/kindkit/kindkit/knowledge"
	"github.com/kindkit/kindkit/store"
)

// Model is the agent's language model: one call streams text through onText
// and returns the whole response.
//
// An adapter over a provider's API (agent/openai, agent/anthropic) returns
// every tool call of a response, in order, and sends the history back as
// the provider's messages: each tool result with the call it answers,
// paired by the call's id, its text as it is, and a result with IsError
// carrying the provider's error flag where its format has one. A format
// without one (OpenAI's chat completions) shows the model the text alone,
// so the engine words an error result to read as one. agent/modeltest is
// the contract suite that checks an adapter against a fake of its
// provider.
type Model interface {
	Respond(ctx context.Context, req ModelRequest, onText func(string)) (ModelResponse, error)
}

// ModelRequest is one model call of a turn.
type ModelRequest struct {
	ConversationID string
	// Position is the model's own position in a stateful source, kept with
	// the conversation (the scripted model's index in its script).
	Position int
	History  []*store.Message // oldest first: user, assistant and tool messages
	// Tools are what the model may call; their Parameters are shared
	// between calls, and a model must not change them.
	Tools []Tool
	// Knowledge is what Config.Knowledge found for the turn's user
	// message, best first; the model should ground its answer in it.
	Knowledge []knowledge.Doc
}

// ModelResponse is the complete answer of one model call.
type ModelResponse struct {
	Text      string
	ToolCalls []store.ToolCall
	Usage     store.Usage
	Position  int // the position after this call
}

// Tool is a tool offered to the model.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage // a JSON Schema object
}
