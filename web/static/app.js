// kindkit chat: a plain-JavaScript client of the smooth-operator protocol.
// It talks to /ws on the host that served it, draws a card for every
// interaction kind (its own for choices and identity_intake, a form built
// from /kinds' valuesSchema for any other) and resumes its conversation
// after a reload. The page is ES modules under js/, loaded as they are:
// no build step.
// Modules that wire the page's own controls when they load: the Retry and
// Stop buttons, the composer, the sanitiser's link hook.
import "./js/connection.js";
import "./js/sending.js";
import "./js/turns.js";
import { start } from "./js/main.js";

start();
