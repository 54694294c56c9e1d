// The socket: connecting, reconnecting, the offline banner, sending frames.
import { CARDS } from "./cards.js";
import { agentId, el, nextId, state, token } from "./core.js";
import { handle } from "./events.js";
import { finishTurn, reconnectNow } from "./turns.js";

export function setStatus(s, text) {
  el.status.dataset.state = s;
  el.status.textContent = text;
}

// wsURL is the socket beside the page: ws under the page's path, so the
// page and the server may be mounted under a prefix together.
export function wsURL() {
  const u = new URL("ws", location.href);
  u.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  u.search = "";
  if (token) u.searchParams.set("token", token);
  return u.href;
}

// The kindkit extensions the page uses, asked for by name in supports:
// the history's ended cards, for their summaries after a reload
// (server.ExtHistoryCards), the messages other tabs send
// (server.ExtUserMessages), Stop for a turn another tab sent or this page
// sent before a reload (server.ExtSharedTurns), and the turns that ended
// without their reply, in the history (server.ExtEndedTurns).
const EXTENSIONS = ["kindkit.history_cards", "kindkit.user_messages", "kindkit.shared_turns", "kindkit.ended_turns"];

export function supports() {
  const set = new Set([...Object.values(CARDS).map((c) => c.capability), ...EXTENSIONS]);
  for (const k of state.kinds.values()) if (k.capability) set.add(k.capability);
  return [...set];
}

export function connect() {
  clearTimeout(state.retryTimer);
  setStatus("connecting", "Connecting…");
  let ws;
  try {
    ws = new WebSocket(wsURL());
  } catch {
    scheduleReconnect();
    return;
  }
  state.ws = ws;
  ws.addEventListener("open", () => {
    if (state.ws !== ws) return;
    state.retry = 500;
    createSession();
  });
  ws.addEventListener("message", (ev) => {
    let m;
    try { m = JSON.parse(ev.data); } catch { return; }
    try { handle(m); } catch (e) { console.error("kindkit: cannot handle", m, e); }
  });
  ws.addEventListener("close", () => {
    if (state.ws !== ws) return;
    state.ws = null;
    state.sessionId = null;
    connectionLost();
    scheduleReconnect();
  });
}

export function scheduleReconnect() {
  setStatus("offline", "Offline — reconnecting…");
  el.offline.hidden = false;
  clearTimeout(state.retryTimer);
  state.retryTimer = setTimeout(connect, state.retry);
  state.retry = Math.min(state.retry * 2, 10000);
}

// Retry now: a new socket at once, and the wait starts short again.
el.retry.addEventListener("click", () => {
  state.retry = 500;
  reconnectNow();
});

export function send(frame) {
  if (!state.ws || state.ws.readyState !== WebSocket.OPEN) return false;
  state.ws.send(JSON.stringify(frame));
  return true;
}

export function createSession() {
  const f = { action: "create_conversation_session", requestId: nextId("create"), agentId, supports: supports(), keepTurns: true };
  if (state.conversationId) f.conversationId = state.conversationId;
  state.pending.set(f.requestId, "create");
  send(f);
}

// connectionLost ends what the old socket was streaming; parked cards
// stay open, since the server keeps their park and shows them again.
export function connectionLost() {
  for (const t of state.turns.values()) {
    if (t.done || t.parked) continue;
    finishTurn(t, "Connection lost — this reply may be incomplete.");
  }
  for (const c of state.cards.values()) {
    if (c.state === "sending") c.setState("open");
  }
  state.active = null;
  updateComposer();
}

// openCard is the card the active turn waits on, if any: a message then
// answers it in words (send_message's withdrawInteraction).
export function openCard() {
  const t = state.active && state.turns.get(state.active);
  if (!t || !t.parked) return undefined;
  return [...state.cards.values()].find((c) => c.turn === t && c.state === "open");
}

export function updateComposer() {
  const online = !!state.sessionId;
  const turn = state.active && state.turns.get(state.active);
  const card = openCard();
  const running = !!turn && !turn.parked && !turn.done;
  el.send.disabled = !online || (!!state.active && !card);
  el.stop.hidden = !running;
  el.stop.disabled = !online;
  // Short enough for a phone's composer: the card says what it asks.
  el.message.placeholder = card ? "Or answer in words…" : "Write a message…";
  if (!online) el.send.title = "Not connected";
  else if (state.active && !card) el.send.title = "Wait for the reply, or stop it";
  else el.send.removeAttribute("title");
}

el.stop.addEventListener("click", () => {
  if (!state.active) return;
  // Named by its requestId: the server stops it wherever it runs.
  send({ action: "cancel", requestId: state.active });
});
