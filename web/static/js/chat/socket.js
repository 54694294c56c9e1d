// The socket: connecting, reconnecting, the offline banner, sending
// frames, and the session it opens. What a frame means is events.js's:
// main.js hands it in (listen), so the socket imports nothing above it.
import { OWN } from "../renderers/index.js";
import { agentId, el, nextId, state, token } from "./state.js";

// handlers are what the page does with a frame (message) and when a
// socket drops (lost); listen sets them before the first connect.
const handlers = { message() {}, lost() {} };

export function listen(h) {
  Object.assign(handlers, h);
}

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
// sent before a reload (server.ExtSharedTurns), the turns that ended
// without their reply, in the history (server.ExtEndedTurns), and the turn
// in progress as the page joins, with the words before a waiting card
// (server.ExtTurnCatchUp), the decisions on a tool call beyond approve
// and reject (server.ExtToolDecisions), and every card a step opens, at
// once, each answered on its own (server.ExtParallelAsks).
const EXTENSIONS = ["kindkit.history_cards", "kindkit.user_messages", "kindkit.shared_turns", "kindkit.ended_turns", "kindkit.turn_catchup",
  "kindkit.tool_decisions", "kindkit.parallel_asks"];

export function supports() {
  const set = new Set([...Object.values(OWN).map((c) => c.capability), ...EXTENSIONS]);
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
    try { handlers.message(m); } catch (e) { console.error("kindkit: cannot handle", m, e); }
  });
  ws.addEventListener("close", () => {
    if (state.ws !== ws) return;
    state.ws = null;
    state.sessionId = null;
    handlers.lost();
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

// reconnectNow drops the socket, if any, and opens a new one at once.
export function reconnectNow() {
  const ws = state.ws;
  state.ws = null;
  state.sessionId = null;
  if (ws) ws.close();
  connect();
}

// bindRetry wires Retry now: a new socket at once, and the wait starts
// short again.
export function bindRetry() {
  el.retry.addEventListener("click", () => {
    state.retry = 500;
    reconnectNow();
  });
}

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
