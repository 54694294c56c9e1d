// Any other kind: a form drawn from its Values schema, the spec and its x-ui hints.
import { h, uid } from "../core/dom.js";
import { humanize, pointer } from "../core/text.js";
import { REQUIRED, errorSlot, invalid, requiredMark } from "./form.js";
import { linkOf, renderLink } from "./link.js";
import { bindSpec, formSchema, hinted, labelsOf, typeOf, ui, withOptions } from "./schema.js";

// The form is drawn from the kind's Values schema and the card's spec.
// Descriptions are written for the model and for developers, and titles
// name Go types, so neither is shown; what a person reads comes from the
// x-ui hints a kind may put in its schema (docs/adding-a-kind.md):
//
//   on Values:     {"title": heading, "text": [spec pointers shown as text]}
//   on a property: {"label", "help", "widget", "labels", "minLabel",
//                   "maxLabel", "bind": {keyword: spec pointer},
//                   "options": {"from": spec pointer, "value", "label"},
//                   "showIf": spec pointer}
//   on Values:     {"link": spec pointer to a URL}: when the spec has one
//                  there, the card is a link to open (link.js), not a form
//
// Without hints, a card shows the spec's question (PROMPT_KEYS) and its
// lists (the options a person picks from), never its flags or settings.

// The spec keys a generic card shows as its question, first one wins.
export const PROMPT_KEYS = ["question", "prompt", "title", "message", "text"];
export const MAX_CHIPS = 12; // more enum values than this get a drop-down
export const MAX_SCALE = 11; // a bounded integer with at most this many values is a row of buttons
// renderGeneric draws a kind's card from its /kinds entry (info) into
// form: the spec's text, then a field per property of the Values schema,
// each filled with its earlier value or the schema's default.
export function renderGeneric(form, spec, info, body) {
  const schema = info && info.valuesSchema;
  const hints = ui(schema);
  if (typeof hints.title === "string" && hints.title.trim()) form.title = hints.title;
  body.append(...specText(form.spec, schema));
  const link = linkOf(schema, form.spec);
  if (link) {
    renderLink(form, link, body);
    return;
  }
  // schemaFrom: the form is the schema the spec carries (an MCP server's
  // requested schema), else, if that is not a flat object schema, the
  // kind's own.
  const drawn = formSchema(schema, form.spec);
  const root = drawn ? field(form, drawn, "", null, true, 0, form.values) : jsonField(form, "", "Answer (JSON)", true, undefined, form.values);
  body.append(root.el);
  form.read = () => {
    const v = root.read();
    const errs = root.check ? root.check(v) : [];
    if (errs.length) throw invalid(errs.map(([f, m]) => ({ field: f, message: m })), "Some fields need attention.");
    return v === undefined ? {} : v;
  };
}

// specText is what of the spec a person reads.
export function specText(spec, schema) {
  const hints = ui(schema);
  const para = (v) => h("p", { class: "q-text", text: String(v), dir: "auto" });
  const texty = (v) => (typeof v === "string" && v.trim()) || typeof v === "number";
  if (Array.isArray(hints.text)) return hints.text.map((p) => pointer(spec, p)).filter(texty).map(para);
  const out = [];
  const key = PROMPT_KEYS.find((k) => typeof spec[k] === "string" && spec[k].trim());
  if (key) out.push(para(spec[key]));
  if (hinted(schema)) return out;
  for (const [k, v] of Object.entries(spec)) {
    if (k === key || !Array.isArray(v) || !v.length) continue;
    out.push(h("div", { class: "spec" }, h("p", { class: "spec-label", text: humanize(k) }), describe(v)));
  }
  return out;
}

// describe renders a list from a spec for a person: flat objects as
// "a — Pizza" lines.
export function describe(v) {
  if (v === null || v === undefined) return null;
  if (Array.isArray(v)) {
    if (v.every(scalar)) return h("span", { text: v.map(show).join(", "), dir: "auto" });
    return h("ul", {}, v.map((x) => h("li", { dir: "auto" }, flat(x) ? Object.values(x).map(show).join(" — ") : describe(x))));
  }
  if (typeof v === "object") return h("span", { text: Object.values(v).filter(scalar).map(show).join(" — "), dir: "auto" });
  return h("span", { text: show(v), dir: "auto" });
}
export const scalar = (x) => x === null || typeof x !== "object";
export const show = (x) => (x === true ? "yes" : x === false ? "no" : String(x));
export const flat = (x) => x && typeof x === "object" && !Array.isArray(x) && Object.values(x).every(scalar);

export const join = (path, key) => (path ? `${path}.${key}` : String(key));

// field builds the control(s) for one schema at path and returns
// {el, read, check, focus}; read returns undefined for "nothing entered",
// check(value) the [path, message] pairs of what is wrong with it.
export function field(form, s0, path, name, required, depth, prior) {
  const bound = withOptions(bindSpec(s0, form.spec), form.spec);
  // An earlier value stands in for the default: it is drawn the same way.
  const s = prior === undefined || (prior !== null && typeof prior === "object" && !Array.isArray(prior)) ? bound : { ...bound, default: prior };
  const hints = ui(s);
  if (hints.showIf !== undefined && pointer(form.spec, hints.showIf) !== true) {
    return { el: null, read: () => undefined, check: () => [], focus() {} };
  }
  const type = typeOf(s);
  const label = typeof hints.label === "string" && hints.label.trim() ? hints.label : humanize(name || "value");
  if (type === "object" && s.properties) return objectField(form, s, path, name, label, required, depth, prior);
  if (type === "array") return arrayField(form, s, path, label, required, depth, prior);
  if (type === "const") return { el: h("span", { hidden: true }), read: () => s.const, check: () => [], focus() {} };
  if (type === "boolean") return boolField(form, s, path, label);
  const widget = hints.widget;
  if (Array.isArray(s.enum) && s.enum.length && widget !== "select" && (s.enum.length <= MAX_CHIPS || widget === "chips")) {
    return chipsField(form, s, path, label, required, s.enum, false);
  }
  if (type === "integer" && widget !== "number") {
    const lo = Number(s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : NaN));
    const hi = Number(s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - 1 : NaN));
    if (Number.isInteger(lo) && Number.isInteger(hi) && hi >= lo && hi - lo < MAX_SCALE) {
      const points = [];
      for (let n = lo; n <= hi; n++) points.push(n);
      return chipsField(form, s, path, label, required, points, true);
    }
  }
  if (["string", "number", "integer"].includes(type)) return scalarField(form, s, type, path, label, required);
  return jsonField(form, path, label + " (JSON)", required, s, prior);
}

// help is a field's help text: its x-ui help, never its description.
export function help(s, id) {
  const text = ui(s).help;
  return typeof text === "string" && text.trim() ? h("p", { class: "help", id, text }) : null;
}

export function labelled(id, label, required, s) {
  return [h("label", { for: id }, label, required ? requiredMark() : null), s ? help(s, id + "-help") : null];
}

export function register(form, path, slot, focus) {
  form.fields.set(path || "values", { err: slot.err, mark: slot.mark, focus });
}

// chipsField is one pick (or, with multi, any) from values as toggle
// buttons; a scale is a row of numbers with words for its ends.
export function chipsField(form, s, path, label, required, values, scale, multi) {
  const hints = ui(s);
  const legendId = uid("lbl");
  const helpNode = help(s, uid("help"));
  const names = hints.labels && typeof hints.labels === "object" ? hints.labels : {};
  const ends = scale ? [hints.minLabel, hints.maxLabel].map((x) => (typeof x === "string" && x.trim() ? x.trim() : "")) : ["", ""];
  const group = h("div", { class: scale ? "chips scale" : "chips", role: "group", "aria-labelledby": legendId, "aria-describedby": helpNode ? helpNode.id : null });
  const slot = errorSlot(() => [group]);
  const chips = values.map((v, i) => {
    const text = typeof names[String(v)] === "string" ? names[String(v)] : String(v);
    const end = i === 0 ? ends[0] : i === values.length - 1 ? ends[1] : "";
    const chip = h("button", { type: "button", class: "chip", "aria-pressed": "false", "data-value": String(v), dir: "auto",
      "aria-label": end ? `${text}, ${end}` : null }, h("span", { class: "chip-label", text }));
    chip.addEventListener("click", () => {
      if (!form.editable()) return;
      const on = chip.getAttribute("aria-pressed") !== "true";
      if (!multi) for (const c of chips) c.setAttribute("aria-pressed", "false");
      chip.setAttribute("aria-pressed", on ? "true" : "false");
      slot.mark("");
    });
    group.append(chip);
    return chip;
  });
  // A default is picked to begin with: one value, or a list of them.
  const defaults = multi ? (Array.isArray(s.default) ? s.default : []) : s.default === undefined ? [] : [s.default];
  values.forEach((v, i) => { if (defaults.includes(v)) chips[i].setAttribute("aria-pressed", "true"); });
  const endRow = ends[0] || ends[1]
    ? h("div", { class: "scale-ends", "aria-hidden": "true" }, h("span", { text: ends[0], dir: "auto" }), h("span", { text: ends[1], dir: "auto" }))
    : null;
  const focus = () => (chips.find((c) => c.getAttribute("aria-pressed") === "true") || chips[0]).focus();
  register(form, path, slot, focus);
  const picked = () => values.filter((_, i) => chips[i].getAttribute("aria-pressed") === "true");
  const read = () => {
    const p = picked();
    if (multi) return p.length || required ? p : undefined;
    return p.length ? p[0] : undefined;
  };
  const check = (v) => {
    if (required && (v === undefined || (multi && !v.length))) return [[path, multi ? "Pick at least one; this is required." : "Pick one; this is required."]];
    if (multi && s.minItems && v && v.length < s.minItems) return [[path, `Pick at least ${s.minItems}.`]];
    if (multi && s.maxItems && v && v.length > s.maxItems) return [[path, `Pick at most ${s.maxItems}.`]];
    return [];
  };
  const el2 = h("fieldset", { class: "field pick", "data-field": path },
    h("legend", { id: legendId }, label, required ? requiredMark() : null), helpNode,
    h("p", { class: "sr-only", text: multi ? "Pick any that apply." : "Pick one." }),
    scale ? h("div", { class: "scale-box" }, group, endRow) : group, slot.err);
  return { el: el2, read, check, focus };
}

// FORMATS are the inputs for a string's format, and how a value is made
// from what the browser's control holds.
export const FORMATS = {
  email: { type: "email", autocomplete: "email", inputmode: "email", spellcheck: "false" },
  uri: { type: "url", inputmode: "url", spellcheck: "false" },
  "uri-reference": { type: "url", inputmode: "url", spellcheck: "false" },
  iri: { type: "url", inputmode: "url", spellcheck: "false" },
  // JSON Schema has no phone format; "phone" and "tel" are what kinds write.
  phone: { type: "tel", autocomplete: "tel", inputmode: "tel", spellcheck: "false" },
  tel: { type: "tel", autocomplete: "tel", inputmode: "tel", spellcheck: "false" },
  date: { type: "date" },
  "date-time": { type: "datetime-local", value: (x) => { const d = new Date(x); return Number.isNaN(d.getTime()) ? x : d.toISOString().replace(/\.000Z$/, "Z"); } },
  time: { type: "time", step: "1", value: (x) => {
    const t = /^\d\d:\d\d$/.test(x) ? x + ":00" : x;
    const off = -new Date().getTimezoneOffset();
    const hh = String(Math.floor(Math.abs(off) / 60)).padStart(2, "0"), mm = String(Math.abs(off) % 60).padStart(2, "0");
    return `${t}${off >= 0 ? "+" : "-"}${hh}:${mm}`;
  } },
};

// setDefault puts a schema's default in its control, in the control's
// own form (a local date and time for date-time).
export function setDefault(control, s, fmt) {
  const d = s.default;
  if (d === undefined || d === null || typeof d === "object") return;
  if (control.tagName === "SELECT") {
    const i = s.enum.indexOf(d);
    if (i >= 0) control.value = String(i);
    return;
  }
  let v = String(d);
  if (fmt && fmt.type === "datetime-local") {
    const t = new Date(v);
    if (Number.isNaN(t.getTime())) return;
    const two = (n) => String(n).padStart(2, "0");
    v = `${t.getFullYear()}-${two(t.getMonth() + 1)}-${two(t.getDate())}T${two(t.getHours())}:${two(t.getMinutes())}:${two(t.getSeconds())}`;
  } else if (fmt && fmt.type === "time") {
    const m = /^\d\d:\d\d(?::\d\d)?/.exec(v);
    if (!m) return;
    v = m[0];
  }
  control.value = v;
}

export const FORMAT_ERRORS = {
  email: "Enter an email address, like name@example.com.",
  url: "Enter a full web address, starting with http or https.",
  tel: "Enter a phone number, like +1 555 123 4567.",
};

export function scalarField(form, s, type, path, label, required) {
  const id = uid("f");
  let control;
  const helpNode = help(s, id + "-help");
  const described = helpNode ? helpNode.id : null;
  const fmt = type === "string" ? FORMATS[ui(s).widget === "tel" ? "tel" : s.format] || null : null;
  if (Array.isArray(s.enum)) {
    control = h("select", { id, name: path, "aria-required": required ? "true" : null, "aria-describedby": described },
      h("option", { value: "", text: "Choose…" }),
      s.enum.map((v, i) => h("option", { value: String(i), text: typeof labelsOf(s)[String(v)] === "string" ? labelsOf(s)[String(v)] : String(v) })));
  } else if (type === "string") {
    const long = !fmt && ((s.maxLength || 0) > 200 || ui(s).widget === "textarea");
    const attrs = { id, name: path, maxlength: s.maxLength, "aria-required": required ? "true" : null, "aria-describedby": described, dir: fmt ? null : "auto" };
    control = long
      ? h("textarea", { ...attrs, rows: "3" })
      : h("input", { ...attrs, type: "text", autocomplete: "off", ...(fmt || {}), value: null });
  } else {
    control = h("input", { id, name: path, type: "number", min: s.minimum, max: s.maximum, step: type === "integer" ? "1" : "any", inputmode: type === "integer" ? "numeric" : "decimal", "aria-required": required ? "true" : null, "aria-describedby": described });
  }
  setDefault(control, s, fmt);
  const slot = errorSlot(() => [control]);
  control.addEventListener(control.tagName === "SELECT" ? "change" : "input", () => slot.mark(""));
  register(form, path, slot, () => control.focus());
  const read = () => {
    if (Array.isArray(s.enum)) return control.value === "" ? undefined : s.enum[Number(control.value)];
    if (control.value === "") return undefined;
    if (type === "string") return fmt && fmt.value ? fmt.value(control.value) : control.value;
    const n = Number(control.value);
    return Number.isFinite(n) ? n : control.value;
  };
  const check = (v) => {
    if (control.validity && control.validity.badInput) return [[path, type === "integer" ? "Enter a whole number." : "Enter a number."]];
    if (v === undefined) return required ? [[path, REQUIRED]] : [];
    if (type === "string") {
      if (control.validity && control.validity.typeMismatch) return [[path, FORMAT_ERRORS[control.type] || "This is not in the expected form."]];
      // A browser checks no phone number: digits, spaces and + ( ) - . / only,
      // and enough digits to call; the server's rules check the rest.
      if (control.type === "tel" && (!/^[+\d\s().\-/]*$/.test(v) || (v.match(/\d/g) || []).length < 5)) return [[path, FORMAT_ERRORS.tel]];
      if (s.minLength && [...v].length < s.minLength) return [[path, s.minLength === 1 ? REQUIRED : `Use at least ${s.minLength} characters.`]];
      if (s.maxLength && [...v].length > s.maxLength) return [[path, `Use at most ${s.maxLength} characters.`]];
      return [];
    }
    if (typeof v !== "number") return [[path, "Enter a number."]];
    if (type === "integer" && !Number.isInteger(v)) return [[path, "Enter a whole number."]];
    if (s.minimum !== undefined && v < s.minimum) return [[path, `Enter ${s.minimum} or more.`]];
    if (s.maximum !== undefined && v > s.maximum) return [[path, `Enter ${s.maximum} or less.`]];
    return [];
  };
  return { el: h("div", { class: "field", "data-field": path }, labelled(id, label, required, s), control, slot.err), read, check, focus: () => control.focus() };
}

// boolField is a switch: on or off, so never missing.
export function boolField(form, s, path, label) {
  const id = uid("f");
  const helpNode = help(s, id + "-help");
  const box = h("input", { id, name: path, type: "checkbox", role: "switch", class: "switch", "aria-describedby": helpNode ? helpNode.id : null });
  if (s.default === true) box.checked = true;
  const slot = errorSlot(() => [box]);
  box.addEventListener("change", () => slot.mark(""));
  register(form, path, slot, () => box.focus());
  const el2 = h("div", { class: "field check", "data-field": path }, h("div", { class: "check-row" }, box, h("label", { for: id, text: label })),
    helpNode, slot.err);
  return { el: el2, read: () => box.checked, check: () => [], focus: () => box.focus() };
}

export function jsonField(form, path, label, required, s, prior) {
  const id = uid("f");
  const area = h("textarea", { id, name: path, rows: "3", class: "mono", spellcheck: "false", "aria-required": required ? "true" : null });
  if (prior !== undefined) area.value = JSON.stringify(prior);
  const slot = errorSlot(() => [area]);
  area.addEventListener("input", () => slot.mark(""));
  register(form, path, slot, () => area.focus());
  const read = () => {
    const text = area.value.trim();
    if (!text) return undefined;
    try { return JSON.parse(text); } catch { throw new Error(`${label}: this is not valid JSON.`); }
  };
  const check = (v) => (required && v === undefined ? [[path, REQUIRED]] : []);
  return { el: h("div", { class: "field", "data-field": path }, labelled(id, label, required, s), area, slot.err), read, check, focus: () => area.focus() };
}

export function objectField(form, s, path, name, label, required, depth, prior) {
  const req = new Set(Array.isArray(s.required) ? s.required : []);
  const earlier = prior && typeof prior === "object" && !Array.isArray(prior) ? prior : {};
  const children = Object.entries(s.properties).map(([key, sub]) => [key, field(form, sub, join(path, key), key, req.has(key), depth + 1,
    Object.prototype.hasOwnProperty.call(earlier, key) ? earlier[key] : undefined)])
    .filter(([, c]) => c.el);
  const slot = errorSlot(() => []);
  const first = () => children.length && children[0][1].focus();
  const wrap = depth === 0
    ? h("div", { class: "fields" }, children.map(([, c]) => c.el), slot.err)
    : h("fieldset", { class: "group", "data-field": path }, h("legend", {}, label, required ? requiredMark() : null),
      help(s, uid("help")), children.map(([, c]) => c.el), slot.err);
  if (depth === 0) {
    // The mark needs its key only where it tells fields apart.
    if (children.length > 1 && children.some(([key]) => req.has(key))) wrap.prepend(h("p", { class: "hint", text: "Fields marked * are required." }));
  } else {
    register(form, path, slot, first);
  }
  const read = () => {
    const out = {};
    for (const [key, c] of children) {
      const v = c.read();
      if (v !== undefined) out[key] = v;
    }
    return Object.keys(out).length || required || depth === 0 ? out : undefined;
  };
  const check = (v) => {
    if (v === undefined) return [];
    return children.flatMap(([key, c]) => c.check(v[key]));
  };
  return { el: wrap, read, check, focus: first };
}

export function arrayField(form, s, path, label, required, depth, prior) {
  const own = s.items && typeof s.items === "object" ? s.items : {};
  const items = withOptions(bindSpec(ui(s).options ? { ...own, "x-ui": { ...ui(own), options: ui(s).options } } : own, form.spec), form.spec);
  const itemType = typeOf(items);

  // A list of enum values: toggle buttons, any number pressed.
  if (Array.isArray(items.enum) && items.enum.length) {
    return chipsField(form, { ...items, "x-ui": { ...ui(items), ...ui(s) }, minItems: s.minItems, maxItems: s.maxItems, default: s.default }, path, label, required, items.enum, false, true);
  }

  const helpNode = help(s, uid("help"));
  const slot = errorSlot(() => [list]);
  const list = h("div", { class: "items" });
  const legend = h("legend", {}, label, required ? requiredMark() : null);
  const wrap = h("fieldset", { class: "group array", "data-field": path }, legend, helpNode);

  // Repeated rows with Add and Remove.
  const rows = [];
  const noun = humanize(label).toLowerCase();
  const add = h("button", { type: "button", class: "quiet small", text: "Add one" });
  add.setAttribute("aria-label", `Add to ${label}`);
  const renumber = () => {
    rows.forEach((r, i) => {
      r.remove.setAttribute("aria-label", `Remove ${noun} ${i + 1}`);
      if (r.legend) r.legend.textContent = `${label} ${i + 1}`;
    });
    add.textContent = rows.length ? "Add another" : "Add one";
  };
  // A row's path holds a number never given to another row of this list,
  // so a removed row's number is not reused and every row's errors stay
  // its own; read() tells the card which row each sent index is.
  let made = 0;
  const addRow = (was) => {
    const i = made++;
    const c = field(form, items, `${path}[${i}]`, `${label} ${i + 1}`, false, depth + 1, was);
    const remove = h("button", { type: "button", class: "quiet small remove", text: "Remove" });
    const row = h("div", { class: "item" }, c.el, remove);
    const r = { i, c, el: row, remove, legend: c.el && c.el.querySelector && c.el.querySelector("legend") };
    remove.addEventListener("click", () => {
      const at = rows.indexOf(r);
      rows.splice(at, 1);
      row.remove();
      renumber();
      (rows[at] || rows[at - 1] || { c: { focus: () => add.focus() } }).c.focus();
    });
    rows.push(r);
    list.append(row);
    renumber();
    return r;
  };
  add.addEventListener("click", () => addRow().c.focus());
  const earlier = Array.isArray(prior) ? prior : [];
  const start = Math.max(s.minItems || 0, itemType === "object" ? 0 : 1, earlier.length);
  for (let i = 0; i < start; i++) addRow(earlier[i]);
  wrap.append(list, h("div", { class: "array-actions" }, add), slot.err);
  register(form, path, slot, () => (rows[0] ? rows[0].c.focus() : add.focus()));
  const filled = (v) => v !== undefined && !(typeof v === "object" && v && !Array.isArray(v) && !Object.keys(v).length);
  const read = () => {
    const out = [];
    for (const r of rows) {
      const v = r.c.read();
      if (filled(v)) {
        form.aliases.set(`${path}[${out.length}]`, `${path}[${r.i}]`);
        out.push(v);
      }
    }
    return out.length || required ? out : undefined;
  };
  const check = (v) => {
    const errs = rows.flatMap((r) => { const x = r.c.read(); return filled(x) && r.c.check ? r.c.check(x) : []; });
    const n = v ? v.length : 0;
    if (required && !n) errs.push([path, REQUIRED]);
    else if (n && s.minItems && n < s.minItems) errs.push([path, `Add at least ${s.minItems}.`]);
    return errs;
  };
  return { el: wrap, read, check, focus: () => (rows[0] ? rows[0].c.focus() : add.focus()) };
}
