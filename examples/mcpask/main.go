// Mcpask is kindkit as a library for a Go MCP server: its book_demo tool
// asks the person for a slot as a choices question, through the client's
// MCP elicitation, checked by the choices kind's schema and rules. It
// serves MCP on stdio:
//
//	go run ./examples/mcpask
package main

import (
	"context"
	"errors"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kindkit/kindkit"
	"github.com/kindkit/kindkit/elicit"
	"github.com/kindkit/kindkit/gen/choicesgen"
	"github.com/kindkit/kindkit/kinds"
)

type demoArgs struct {
	Topic string `json:"topic" jsonschema:"what the demo should cover"`
}

// bookDemo asks for a slot and books it. On MCP 2026-07-28 it runs again
// once the person has answered, so everything before Ask is free of effects.
func bookDemo(choices kindkit.Kind) mcp.ToolHandlerFor[demoArgs, any] {
	return func(ctx context.Context, req *mcp.CallToolRequest, args demoArgs) (*mcp.CallToolResult, any, error) {
		slot, ask, err := elicit.Ask[choicesgen.Values](ctx, req, choices, &choicesgen.Spec{Questions: []choicesgen.Question{{
			Question: "When should we show you " + args.Topic + "?", Header: "Slot",
			Options: []choicesgen.Option{{Label: "Tue 10:00"}, {Label: "Wed 14:30"}, {Label: "Thu 16:00"}},
		}}}, "to book your demo", nil)
		if ask != nil {
			return ask, nil, nil // the client asks the person, then calls again with the answer
		}
		if errors.Is(err, kindkit.ErrDeclined) || errors.Is(err, kindkit.ErrNoResponse) {
			return text("Nothing is booked: no slot was picked."), nil, nil
		}
		if err != nil {
			return nil, nil, err
		}
		when := slot.Answers[0].Options // one pick, or none and the person's own words
		if len(when) == 0 {
			when = []string{*slot.Answers[0].Other}
		}
		return text("Booked a demo of " + args.Topic + " on " + when[0] + "."), nil, nil
	}
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// newServer is the MCP server with its one tool.
func newServer() (*mcp.Server, error) {
	catalog, err := kinds.All()
	if err != nil {
		return nil, err
	}
	choices, _ := catalog.Kind(choicesgen.Name)
	server := mcp.NewServer(&mcp.Implementation{Name: "mcpask", Version: "v0.1.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "book_demo", Description: "Book a product demo; asks the person for a slot."}, bookDemo(choices))
	return server, nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	server, err := newServer()
	if err != nil {
		log.Fatal(err)
	}
	if err := server.Run(ctx, &mcp.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
		log.Fatal(err)
	}
}
