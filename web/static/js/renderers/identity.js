// The identity_intake card: a contact form.
import { h, uid } from "../core/dom.js";
import { clip, humanize } from "../core/text.js";
import { errorSlot, requiredMark } from "./form.js";

export const IDENTITY = {
  name: { label: "Name", type: "text", autocomplete: "name" },
  email: { label: "Email", type: "email", autocomplete: "email", inputmode: "email" },
  phone: { label: "Phone", type: "tel", autocomplete: "tel", inputmode: "tel" },
};

// identitySummary names each given field as the card did, in the card's
// order (stored values come back in the alphabet's).
export function identitySummary(spec, values) {
  if (!values || typeof values !== "object") return [];
  const named = new Map();
  for (const f of (spec && Array.isArray(spec.fields) ? spec.fields : [])) {
    const key = typeof f === "string" ? f : f && f.key;
    if (key && !named.has(key)) named.set(key, f && typeof f === "object" && f.label ? f.label : "");
  }
  const keys = [...named.keys(), ...Object.keys(values).filter((k) => !named.has(k))];
  return keys.filter((k) => typeof values[k] === "string" && values[k]).map((k) =>
    `${named.get(k) || (IDENTITY[k] || {}).label || humanize(k)}: ${clip(values[k])}`);
}

// renderIdentity draws spec's fields into form, filled with earlier values.
export function renderIdentity(form, spec, body) {
  const earlier = form.values && typeof form.values === "object" ? form.values : {};
  const seen = new Map();
  for (const f of spec.fields || []) {
    const key = typeof f === "string" ? f : f.key;
    const req = typeof f === "string" ? true : f.required !== false;
    const prev = seen.get(key);
    if (prev) { prev.required = prev.required || req; continue; }
    seen.set(key, { key, required: req, label: typeof f === "object" && f.label ? f.label : null });
  }
  const inputs = [];
  if ([...seen.values()].some((f) => f.required)) body.append(h("p", { class: "hint", text: "Fields marked * are required." }));
  for (const f of seen.values()) {
    const meta = IDENTITY[f.key] || { label: humanize(f.key), type: "text" };
    const id = uid("id-" + f.key);
    const input = h("input", { id, name: f.key, type: meta.type, autocomplete: meta.autocomplete, inputmode: meta.inputmode, "aria-required": f.required ? "true" : null, spellcheck: "false" });
    if (typeof earlier[f.key] === "string") input.value = earlier[f.key];
    const slot = errorSlot(() => [input]);
    input.addEventListener("input", () => slot.mark(""));
    body.append(h("div", { class: "field", "data-field": f.key },
      h("label", { for: id }, f.label || meta.label, f.required ? requiredMark() : null), input, slot.err));
    form.fields.set(f.key, { err: slot.err, mark: slot.mark, focus: () => input.focus() });
    inputs.push([f.key, input]);
  }
  form.read = () => {
    const v = {};
    for (const [key, input] of inputs) if (input.value !== "") v[key] = input.value;
    return v;
  };
}
