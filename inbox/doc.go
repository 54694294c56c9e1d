// Package inbox serves a principal's inbox over HTTP: the pending asks it
// may answer, across conversations (agent.Engine.Inbox), and their
// answers, for a person who is not in those conversations (a manager, an
// on-call engineer, legal) to answer from one page (web's /inbox).
//
//	GET  /inbox/asks?kind=&before=RFC3339&cursor=&limit=   → {"asks": […], "nextCursor"}
//	POST /inbox/submit {"conversationId", "interactionId", "values" | "declined" | "approved"}
//
// It is a transport built only on the engine's exported API. An inbox is
// someone's, so it needs auth: every call carries a bearer token
// (Authorization: Bearer, checked by server.VerifyToken under the
// server's auth secret), whose subject and groups claim say whose inbox
// it is; without an auth secret the inbox is off, and says so. An answer
// goes through the engine's Submit or Decide like any other (the same
// validation, the same one take) and is recorded as answered from an
// inbox (agent.ViaInbox), by the token's subject; the turn resumes, and
// the conversation's own page sees it live.
//
// Only whoever may answer an ask sees it or answers it here: its
// addressee (agent.MayAnswer) when it is addressed, else its
// conversation's owner. Anyone else's submit gets exactly what an ask that
// does not exist gets. A page's cursor is opaque (ParseCursor reads it).
// docs/inbox.md says more.
package inbox
