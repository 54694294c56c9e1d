// What a generic card reads from a kind's Values schema: its x-ui hints,
// the spec bound into it, the options a person picks from, and the
// schema an MCP server's requested schema becomes.
import { pointer } from "../core/text.js";

export const HINT_KEYS = new Set(["label", "help", "minLabel", "maxLabel", "labels", "widget"]); // bind targets that are hints, not keywords


// formSchema is the schema a generic card's form is drawn from: the one
// the spec carries where the kind's x-ui schemaFrom points (an MCP
// server's requested schema), else, if that is not a flat object
// schema, the kind's own.
export function formSchema(schema, spec) {
  const from = ui(schema).schemaFrom;
  return (typeof from === "string" && peopleSchema(pointer(spec, from))) || schema;
}

// peopleSchema turns a schema written for people, as an MCP server's
// requested schema is (flat: top-level properties of strings, numbers,
// booleans, single- and multi-select enums), into the form's dialect:
// each title becomes its label, each description its help, titled
// options an enum with labels. It keeps only the keywords that shape
// allows: the schema comes from outside, so no hint or binding of its
// own reaches the form. It is null for anything that is not an object
// schema with properties.
export function peopleSchema(s) {
  const obj = (x) => !!x && typeof x === "object" && !Array.isArray(x);
  if (!obj(s) || !obj(s.properties)) return null;
  const properties = Object.create(null); // a "__proto__" property stays a property
  for (const [key, p] of Object.entries(s.properties)) if (obj(p)) properties[key] = peopleProperty(p);
  if (!Object.keys(properties).length) return null;
  const required = Array.isArray(s.required) ? s.required.filter((k) => typeof k === "string" && k in properties) : [];
  return { type: "object", properties, required };
}

export const PEOPLE_KEYWORDS = ["type", "minLength", "maxLength", "format", "minimum", "maximum", "default", "minItems", "maxItems"];

export function peopleProperty(p) {
  const out = {};
  for (const k of PEOPLE_KEYWORDS) if (p[k] !== undefined) out[k] = p[k];
  const hints = {};
  if (typeof p.title === "string" && p.title.trim()) hints.label = p.title.trim();
  if (typeof p.description === "string" && p.description.trim()) hints.help = p.description.trim();
  const titled = titledOptions(p.oneOf) || titledOptions(p.anyOf);
  const plain = enumOptions(p.enum, p.enumNames);
  const pick = titled || plain;
  if (pick) {
    out.enum = pick.values;
    hints.labels = pick.labels;
    if (!out.type) out.type = "string";
  }
  if (p.type === "array" && p.items && typeof p.items === "object") {
    const items = { type: typeof p.items.type === "string" ? p.items.type : "string" };
    const many = titledOptions(p.items.anyOf) || titledOptions(p.items.oneOf) || enumOptions(p.items.enum, p.items.enumNames);
    if (many) {
      items.enum = many.values;
      items["x-ui"] = { labels: many.labels };
    }
    out.items = items;
  }
  out["x-ui"] = hints;
  return out;
}

export const pickable = (v) => typeof v === "string" || (typeof v === "number" && Number.isFinite(v));

// titledOptions reads [{const, title}] as values and their labels.
export function titledOptions(list) {
  if (!Array.isArray(list)) return null;
  const values = [];
  const labels = {};
  for (const o of list) {
    if (!o || typeof o !== "object" || !pickable(o.const)) continue;
    values.push(o.const);
    if (typeof o.title === "string" && o.title.trim()) labels[String(o.const)] = o.title.trim();
  }
  return values.length ? { values, labels } : null;
}

// enumOptions reads an enum, named by the legacy enumNames if given.
export function enumOptions(values, names) {
  if (!Array.isArray(values)) return null;
  const labels = {};
  const kept = [];
  values.forEach((v, i) => {
    if (!pickable(v)) return;
    kept.push(v);
    if (Array.isArray(names) && typeof names[i] === "string" && names[i].trim()) labels[String(v)] = names[i].trim();
  });
  return kept.length ? { values: kept, labels } : null;
}

// ui is a schema's x-ui hints, or none.
export function ui(s) {
  const x = s && s["x-ui"];
  return x && typeof x === "object" && !Array.isArray(x) ? x : {};
}

// hinted says whether a kind wrote any x-ui hint: then the spec shows
// only what its hints name.
export const hinted = (schema) => !!schema && JSON.stringify(schema).includes('"x-ui"');

export function typeOf(s) {
  if (!s || typeof s !== "object") return "any";
  if ("const" in s) return "const";
  let t = s.type;
  if (Array.isArray(t)) t = t.find((x) => x !== "null") || t[0];
  if (!t && Array.isArray(s.enum) && s.enum.length) t = typeof s.enum[0] === "number" ? "number" : typeof s.enum[0] === "boolean" ? "boolean" : "string";
  if (!t && s.properties) t = "object";
  if (!t && s.items) t = "array";
  return t || "any";
}

// bindSpec fills a schema's x-ui bind from the card's spec: a bound
// keyword (minimum, maximum, enum, maxLength…) joins the schema, a bound
// hint (minLabel, maxLabel…) its x-ui.
export function bindSpec(s, spec) {
  const hints = ui(s);
  if (!hints.bind || typeof hints.bind !== "object") return s;
  const out = { ...s, "x-ui": { ...hints } };
  for (const [k, ptr] of Object.entries(hints.bind)) {
    const v = pointer(spec, ptr);
    if (v === undefined || v === null) continue;
    if (HINT_KEYS.has(k)) out["x-ui"][k] = v;
    else out[k] = v;
  }
  return out;
}

// withOptions turns an x-ui options hint ({from: spec pointer to a list,
// value: key, label: key}) into an enum with its labels: the picks come
// from the spec.
export function withOptions(s, spec) {
  const o = ui(s).options;
  if (!o || typeof o !== "object") return s;
  const list = pointer(spec, o.from);
  if (!Array.isArray(list) || !list.length) return s;
  const labels = {};
  const values = [];
  for (const item of list) {
    const obj = item && typeof item === "object";
    const v = obj ? (o.value ? item[o.value] : undefined) : item;
    if (v === undefined || v === null || typeof v === "object") continue;
    values.push(v);
    if (obj && o.label && item[o.label] !== undefined) labels[String(v)] = String(item[o.label]);
  }
  if (!values.length) return s;
  return { ...s, enum: values, "x-ui": { ...ui(s), labels: { ...labels, ...(ui(s).labels || {}) } } };
}

export const labelsOf = (s) => (ui(s).labels && typeof ui(s).labels === "object" ? ui(s).labels : {});

