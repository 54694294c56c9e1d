// A card that sends the person to a link (an MCP server's URL-mode
// elicitation): the site's domain, the whole link, and Done and Cancel.
import { h, uid } from "../core/dom.js";
import { pointer } from "../core/text.js";
import { ui } from "./schema.js";

// LINK_TITLE is the heading of a card that sends the person to a link.
export const LINK_TITLE = "A tool asks you to open a link";

// The words for a link card's ends: the person (or the site) said done,
// or the person cancelled.
export const LINK_DONE = "Done";
export const LINK_CANCELLED = "Cancelled";

// linkOf is the link a card of kind shows, when the kind's x-ui link hint
// points to one in the spec ({"link": "/url"}), else "".
export function linkOf(schema, spec) {
  const at = ui(schema).link;
  const v = typeof at === "string" ? pointer(spec, at) : undefined;
  return typeof v === "string" ? v : "";
}

// webLink is raw as a URL when it is an absolute http or https one, else
// null: nothing else is ever made a link (the kind's rules refuse it
// already; the page does not rely on that).
export function webLink(raw) {
  let u;
  try { u = new URL(raw); } catch { return null; }
  return u.protocol === "http:" || u.protocol === "https:" ? u : null;
}

// renderLink draws the link card into body: the server's message comes
// before it (specText). The site's domain is what a person should check,
// so it stands out; the whole link follows, opened only by the person, in
// a new tab that cannot reach back into this page. The answer carries
// nothing: Done (submit) or Cancel (decline).
export function renderLink(form, raw, body) {
  const u = webLink(raw);
  form.title = LINK_TITLE;
  form.read = () => ({});
  form.actions = { submit: LINK_DONE, decline: "Cancel" };
  form.labels.declined = LINK_CANCELLED;
  // The server's message says what the link is for; the reason an MCP
  // server's Ask carries names its tool ("everything asks, for its tool
  // …"), which tells a person nothing they can act on.
  form.showReason = false;
  if (!u) {
    form.blocked = true;
    body.append(h("p", { class: "card-error", role: "alert", text: "This link cannot be opened here: it is not a web address. Cancel, or ask the assistant about it." }));
    return;
  }
  const domainId = uid("link-domain");
  const helpId = uid("link-help");
  // A domain written in another script reaches the page as punycode
  // (xn--): a look-alike of a familiar name is easy to miss.
  const punycode = u.hostname.split(".").some((label) => label.startsWith("xn--"));
  body.append(h("div", { class: "link-box" },
    h("p", { class: "link-site", id: domainId },
      h("span", { class: "link-site-label", text: "This link opens " }),
      h("strong", { class: "link-domain", text: u.hostname, dir: "ltr" })),
    punycode ? h("p", { class: "link-warn", text: "Check this address carefully: its domain is written with international characters, so it may look like another site's." }) : null,
    h("a", { class: "link-url", href: u.href, target: "_blank", rel: "noopener noreferrer", dir: "ltr",
      "aria-describedby": `${domainId} ${helpId}` }, u.href, h("span", { class: "sr-only", text: " (opens in a new tab)" })),
    h("p", { class: "help", id: helpId, text: "Open the link and finish there, then press Done. What you enter on that site is not shared with this chat." })));
}
