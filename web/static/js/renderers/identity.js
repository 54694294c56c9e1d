// The identity_intake card: a contact form.
import { h, uid } from "../core/dom.js";
import { clip, humanize } from "../core/text.js";
import { REQUIRED, enterMovesOn, errorSlot, invalid, requiredMark } from "./form.js";

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
    // Enter moves on to the next field, and from the last to Submit.
    const at = inputs.length;
    enterMovesOn(input, () => (inputs[at + 1] ? inputs[at + 1].input : null));
    const label = f.label || meta.label;
    body.append(h("div", { class: "field", "data-field": f.key },
      h("label", { for: id }, label, f.required ? requiredMark() : null), input, slot.err));
    form.fields.set(f.key, { err: slot.err, mark: slot.mark, focus: () => input.focus() });
    inputs.push({ key: f.key, required: f.required, label, input });
  }
  // A card left short of what it requires is not sent: each required
  // field says so, and what else the page can tell (an address that is
  // not one) is said with it. Otherwise the server's rules speak.
  form.read = () => {
    const v = {};
    for (const { key, input } of inputs) if (input.value !== "") v[key] = input.value;
    const missing = inputs.filter((f) => f.required && !f.input.value.trim());
    if (missing.length) {
      const errors = missing.map((f) => ({ field: f.key, message: REQUIRED }));
      for (const f of inputs) {
        if (f.input.type === "email" && f.input.value.trim() && f.input.validity.typeMismatch) errors.push({ field: f.key, message: "Must be a valid email address." });
      }
      throw invalid(errors, "Some fields need attention.");
    }
    if (inputs.length && !inputs.some((f) => f.input.value.trim())) {
      throw invalid([], `Fill in ${inputs.length > 1 ? "at least one of " : ""}${listed(inputs.map((f) => f.label))}, or decline the card.`);
    }
    return v;
  };
}

// listed is "A", "A or B", "A, B or C".
function listed(words) {
  return words.length > 1 ? `${words.slice(0, -1).join(", ")} or ${words[words.length - 1]}` : words.join("");
}
