// Package server serves kindkit over WebSocket with the smooth-operator
// Rich Interactions protocol (../shared/PROTOCOL.md): sessions and
// conversations, streamed agent turns over a pluggable Model, the raise tool
// of every kind in a kindkit.Catalog, submit_interaction, cancel, the
// write-confirmation gate, list_conversations, and verify_otp (which, with
// no OTP service, answers otp_invalid NOT_FOUND).
//
// A parked turn is data in a store.Store, not a waiting goroutine:
// resuming it writes the tool result into the stored history and runs the
// agent loop on from there, on whichever connection received the submit.
// Each connection has two goroutines (its reader and its ordered writer),
// plus one while a turn is actually running.
package server
