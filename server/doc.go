// Package server serves kindkit over WebSocket with the smooth-operator
// Rich Interactions protocol (../shared/PROTOCOL.md): connections, frames,
// sessions and conversations, list_conversations, and verify_otp (which,
// with no OTP service, answers otp_invalid NOT_FOUND).
//
// Turns are run by the agent.Engine the server is handed (New). Each
// connection subscribes to the event stream of every conversation it has
// a session on, so every tab and process sees a turn, and turns the events
// into protocol frames; by them it also follows its one turn, the
// protocol's slot (following).
// Each connection has two goroutines (its reader and its ordered writer),
// plus one while a turn of it is actually running.
package server
