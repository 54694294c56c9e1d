// Package link makes and serves one-time answer links: a signed, expiring
// URL for one ask, for a person who is not in the conversation (an
// approver reached by a webhook, say) to answer it from a standalone page.
//
// A link's token is an HMAC-SHA256, under a server secret
// (KINDKIT_LINK_SECRET for kindserver), of the conversation's and the
// ask's ids and the link's expiry: the ask's deadline, or a fixed time
// after it parked when it has none. A Signer makes and checks tokens; any
// process that shares the secret checks what another made, and several
// secrets may be given at once to rotate them. Handler serves the page's
// two calls: what the ask is (or how it ended), and its answer, which
// goes through the engine's Submit or Decide like any other (the same
// validation, the same one take) and is recorded as answered by link
// (agent.ViaLink).
//
// A link dies with its ask: once the ask ends (answered, expired,
// withdrawn), the link shows how it ended and answers nothing more. The
// same answer again returns the first result; a different one gets the
// engine's "already answered" error (agent.AskEndedError), with when and
// by which path. When auth is on, a link answers only for a bearer the
// ask is meant for (its addressee, kindkit.AddressedTo, else the
// conversation's owner): a leaked link alone is not enough.
// docs/links.md has the threat model.
//
// The token travels in the URL's fragment (…/answer#<token>), which
// browsers never send to a server, so it stays out of access logs and
// Referer headers; the page posts it in a request body.
package link
