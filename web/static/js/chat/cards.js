// A kind's card in the chat: opened by interaction_required inside its
// turn's bubble, answered with submit_interaction, told its errors by
// interaction_invalid.
import { makeCard } from "../card/card.js";
import { h } from "../core/dom.js";
import { updateComposer } from "./composer.js";
import { send } from "./socket.js";
import { NOT_CONNECTED, announce, el, state } from "./state.js";
import { put, turnFor } from "./turns.js";

export function onInteraction(m) {
  const d = (m.data && m.data.data) || {};
  if (!d.interactionId) return;
  const rid = m.requestId;
  const existing = state.cards.get(d.interactionId);
  const t = turnFor(rid);
  t.parked = true;
  t.done = false;
  state.active = rid;
  updateComposer();
  if (existing) {
    // The same card again, after a reconnect: keep what was typed.
    existing.rid = rid;
    existing.sessionId = state.sessionId;
    if (d.waitingFor) existing.waitFor(d.waitingFor);
    else if (existing.state !== "open") existing.setState("open");
    countLeft(t);
    return;
  }
  // Several cards of one step come at once (kindkit.parallel_asks): the
  // first keeps the focus, and the turn says how many are left.
  const others = openCards(t).length;
  const card = chatCard(d, rid, t);
  // Addressed to someone else: shown, not answerable here.
  if (d.waitingFor) card.waitFor(d.waitingFor);
  state.cards.set(d.interactionId, card);
  // A host tool's Ask (an MCP server's elicitation) comes while its tool
  // runs: the tool waits for the card, and runs on once it is answered.
  const running = [...t.tools].reverse().find((x) => !x.finished);
  if (running) {
    running.waiting();
    card.tool = running;
  }
  updateComposer();
  t.el.dataset.parked = "true";
  put(t, card.el);
  t.seg = null;
  countLeft(t);
  const a = document.activeElement;
  const focusWasIdle = !a || a === document.body || a === el.send;
  if (others > 0) {
    announce("The assistant asks " + (others + 1) + " questions at once; answer each in any order.");
    return;
  }
  card.el.scrollIntoView({ block: "nearest" });
  if (focusWasIdle) card.heading.focus({ preventScroll: true });
  announce(d.waitingFor ? `The assistant asks ${d.waitingFor}: ${card.heading.textContent}.`
    : "The assistant asks: " + card.heading.textContent + ". Answer the card, or decline it.");
}

// openCards are turn t's cards that still wait for an answer.
function openCards(t) {
  return [...state.cards.values()].filter((c) => c.turn === t && (c.state === "open" || c.state === "sending"));
}

// countLeft says, in a turn that showed several cards at once, how many
// of them still wait for an answer; it goes with the last.
function countLeft(t) {
  const left = openCards(t).length;
  t.cardsAsked = Math.max(t.cardsAsked || 0, left);
  if (t.cardsAsked < 2) return;
  if (!t.left) {
    t.left = h("p", { class: "cards-left", role: "status" });
    t.el.insertBefore(t.left, openCards(t)[0].el);
  }
  t.left.hidden = left === 0;
  t.left.dataset.left = String(left);
  t.left.textContent = `${left} of ${t.cardsAsked} questions left to answer`;
  if (left === 0) {
    t.cardsAsked = 0; // the next step's cards count anew
    t.left = null;
  }
}

export function onInvalid(m) {
  const d = (m.data && m.data.data) || {};
  const card = state.cards.get(d.interactionId) || [...state.cards.values()].find((c) => c.state === "sending");
  if (!card) return;
  card.setState("open");
  card.showErrors(d.errors || [], d.message || "Some fields need attention.");
}

// chatCard is the card for an interaction_required's data d, in turn t
// (asked by request rid); what the chat keeps of it rides on the card.
function chatCard(d, rid, t) {
  const info = state.kinds.get(d.kind);
  const card = makeCard(d.kind, d.spec || {}, {
    id: d.interactionId, reason: d.reason, info,
    onSubmit: (values) => submitCard(card, { values }),
    onDecline: () => submitCard(card, { declined: true }),
    onClose(how, hadFocus) {
      const left = openCards(t);
      countLeft(t);
      if (card.tool) card.tool.resumed();
      if (left.length > 0) {
        // Another card of the step still waits: the turn stays parked.
        if (hadFocus) left[0].heading.focus();
        return;
      }
      t.parked = false;
      delete t.el.dataset.parked;
      updateComposer();
      if (hadFocus) el.message.focus();
    },
  });
  Object.assign(card, {
    rid, turn: t, sessionId: state.sessionId,
    toolName: (info && info.toolName) || "request_" + d.kind, callShown: false,
  });
  return card;
}

export function submitCard(card, extra) {
  card.sent = extra.values;
  const frame = { action: "submit_interaction", requestId: card.rid, sessionId: state.sessionId || card.sessionId, interactionId: card.id, kind: card.kind, ...extra };
  if (!state.sessionId || !send(frame)) {
    card.generalError(NOT_CONNECTED, true);
    return;
  }
  card.setState("sending");
}
