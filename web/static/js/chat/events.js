// The server's events, the session and the history.
import { pastCard } from "../card/past.js";
import { h, uid } from "../core/dom.js";
import { onInteraction, onInvalid } from "./cards.js";
import { updateComposer } from "./composer.js";
import { onConfirmation, onConfirmationInvalid } from "./confirm.js";
import { send, setStatus } from "./socket.js";
import { append, el, nextId, save, showNotice, state } from "./state.js";
import { copyButton, onCancelled, onChunk, onError, onEventual, onRunning, onToken, reply, retryButton, settleFromHistory, watched } from "./turns.js";

export function handle(m) {
  switch (m.type) {
    case "immediate_response": return onImmediate(m);
    case "stream_token": return onToken(m);
    case "stream_chunk": return onChunk(m);
    case "interaction_required": return onInteraction(m);
    case "interaction_invalid": return onInvalid(m);
    case "write_confirmation_required": return onConfirmation(m);
    case "confirmation_invalid": return onConfirmationInvalid(m);
    case "eventual_response": return onEventual(m);
    case "cancelled": return onCancelled(m);
    case "user_message": return onUserMessage(m);
    case "turn_running": return onRunning(m);
    case "error": return onError(m);
    default: return undefined; // pong, keepalive, stream_preamble, stream_reasoning…
  }
}

export function onImmediate(m) {
  const what = state.pending.get(m.requestId);
  const d = m.data || {};
  if (what === "create") {
    state.pending.delete(m.requestId);
    const resumed = !!state.conversationId && state.conversationId === d.conversationId;
    if (state.conversationId && !resumed) {
      addNote("The previous conversation is no longer available; this is a new one.");
    }
    state.sessionId = d.sessionId;
    state.conversationId = d.conversationId;
    save(d.conversationId);
    for (const c of state.cards.values()) c.sessionId = d.sessionId;
    setStatus("online", "Online");
    el.offline.hidden = true;
    showNotice("");
    // What failed for want of a connection can be tried again now.
    for (const c of state.cards.values()) c.clearStale();
    for (const t of state.turns.values()) if (t.confirm) t.confirm.clearStale();
    updateComposer();
    if (resumed && !state.historyShown) loadHistory();
    state.historyShown = true;
    return;
  }
  if (what === "history") {
    state.pending.delete(m.requestId);
    showHistory(d.messages || []);
    return;
  }
  if (what === "outcomes") {
    state.pending.delete(m.requestId);
    settleFromHistory(Array.isArray(d.messages) ? d.messages : []);
    return;
  }
  if (what === "confirm") {
    state.pending.delete(m.requestId);
    const c = state.confirms.get(m.requestId);
    const said = { edit: "Approved with your changes", respond: "Answered instead" }[c && c.decided] || (d.approved ? "Approved" : "Rejected");
    if (c) c.close(`${said}: ${c.toolName}`);
    return;
  }
  if (state.unacked.delete(m.requestId)) {
    // The message is stored: its reply is owed.
    const t = state.turns.get(m.requestId);
    if (t && t.bubble) t.bubble.classList.remove("sending");
    return;
  }
  if (m.status === 200 && d.interactionId) {
    const card = state.cards.get(d.interactionId);
    if (card) card.close(d.declined ? "declined" : "answered", d.declined ? undefined : card.summary(card.sent));
  }
}

// onUserMessage shows a message another tab (or a page on another server)
// sent to this conversation, before the reply to it streams in. A page
// that loads its history later finds it there, and shows it once.
function onUserMessage(m) {
  const msg = (m.data && m.data.message) || {};
  if (!msg.id || state.sentElsewhere.has(msg.id)) return;
  const bubble = userBubble((msg.content && msg.content.text) || "");
  state.sentElsewhere.set(msg.id, bubble);
  append(bubble);
  const t = watched(m.requestId); // its reply comes next: this tab waits for it
  if (t) t.asked = (msg.content && msg.content.text) || "";
}

export function loadHistory() {
  const rid = nextId("history");
  state.pending.set(rid, "history");
  send({ action: "get_conversation_messages", requestId: rid, sessionId: state.sessionId, limit: 50 });
}

// showHistory puts the stored messages (newest first on the wire) above
// whatever this page already shows.
// A user message carries the cards its turn raised and that ended (a
// kindkit extension): they are drawn as their summaries, at the start of
// the turn's reply.
export function showHistory(messages) {
  if (!messages.length) return;
  const box = h("div", { class: "history" });
  let cards = [];
  const flush = () => {
    if (cards.length) box.append(h("article", { class: "msg assistant", "aria-label": "Assistant" }, cards.map((c) => c.node)));
    cards = [];
  };
  let asked = ""; // the last message the person wrote
  for (const msg of [...messages].reverse()) {
    const text = (msg.content && msg.content.text) || "";
    if (msg.direction === "inbound") {
      flush();
      const live = state.sentElsewhere.get(msg.id);
      if (live) live.remove(); // the history shows it, in its place
      box.append(userBubble(text));
      asked = text;
      cards = (Array.isArray(msg.interactions) ? msg.interactions : [])
        .map((c) => ({ node: pastCard(c, state.kinds), at: c && Number.isInteger(c.replyOffset) ? c.replyOffset : null }))
        .filter((c) => c.node);
    } else if (msg.ended) {
      // A turn that ended without its reply (kindkit.ended_turns): what it
      // had said, how it ended, and the message to send again.
      const failed = msg.ended === "failed";
      box.append(h("article", { class: "msg assistant", "aria-label": "Assistant" }, placed(cards, text),
        h("p", { class: failed ? "turn-error" : "turn-note", text: failed ? "This reply failed." : "Stopped." }),
        asked ? retryButton(asked) : null));
      cards = [];
    } else {
      box.append(h("article", { class: "msg assistant", "aria-label": "Assistant" }, placed(cards, text), text ? copyButton(text) : null));
      cards = [];
    }
  }
  flush();
  el.empty.hidden = true;
  el.log.insertBefore(box, el.empty.nextSibling);
  el.log.scrollTop = el.log.scrollHeight;
}

// userBubble is a message the person wrote. A long one (a pasted log, a
// page of text) is shown folded, its first lines and a button to unfold.
// placed lays a turn's reply out with its cards where they were shown:
// the words said before a card above it (its replyOffset, the place in
// the reply's text), the rest after it. A card without one (history from
// before kindkit kept it) comes first.
function placed(cards, text) {
  const out = cards.filter((c) => c.at === null).map((c) => c.node);
  let from = 0;
  for (const c of cards.filter((c) => c.at !== null).sort((a, b) => a.at - b.at)) {
    const at = Math.min(Math.max(c.at, from), text.length);
    if (text.slice(from, at).trim()) out.push(reply(text.slice(from, at).trim()));
    out.push(c.node);
    from = at;
  }
  const rest = text.slice(from).trim();
  if (rest) out.push(reply(rest));
  return out;
}

export function userBubble(text) {
  const body = h("p", { class: "text", text, dir: "auto" });
  const node = h("article", { class: "msg user", "aria-label": "You" }, body);
  if (text.split("\n").length <= foldLines && text.length <= foldChars) return node;
  body.id = uid("said");
  node.classList.add("folded");
  const toggle = h("button", { type: "button", class: "unfold quiet", "aria-expanded": "false", "aria-controls": body.id, text: "Show all" });
  toggle.addEventListener("click", () => {
    const folded = node.classList.toggle("folded");
    toggle.setAttribute("aria-expanded", folded ? "false" : "true");
    toggle.textContent = folded ? "Show all" : "Show less";
  });
  node.append(toggle);
  return node;
}

const foldLines = 12;
const foldChars = 1200;

export function addNote(text) {
  append(h("p", { class: "note", text }));
}
