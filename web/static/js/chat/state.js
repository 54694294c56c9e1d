// The chat page's elements, its state and the small helpers that touch
// them; every module of the chat imports from here, and nothing below the
// chat does.

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
  jump: document.getElementById("jump"),
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
  unacked: new Set(), // requestIds of messages sent and not yet acknowledged (stored)
  seq: 0,
  retry: 500,
  retryTimer: 0,
  historyShown: false,
};

export const nextId = (p) => `${p}-${Date.now().toString(36)}-${++state.seq}`;

export function load() {
  try { return localStorage.getItem(STORE_KEY); } catch { return null; }
}
export function save(id) {
  try { if (id) localStorage.setItem(STORE_KEY, id); else localStorage.removeItem(STORE_KEY); } catch { /* private mode */ }
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

// below is how far the log's end is under what it shows, in pixels.
const below = () => el.log.scrollHeight - el.log.scrollTop - el.log.clientHeight;

// keepScrolled runs fn and keeps the log pinned to its end if it was.
// If the person had scrolled up more than a screen, the log stays where
// they read, and Jump to latest offers the way back.
export function keepScrolled(fn) {
  const log = el.log;
  const pinned = below() < 96;
  const out = fn();
  if (pinned) log.scrollTop = log.scrollHeight;
  else if (below() > log.clientHeight) el.jump.hidden = false;
  return out;
}

// bindJump wires Jump to latest: it scrolls to the log's end and goes,
// as it goes when the person scrolls there.
export function bindJump() {
  el.log.addEventListener("scroll", () => {
    if (!el.jump.hidden && below() < 96) el.jump.hidden = true;
  }, { passive: true });
  el.jump.addEventListener("click", () => {
    el.log.scrollTop = el.log.scrollHeight;
    el.jump.hidden = true;
    el.log.focus({ preventScroll: true }); // not lost with the button
  });
}

export function append(node) {
  el.empty.hidden = true;
  keepScrolled(() => el.log.append(node));
}
