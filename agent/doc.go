// Package agent is the agent side of kindkit: the turn engine, the Model
// interface a turn talks to (agent/openai is the one over OpenAI-compatible
// servers, agent/anthropic the one over Anthropic's Messages API), the
// built-in demo and scripted models, and the host tools:
// typed Go functions (NewTool) that may ask a person through a kind
// (<kind>gen.Ask), and MCP servers' tools (agent/mcp).
//
// Engine runs turns and is the one owner of a park's life. It needs no
// socket: every event of a turn (the person's message, text, tool calls
// and results, a prompt for a person, the reply) goes to the
// conversation's event stream, which any transport reads with Subscribe:
// what the running turn said so far, then live, from this process and,
// on a store that processes share, from the others (the relay, over the
// store's notifier). Each event has a Position, durable and the same in
// every process; a subscriber that passes the last one it saw is told
// every event after it, from the store, then live. server turns the
// stream into WebSocket protocol frames;
// examples/sse is a second transport in a page of code. An answer is stored with the take of its park, before
// the caller acknowledges it; the turn it resumes then runs under a lease
// in the store, every step stored with the turn's state, so a process that
// dies leaves nothing half done: the next one (on PostgreSQL, any other)
// takes the turn over once the lease has run out. A model response with
// tool calls is stored in the write of what its first call does (the park
// a raise makes, or the call's result), and on its own before a host tool
// runs, so the tool's call is on record first.
package agent
