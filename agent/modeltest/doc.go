// Package modeltest is the contract suite every model adapter (an
// agent.Model over a provider's HTTP API, such as agent/openai and
// agent/anthropic) must pass, as store/storetest is for stores.
//
// An adapter's test calls Run with a Harness around a fake of its
// provider's API: a real HTTP server (Server) that speaks the provider's
// documented wire format. The suite says what the model answers
// provider-neutrally (Reply: streamed text, tool calls, usage, an HTTP
// error, a stream that breaks); the harness writes it in the provider's
// format (Harness.Frames, Harness.ErrorBody), and reads each request the
// adapter sent back into a provider-neutral form (Harness.Read). Nothing
// is mocked at the Go interface: the adapter, its SDK and its HTTP client
// run as they do in production.
//
//	func TestContract(t *testing.T) { modeltest.Run(t, harness) }
//
// The suite covers the model call (text streamed in its pieces, one and
// several tool calls, the history with tool results paired to their calls
// by id, an error result's message and the provider's error flag, usage,
// the turn's knowledge, provider errors and broken streams, retries,
// cancellation) and the adapter inside a real engine behind the WebSocket
// server (a card raised and answered, several host tools called in one
// step, a person rejecting a call with a reason and answering in its
// place, a failing model). FuzzStream feeds an adapter arbitrary streams.
//
// What is truly one provider's (its headers, its retry hints, how it
// merges messages) stays in that adapter's own tests, which use Server
// for their fakes too.
package modeltest
