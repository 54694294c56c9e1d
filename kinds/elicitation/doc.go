// Package elicitation holds the rules of the elicitation kind: an MCP
// server's elicitation/create asked of the person as a card.
//
// In form mode the spec carries the server's requested schema; the rules
// check that it is one MCP allows (a flat object of primitive properties)
// and validate the person's answer against it, formats included, before
// the answer goes back to the server. In URL mode the spec carries a link
// the person opens in their own browser; the rules let only an http or
// https link through, and the answer (done, or declined) carries nothing.
package elicitation
