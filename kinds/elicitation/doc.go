// Package elicitation holds the rules of the elicitation kind: an MCP
// server's elicitation/create (form mode) asked of the person as a card.
// The spec carries the server's requested schema; the rules check that it
// is one MCP allows (a flat object of primitive properties) and validate
// the person's answer against it, formats included, before the answer goes
// back to the server.
package elicitation
