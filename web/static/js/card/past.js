// An ended card as the history shows it: its heading and one line of
// what came of it, drawn without a form.
import { h, uid } from "../core/dom.js";
import { LINK_CANCELLED } from "../renderers/link.js";
import { OUTCOMES, cardTitle, isLink, summary } from "../renderers/summary.js";

// CONFIRMED are the words for a write confirmation's answer, as its live
// card says them.
export const CONFIRMED = { approved: "Approved", denied: "Rejected", responded: "Answered instead" };

// pastCard is an ended card from the history (a kindkit.history_cards
// entry): its heading and summary. kinds maps a kind's name to its
// /kinds entry.
export function pastCard(c, kinds) {
  if (!c || typeof c !== "object") return null;
  if (c.confirmation && typeof c.confirmation === "object") return pastConfirmation(c.confirmation, c.outcome);
  if (typeof c.kind !== "string") return null;
  const info = kinds && kinds.get(c.kind);
  const spec = c.spec && typeof c.spec === "object" && !Array.isArray(c.spec) ? c.spec : {};
  const o = c.outcome && typeof c.outcome === "object" ? c.outcome : {};
  const how = o.status === "submitted" ? "answered" : o.status === "declined" ? "declined" : "closed";
  const text = o.status === "submitted" ? summary(c.kind, spec, o.values, info)
    : isLink(c.kind, spec, info) && o.status === "declined" ? LINK_CANCELLED : OUTCOMES[o.status] || "This card is closed.";
  const headingId = uid("card-title");
  return h("section", { class: "card", "data-kind": c.kind, "data-state": how, "aria-labelledby": headingId },
    h("h2", { class: "card-title", id: headingId, text: cardTitle(c.kind, spec, info) }),
    h("p", { class: "card-status", text, dir: "auto" }));
}

// pastConfirmation is an ended write confirmation from the history: what
// came of it, and for which tool ("Approved: delete_record").
function pastConfirmation(d, outcome) {
  const st = outcome && typeof outcome === "object" ? outcome.status : undefined;
  const how = (st === "approved" && outcome.edited ? "Approved with your changes" : CONFIRMED[st]) || OUTCOMES[st] || "This card is closed.";
  const tool = typeof d.toolId === "string" ? d.toolId : "";
  const headingId = uid("card-title");
  return h("section", { class: "card", "data-kind": "confirmation", "data-state": CONFIRMED[st] ? "answered" : "closed",
    "aria-labelledby": headingId },
    h("h2", { class: "card-title", id: headingId, text: "Allow this action?" }),
    h("p", { class: "card-status", text: tool ? `${how.replace(/\.$/, "")}: ${tool}` : how, dir: "auto" }));
}
