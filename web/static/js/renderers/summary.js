// A kind's card as one line: its heading and its answer ("Plan: Team ·
// Topics: Pricing, SSO"), for a card that ended, live or in the history.
// info is the kind's /kinds entry, when the page has one.
import { clip, humanize } from "../core/text.js";
import { OWN } from "./index.js";
import { LINK_DONE, LINK_TITLE, linkOf } from "./link.js";
import { bindSpec, formSchema, labelsOf, ui, withOptions } from "./schema.js";

// OUTCOMES are the words for a card that ended without values.
export const OUTCOMES = {
  declined: "Declined",
  no_response: "No answer in time.",
  withdrawn: "Answered in words.",
  cancelled: "Stopped.",
};

// cardTitle is a card's heading: its own card's, its x-ui title, or its
// kind's name.
export function cardTitle(kind, spec, info) {
  if (OWN[kind]) return OWN[kind].title(spec);
  if (linkOf(valuesSchema(info), spec)) return LINK_TITLE;
  const t = ui(valuesSchema(info)).title;
  return typeof t === "string" && t.trim() ? t : humanize(kind);
}

export const valuesSchema = (info) => info && info.valuesSchema;

// isLink says whether a card of this kind and spec is a link to open.
export const isLink = (kind, spec, info) => !OWN[kind] && !!linkOf(valuesSchema(info), spec);

// summary is submitted values in one line, "Plan: Team · Topics: Pricing,
// SSO", named as the card named them.
export function summary(kind, spec, values, info) {
  let parts = [];
  if (isLink(kind, spec, info)) return LINK_DONE;
  if (OWN[kind] && OWN[kind].summary) parts = OWN[kind].summary(spec, values);
  else {
    const schema = formSchema(valuesSchema(info), spec);
    parts = schema ? valueParts(schema, values, spec) : [];
  }
  const line = parts.filter(Boolean).join(" · ");
  return line || "Answered";
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
