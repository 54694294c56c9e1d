package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// A HostTool is a tool of the host's own: a Go function the model can
// call. Run gets the model's arguments, and its result is the call's
// result; an error it returns, or a panic, is a tool error the model reads,
// and the turn goes on.
//
// A call in a turn that an answer resumed is part of that turn's durable
// work: if the process dies while the tool runs, the process that takes the
// turn over runs the call again. A tool with an effect outside kindkit
// should therefore be idempotent, for example keyed by CallFrom(ctx).CallID.
type HostTool struct {
	Tool
	Run func(ctx context.Context, args json.RawMessage) (Result, error)
}

// A ToolSet is a source of host tools whose list may change, such as an
// MCP server's (agent/mcp).
type ToolSet interface {
	Tools() []HostTool
}

// NewTool makes a host tool of fn, typed by its argument type T. The
// argument schema the model sees is derived from T with
// github.com/google/jsonschema-go (struct fields by their json names;
// fields without omitempty are required; a `jsonschema:"…"` tag is a
// field's description). The model's arguments are validated against it
// before fn runs, then decoded into T. fn's result is sent back as text
// when it is a string, and as JSON otherwise.
func NewTool[T any](name, description string, fn func(ctx context.Context, args T) (any, error)) (HostTool, error) {
	if name == "" || fn == nil {
		return HostTool{}, errors.New("agent: a tool needs a name and a function")
	}
	schema, err := jsonschema.For[T](nil)
	if err != nil {
		return HostTool{}, fmt.Errorf("agent: tool %s: argument schema: %w", name, err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		return HostTool{}, fmt.Errorf("agent: tool %s: argument schema: %w", name, err)
	}
	params, err := json.Marshal(schema)
	if err != nil {
		return HostTool{}, fmt.Errorf("agent: tool %s: argument schema: %w", name, err)
	}
	run := func(ctx context.Context, raw json.RawMessage) (Result, error) {
		args, err := decodeArgs[T](resolved, raw)
		if err != nil {
			return Result{Text: "invalid arguments: " + err.Error(), IsError: true}, nil
		}
		out, err := fn(ctx, args)
		if err != nil {
			return Result{}, err
		}
		return resultOf(out)
	}
	return HostTool{Tool: Tool{Name: name, Description: description, Parameters: params}, Run: run}, nil
}

// decodeArgs validates a call's arguments against the tool's schema, then
// decodes them into T. Empty arguments are the empty object: models send
// "" for a call without arguments.
func decodeArgs[T any](schema *jsonschema.Resolved, raw json.RawMessage) (T, error) {
	var args T
	if len(strings.TrimSpace(string(raw))) == 0 {
		raw = json.RawMessage("{}")
	}
	var instance any
	if err := json.Unmarshal(raw, &instance); err != nil {
		return args, fmt.Errorf("not JSON: %w", err)
	}
	if err := schema.Validate(instance); err != nil {
		return args, err
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return args, err
	}
	return args, nil
}

// resultOf is a tool function's return value as a result.
func resultOf(out any) (Result, error) {
	switch v := out.(type) {
	case string:
		return Result{Text: v}, nil
	case json.RawMessage:
		if !json.Valid(v) {
			return Result{}, errors.New("the tool returned invalid JSON")
		}
		return Result{Text: string(v)}, nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return Result{}, fmt.Errorf("encode the tool's result: %w", err)
	}
	return Result{Text: string(b)}, nil
}

// FixedTool is a host tool that answers every call with result, whatever
// its arguments: the scenario corpus's server.tools fixture.
func FixedTool(t Tool, result string) HostTool {
	return HostTool{Tool: t, Run: func(context.Context, json.RawMessage) (Result, error) { return Result{Text: result}, nil }}
}

// CallInfo is what a host tool's context tells about its call.
type CallInfo struct {
	ConversationID string
	SessionID      string
	// Principal is the conversation's owner: the authenticated principal
	// that created it, "" when it is anonymous.
	Principal string
	CallID    string
	// Asked is how many of the call's Asks were answered in its earlier
	// runs: more than 0 in a run that an answer started again.
	Asked int
}

// An Abandoner is a ToolSet that holds something open for a call of its
// tools while the call's AskLive waits (agent/mcp: the server's call and
// its elicitation). The engine tells it when the call will not run again
// because its park was cancelled or withdrawn, so it can let go at once.
type Abandoner interface {
	Abandon(callID string)
}

type callKey struct{}

// CallFrom returns the call a host tool's context belongs to.
func CallFrom(ctx context.Context) (CallInfo, bool) {
	c, ok := ctx.Value(callKey{}).(CallInfo)
	return c, ok
}

// runHost runs a host tool's call; its error or panic becomes the tool
// error the model reads.
func runHost(ctx context.Context, ht HostTool, info CallInfo, args string) (r Result) {
	defer func() {
		if p := recover(); p != nil {
			r = Result{Text: fmt.Sprintf("tool %s failed: panic: %v", ht.Name, p), IsError: true}
		}
	}()
	r, err := ht.Run(context.WithValue(ctx, callKey{}, info), json.RawMessage(args))
	if err != nil {
		return Result{Text: fmt.Sprintf("tool %s failed: %v", ht.Name, err), IsError: true}
	}
	return r
}
