// The one-line summaries of ended cards, live and from the history.
import { CARDS } from "./cards.js";
import { h, humanize, state, uid } from "./core.js";
import { LINK_TITLE, bindSpec, formSchema, labelsOf, ui, withOptions } from "./generic.js";
import { linkOf } from "./link.js";

// OUTCOMES are the words for a card that ended without values.
export const OUTCOMES = {
  declined: "Declined",
  no_response: "No answer in time.",
  withdrawn: "Answered in words.",
  cancelled: "Stopped.",
};

// The words for a link card's ends: the person (or the site) said done,
// or the person cancelled.
export const LINK_DONE = "Done";
export const LINK_CANCELLED = "Cancelled";

// CONFIRMED are the words for a write confirmation's answer, as its live
// card says them.
const CONFIRMED = { approved: "Approved", denied: "Rejected" };

// pastCard is an ended card from the history: its heading and summary.
export function pastCard(c) {
  if (!c || typeof c !== "object") return null;
  if (c.confirmation && typeof c.confirmation === "object") return pastConfirmation(c.confirmation, c.outcome);
  if (typeof c.kind !== "string") return null;
  const spec = c.spec && typeof c.spec === "object" && !Array.isArray(c.spec) ? c.spec : {};
  const o = c.outcome && typeof c.outcome === "object" ? c.outcome : {};
  const how = o.status === "submitted" ? "answered" : o.status === "declined" ? "declined" : "closed";
  const link = !!linkOf(kindSchema(c.kind), spec);
  const text = o.status === "submitted" ? summary(c.kind, spec, o.values)
    : link && o.status === "declined" ? LINK_CANCELLED : OUTCOMES[o.status] || "This card is closed.";
  const headingId = uid("card-title");
  return h("section", { class: "card", "data-kind": c.kind, "data-state": how, "aria-labelledby": headingId },
    h("h2", { class: "card-title", id: headingId, text: cardTitle(c.kind, spec) }),
    h("p", { class: "card-status", text, dir: "auto" }));
}

// pastConfirmation is an ended write confirmation from the history: what
// came of it, and for which tool ("Approved: delete_record").
function pastConfirmation(d, outcome) {
  const st = outcome && typeof outcome === "object" ? outcome.status : undefined;
  const how = CONFIRMED[st] || OUTCOMES[st] || "This card is closed.";
  const tool = typeof d.toolId === "string" ? d.toolId : "";
  const headingId = uid("card-title");
  return h("section", { class: "card", "data-kind": "confirmation", "data-state": CONFIRMED[st] ? "answered" : "closed",
    "aria-labelledby": headingId },
    h("h2", { class: "card-title", id: headingId, text: "Allow this action?" }),
    h("p", { class: "card-status", text: tool ? `${how.replace(/\.$/, "")}: ${tool}` : how, dir: "auto" }));
}

// cardTitle is a card's heading: its own card's, its x-ui title, or its
// kind's name.
export function cardTitle(kind, spec) {
  if (CARDS[kind]) return CARDS[kind].title(spec);
  if (linkOf(kindSchema(kind), spec)) return LINK_TITLE;
  const t = ui(kindSchema(kind)).title;
  return typeof t === "string" && t.trim() ? t : humanize(kind);
}

// kindSchema is kind's Values schema, as the server listed it.
function kindSchema(kind) {
  const info = state.kinds.get(kind);
  return info && info.valuesSchema;
}

// summary is submitted values in one line, "Plan: Team · Topics: Pricing,
// SSO", named as the card named them.
export function summary(kind, spec, values) {
  let parts = [];
  if (!CARDS[kind] && linkOf(kindSchema(kind), spec)) return LINK_DONE;
  if (CARDS[kind] && CARDS[kind].summary) parts = CARDS[kind].summary(spec, values);
  else {
    const info = state.kinds.get(kind);
    const schema = formSchema(info && info.valuesSchema, spec);
    parts = schema ? valueParts(schema, values, spec) : [];
  }
  const line = parts.filter(Boolean).join(" · ");
  return line || "Answered";
}

export const MAX_SHOWN = 80; // a longer text answer is cut in a summary

export function clip(text) {
  const chars = [...String(text)];
  return chars.length > MAX_SHOWN ? chars.slice(0, MAX_SHOWN - 1).join("") + "…" : chars.join("");
}

// valueParts is "Label: value" for each answered property of an object
// schema, in the schema's order.
export function valueParts(schema, values, spec) {
  if (!values || typeof values !== "object" || Array.isArray(values) || !schema.properties) return [];
  const out = [];
  for (const [key, sub0] of Object.entries(schema.properties)) {
    if (!Object.prototype.hasOwnProperty.call(values, key)) continue;
    const sub = withOptions(bindSpec(sub0, spec), spec);
    const shown = valueText(sub, values[key], spec);
    if (shown === "") continue;
    const hints = ui(sub);
    const label = typeof hints.label === "string" && hints.label.trim() ? hints.label : humanize(key);
    out.push(`${label}: ${shown}`);
  }
  return out;
}

// valueText is one value as a person reads it: an option by its label,
// a switch as Yes or No, a list joined with commas.
export function valueText(s, v, spec) {
  if (v === undefined || v === null || v === "") return "";
  if (typeof v === "boolean") return v ? "Yes" : "No";
  if (Array.isArray(v)) {
    const own = s && s.items && typeof s.items === "object" ? s.items : {};
    const items = withOptions(bindSpec(ui(s).options ? { ...own, "x-ui": { ...ui(own), options: ui(s).options } } : own, spec), spec);
    const merged = { ...items, "x-ui": { ...ui(items), labels: { ...labelsOf(items), ...labelsOf(s) } } };
    return v.map((x) => valueText(merged, x, spec)).filter(Boolean).join(", ");
  }
  if (typeof v === "object") {
    const inner = s && s.properties ? valueParts(s, v, spec) : Object.entries(v).map(([k, x]) => `${humanize(k)}: ${valueText({}, x, spec)}`);
    return inner.join(", ");
  }
  const names = labelsOf(s);
  return clip(typeof names[String(v)] === "string" ? names[String(v)] : v);
}
