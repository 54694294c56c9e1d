// kindkit chat: a plain-JavaScript client of the smooth-operator protocol.
// It talks to /ws on the host that served it, draws a card for every
// interaction kind (its own for choices and identity_intake, a form built
// from /kinds' valuesSchema for any other) and resumes its conversation
// after a reload. The page is ES modules under js/, loaded as they are:
// no build step. They are layered, each importing only from the layers
// before it: core (DOM and text), renderers (a kind's card body from its
// spec), card (a card's life around a renderer), chat (the socket, turns
// and composer, which alone know the wire); this file is the entry point.
import { start } from "./js/chat/main.js";

start();
