// The composer's state: whether Send and Stop may be used, and the card a
// message would answer in words.
import { isLink } from "../renderers/summary.js";
import { send } from "./socket.js";
import { el, state } from "./state.js";

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
  // A write confirmation is answered by its buttons alone, not in words:
  // Stop, while it waits, is how the person says "not that" and goes on.
  const confirming = !!turn && !turn.done && !!turn.confirm && turn.confirm.state === "open";
  el.send.disabled = !online || (!!state.active && !card);
  el.stop.hidden = !running && !confirming;
  el.stop.disabled = !online;
  // Short enough for a phone's composer: the card says what it asks. A
  // link is opened, not answered in words.
  el.message.placeholder = card && !isLink(card.kind, card.spec, card.info) ? "Or answer in words…" : "Write a message…";
  if (!online) el.send.title = "Not connected";
  else if (state.active && !card) el.send.title = "Wait for the reply, or stop it";
  else el.send.removeAttribute("title");
}

// bindStop wires Stop: the active turn, named by its requestId, which the
// server stops wherever it runs; a turn parked on a write confirmation
// has its park cancelled, and the call is not made.
export function bindStop() {
  el.stop.addEventListener("click", () => {
    if (!state.active) return;
    send({ action: "cancel", requestId: state.active });
  });
}

export function autosize() {
  el.message.style.height = "auto";
  el.message.style.height = Math.min(el.message.scrollHeight, 160) + "px";
}

// A draft outlives a reload, and a reload while offline: it is kept in
// this tab's sessionStorage until it is sent. Another tab, which may be
// writing something else to the same conversation, starts empty.
export const DRAFT_KEY = "kindkit.draft";

export function keepDraft() {
  try {
    if (el.message.value.trim()) sessionStorage.setItem(DRAFT_KEY, el.message.value);
    else sessionStorage.removeItem(DRAFT_KEY);
  } catch { /* private mode: no draft is kept */ }
}
