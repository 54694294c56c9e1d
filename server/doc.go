// Package server serves kindkit over WebSocket with the smooth-operator
// Rich Interactions protocol (../shared/PROTOCOL.md): connections, frames,
// sessions and conversations, list_conversations, and verify_otp (which,
// with no OTP service, answers otp_invalid NOT_FOUND).
//
// Turns are run by the agent.Engine the server is handed (New); each
// connection is the engine's Follower for its one turn, and subscribes to
// the event stream of every conversation it has a session on, so every
// tab and process sees a turn; it turns the events into protocol frames.
// Each connection has two goroutines (its reader and its ordered writer),
// plus one while a turn of it is actually running.
package server
