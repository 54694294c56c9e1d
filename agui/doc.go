// Package agui serves kindkit's turn engine over AG-UI 1.0, the event
// protocol between agents and front ends (CopilotKit and every AG-UI
// client): a client POSTs a RunAgentInput and reads the run as
// server-sent events, RUN_STARTED to RUN_FINISHED or RUN_ERROR.
//
// It is a transport beside package server, built only on the engine's
// exported API (New takes the engine, as server.New does). A run sends a
// message (Engine.Send) or resumes the thread's open interrupt
// (Engine.Submit, Engine.Confirm) and follows the turn's events
// (Engine.Subscribe): text, tool calls and their results, then a
// MESSAGES_SNAPSHOT and RUN_FINISHED. A turn that parks on a kind's card
// or a tool call's confirmation ends its run with the interrupt outcome;
// the park is the engine's, stored, so the interrupt outlives the process
// that raised it, and a resume sent to any process on the same store
// resumes the turn once. A turn waits on one ask at a time today, so a
// run ends with one interrupt.
//
// docs/agui.md maps kindkit's events onto AG-UI's and says what AG-UI
// cannot carry.
package agui
