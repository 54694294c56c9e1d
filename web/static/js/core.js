// The page's elements, its state and small helpers; every other module imports from here.

export const STORE_KEY = "kindkit.conversationId";
export const params = new URLSearchParams(location.search);
export const agentId = params.get("agent") || "web";
export const token = params.get("token");

export const FRIENDLY = {
  INTERNAL_ERROR: "Something went wrong on the server. Please try again.",
  TURN_IN_PROGRESS: "The assistant is still working on your last message. Answer its card or wait for the reply, then send again.",
  SESSION_NOT_FOUND: "The session was lost. Reconnecting…",
  NO_PENDING_INTERACTION: "This card is no longer waiting for an answer.",
  INTERACTION_MISMATCH: "This card is out of date.",
  STORAGE_ERROR: "The conversation could not be read. Please try again.",
  UNSUPPORTED_ACTION: "The server does not understand this request.",
};

export const el = {
  log: document.getElementById("log"),
  empty: document.getElementById("empty"),
  status: document.getElementById("status"),
  notice: document.getElementById("notice"),
  offline: document.getElementById("offline"),
  retry: document.getElementById("retry"),
  composer: document.getElementById("composer"),
  message: document.getElementById("message"),
  send: document.getElementById("send"),
  stop: document.getElementById("stop"),
  fresh: document.getElementById("new-conversation"),
  announcer: document.getElementById("announcer"),
};

export const state = {
  ws: null,
  sessionId: null,
  conversationId: load(),
  kinds: new Map(), // name → /kinds entry
  turns: new Map(), // turn requestId → turn
  cards: new Map(), // interactionId → card
  confirms: new Map(), // confirm requestId → confirmation card
  active: null, // requestId of the running turn
  pending: new Map(), // requestId → what it was for ("create", "history", "outcomes")
  unsettled: new Set(), // ids of cards that closed without an outcome, looked up in the history
  sentElsewhere: new Map(), // message id → its bubble, for a message another tab sent
  seq: 0,
  uid: 0,
  retry: 500,
  retryTimer: 0,
  historyShown: false,
};

export function h(tag, attrs, ...kids) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid === null || kid === undefined || kid === false) continue;
    node.append(kid instanceof Node ? kid : String(kid));
  }
  return node;
}

export const uid = (p) => `${p}-${++state.uid}`;
export const nextId = (p) => `${p}-${Date.now().toString(36)}-${++state.seq}`;

export function load() {
  try { return localStorage.getItem(STORE_KEY); } catch { return null; }
}
export function save(id) {
  try { if (id) localStorage.setItem(STORE_KEY, id); else localStorage.removeItem(STORE_KEY); } catch { /* private mode */ }
}

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

export function announce(text) {
  el.announcer.textContent = "";
  setTimeout(() => { el.announcer.textContent = text; }, 30);
}

export const NOT_CONNECTED = "Not connected. Try again in a moment.";

export function readable(err) {
  if (!err) return "Something went wrong.";
  return FRIENDLY[err.code] || err.message || "Something went wrong.";
}

export function showNotice(text) {
  el.notice.textContent = text || "";
  el.notice.hidden = !text;
}

// keepScrolled runs fn and keeps the log pinned to its end if it was.
export function keepScrolled(fn) {
  const log = el.log;
  const pinned = log.scrollHeight - log.scrollTop - log.clientHeight < 96;
  const out = fn();
  if (pinned) log.scrollTop = log.scrollHeight;
  return out;
}

export function append(node) {
  el.empty.hidden = true;
  keepScrolled(() => el.log.append(node));
}
