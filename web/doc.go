// Package web is kindkit's browser client: a chat page that speaks the
// protocol over /ws and draws every interaction kind of the catalog.
//
// Handler serves three things:
//
//   - GET / — the chat page (static/index.html, style.css and app.js with
//     its ES modules under static/js: plain HTML, CSS and JavaScript
//     embedded in the binary, no build step, no external network or CDN).
//     The modules are layered and import only from the layers before
//     their own: core (DOM and text), renderers (a kind's card body from
//     its spec), card (a card's life around a renderer), chat (the socket,
//     turns and composer); depcruise.json states it and TestModuleLayers
//     checks it;
//   - GET /answer — the answer page of a one-time answer link
//     (static/answer.html and answer.js, package link): one ask's card,
//     drawn with the same card and renderers, answered over HTTP at
//     answer/submit; it imports none of the chat's modules;
//   - GET /static/… — those assets;
//   - GET /kinds — the catalog as JSON, one entry per kind:
//     {name, capability, toolName, toolSchema, valuesSchema}. toolSchema is
//     the raise tool's parameters; valuesSchema is the kind's $defs/Values
//     with every local $ref inlined, so a client can draw a form from it.
//     kindgen derived both (gen/<kind>gen/tool.json and values.json); the
//     handler serves them as they are.
//
// A server mounts the handler beside the protocol endpoints:
//
//	mux.Handle("/ws", srv)
//	mux.Handle("/healthz", srv)
//	mux.Handle("/readyz", srv)
//	mux.Handle("/", web.Handler(catalog))
//
// The page connects to ws(s)://<same host>/ws, declares in supports the
// capabilities of its own cards (choice_chips, identity_form) and of every
// kind in /kinds (its generic form draws any kind from valuesSchema), and
// the kindkit extensions it reads (kindkit.history_cards: the history's
// ended cards; kindkit.user_messages: what other tabs send), and
// keeps the conversationId in localStorage, so a reload resumes the
// conversation and shows a parked card again. A choices raise becomes chips
// with an "Other" box per question, an identity_intake raise a contact form,
// and any other kind a form generated from its Values schema, so a new kind
// works in the browser without new JavaScript.
//
// The page passes ?token= and ?agent= from its own URL on to the socket
// (the bearer token) and to create_conversation_session (the agentId,
// default "web").
package web
