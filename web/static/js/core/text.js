// Text for a person: keys as words, validator messages as sentences,
// long answers cut short; and a JSON pointer's value.

export function humanize(key) {
  const s = String(key).replace(/[_-]+/g, " ").replace(/([a-z0-9])([A-Z])/g, "$1 $2").trim().toLowerCase();
  return s ? s[0].toUpperCase() + s.slice(1) : String(key);
}

// PLAIN rewords the schema validator's messages, which the model reads
// too, for a person: no type names, no keyword jargon.
export const PLAIN = [
  [/^must be an integer(?: or [a-z ]+)?, not .*$/i, "Enter a whole number"],
  [/^must be a number(?: or [a-z ]+)?, not .*$/i, "Enter a number"],
  [/^must be a string(?: or [a-z ]+)?, not .*$/i, "Enter some text"],
  [/^must be a boolean(?: or [a-z ]+)?, not .*$/i, "Choose yes or no"],
  [/^must be an? (?:object|array)(?: or [a-z ]+)?, not .*$/i, "This answer is not in the expected form"],
  [/^must be one of .*$/i, "Pick one of the options"],
  [/^must match the pattern .*$/i, "This is not in the expected form"],
  [/^must be at most (\d+) characters? long.*$/i, "Use at most $1 characters"],
  [/^must be at least (\d+) characters? long.*$/i, "Use at least $1 characters"],
  [/^must be at least (-?[\d.]+)$/i, "Enter $1 or more"],
  [/^must be at most (-?[\d.]+)$/i, "Enter $1 or less"],
  [/^must have at least (\d+) (?:entry|entries).*$/i, "Give at least $1"],
  [/^must have at most (\d+) (?:entry|entries).*$/i, "Give at most $1"],
  [/^this field is required$/i, "This is required"],
];

// sentence capitalises a validator message and ends it with a period.
export function sentence(text) {
  // The validators write for the model too: say "decline" for declined=true.
  let t = String(text || "").trim().replace(/,? or declined=true/g, ", or decline the card");
  for (const [re, plain] of PLAIN) if (re.test(t)) { t = t.replace(re, plain); break; }
  if (!t) return t;
  return t[0].toUpperCase() + t.slice(1) + (/[.!?]$/.test(t) ? "" : ".");
}

export const MAX_SHOWN = 80; // a longer text answer is cut in a summary

export function clip(text) {
  const chars = [...String(text)];
  return chars.length > MAX_SHOWN ? chars.slice(0, MAX_SHOWN - 1).join("") + "…" : chars.join("");
}

// pointer resolves a JSON pointer ("/scale/min") in doc.
export function pointer(doc, ptr) {
  if (typeof ptr !== "string" || (ptr !== "" && !ptr.startsWith("/"))) return undefined;
  let v = doc;
  for (const raw of ptr ? ptr.slice(1).split("/") : []) {
    if (v === null || typeof v !== "object") return undefined;
    v = v[raw.replace(/~1/g, "/").replace(/~0/g, "~")];
  }
  return v;
}
