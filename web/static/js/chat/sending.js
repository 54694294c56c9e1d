// The composer: sending a message, answering a card in words, a new conversation.
import { autosize, DRAFT_KEY, keepDraft, openCard, updateComposer } from "./composer.js";
import { userBubble } from "./events.js";
import { reconnectNow, send } from "./socket.js";
import { append, el, nextId, save, showNotice, state } from "./state.js";
import { turnFor } from "./turns.js";

// bindComposer wires the composer, the draft it keeps, and New
// conversation.
export function bindComposer() {
  el.composer.addEventListener("submit", (e) => {
    e.preventDefault();
    const text = el.message.value.trim();
    const card = openCard();
    if (!text || !state.sessionId || (state.active && !card)) return;
    const rid = nextId("msg");
    const frame = { action: "send_message", requestId: rid, sessionId: state.sessionId, message: text, stream: true };
    if (card) frame.withdrawInteraction = card.id;
    if (!send(frame)) return;
    if (card) card.inWords = true;
    const bubble = userBubble(text);
    bubble.classList.add("sending"); // until the server has stored it
    append(bubble);
    // What was just sent is in view, wherever the person had scrolled to.
    el.log.scrollTop = el.log.scrollHeight;
    // Until its ack the message may be refused: then it goes back to the
    // composer (refused), as if never sent.
    state.unacked.add(rid);
    Object.assign(turnFor(rid), { asked: text, bubble, card, before: state.active });
    state.active = rid;
    el.message.value = "";
    keepDraft();
    autosize();
    updateComposer();
  });

  el.message.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      el.composer.requestSubmit();
    }
  });

  el.fresh.addEventListener("blur", disarmFresh);
  el.message.addEventListener("input", () => {
    keepDraft();
    autosize();
  });

  // The draft kept before a reload is back in the composer.
  try {
    let draft = sessionStorage.getItem(DRAFT_KEY);
    // An older page kept it in localStorage, for every tab: the first tab
    // to load takes it.
    const shared = localStorage.getItem(DRAFT_KEY);
    if (shared !== null) {
      localStorage.removeItem(DRAFT_KEY);
      if (!draft) sessionStorage.setItem(DRAFT_KEY, (draft = shared));
    }
    if (draft && !el.message.value) {
      el.message.value = draft;
      autosize();
    }
  } catch { /* private mode */ }

  // New conversation asks once more before it clears the view: a stray
  // click or Enter on the focused button would otherwise lose what is shown.
  el.fresh.addEventListener("click", () => {
    if (el.log.querySelector(".msg") && !freshArmed) {
      el.fresh.textContent = "Start over? Click again";
      freshArmed = setTimeout(disarmFresh, 4000);
      return;
    }
    disarmFresh();
    save(null);
    state.conversationId = null;
    state.turns.clear();
    state.cards.clear();
    state.confirms.clear();
    state.active = null;
    state.historyShown = true;
    for (const node of [...el.log.children]) if (node !== el.empty) node.remove();
    el.empty.hidden = false;
    showNotice("");
    reconnectNow();
    el.message.focus();
  });
}

function disarmFresh() {
  clearTimeout(freshArmed);
  freshArmed = 0;
  el.fresh.textContent = "New conversation";
}

let freshArmed = 0; // New conversation's second click is awaited till this timer fires
