// A turn's bubble: streamed Markdown, tool lines, the end of a turn.
import { h } from "../core/dom.js";
import { OWN } from "../renderers/index.js";
import { autosize, keepDraft, updateComposer } from "./composer.js";
import { reconnectNow, send } from "./socket.js";
import { announce, append, el, keepScrolled, nextId, readable, showNotice, state } from "./state.js";

export function turnFor(rid) {
  let t = state.turns.get(rid);
  if (t) return t;
  const node = h("article", { class: "msg assistant", "aria-label": "Assistant", "data-request-id": rid });
  const typing = h("p", { class: "typing", "aria-label": "The assistant is writing" }, h("span"), h("span"), h("span"));
  node.append(typing);
  t = { rid, el: node, typing, seg: null, text: "", done: false, parked: false, tools: [] };
  state.turns.set(rid, t);
  append(node);
  return t;
}

// put adds node to the turn's bubble, before the typing dots.
export function put(t, node) {
  keepScrolled(() => {
    if (t.typing.parentNode === t.el) t.el.insertBefore(node, t.typing);
    else t.el.append(node);
  });
}

// watched is the turn of an event this tab did not ask for: another tab's,
// or one the server resumed elsewhere. It is shown as it streams.
// A conversation runs one turn at a time, so while one runs, whoever sent
// it, this tab waits for it and may stop it (kindkit.shared_turns).
export function watched(rid) {
  if (!rid || state.pending.has(rid)) return undefined;
  const t = state.turns.get(rid) || turnFor(rid);
  if (!t.done && !state.active) {
    state.active = rid;
    updateComposer();
  }
  return t;
}

// onRunning is the turn in progress as the page joins
// (kindkit.turn_catchup): it runs, here or on another server, or is owed
// its reply after its server died and waits to be taken over. It is shown
// running, with Stop, and what it said so far follows as tokens: a bubble
// the page had for it, cut short by the lost connection, is written anew,
// keeping its cards and tool lines.
export function onRunning(m) {
  const rid = m.requestId;
  const old = rid && state.turns.get(rid);
  if (old) {
    for (const node of old.el.querySelectorAll(":scope > .text, :scope > .turn-note, :scope > .turn-error, :scope > .copy, :scope > .retry")) node.remove();
    Object.assign(old, { done: false, parked: false, seg: null, text: "" });
    old.el.append(old.typing);
  }
  if (watched(rid)) updateComposer();
}

// reply is a bubble's block of reply text, drawn from its Markdown.
export function reply(text) {
  const node = h("div", { class: "text md", dir: "auto" });
  node.md = text;
  drawMarkdown(node);
  return node;
}

// drawMarkdown renders node.md with marked and sanitises the HTML with
// DOMPurify (links only to http(s) and mailto, opening in a new tab):
// nothing a model writes runs as HTML. Without the libraries it is text.
export function drawMarkdown(node) {
  if (!window.marked || !window.DOMPurify) {
    node.textContent = node.md;
    return;
  }
  const html = window.marked.parse(node.md, { gfm: true, breaks: true, async: false });
  node.innerHTML = window.DOMPurify.sanitize(html, { ALLOWED_URI_REGEXP: /^(?:https?:|mailto:|#)/i, FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select"] });
  // Each block takes the direction of its own text: a Hebrew paragraph in
  // an English reply reads right to left.
  for (const b of node.querySelectorAll("p, li, h1, h2, h3, h4, h5, h6, blockquote, th, td")) b.setAttribute("dir", "auto");
  // What scrolls sideways (a wide code block, a table) is reachable by
  // keyboard; a table scrolls rather than breaking its words.
  // A code block has a copy of its own: what a reply's code says is what
  // people copy most.
  // A pre of no role may not be named: a named region is what it is.
  for (const pre of node.querySelectorAll("pre")) {
    pre.setAttribute("tabindex", "0");
    pre.setAttribute("role", "region");
    pre.setAttribute("aria-label", "Code");
    pre.after(copyButton(pre.textContent, "Copy code block", "Copy code"));
  }
  for (const table of node.querySelectorAll("table")) {
    const wrap = h("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-label": "Table" });
    table.replaceWith(wrap);
    wrap.append(table);
  }
}

// bindMarkdown makes every sanitised link open in a new tab that cannot
// reach back into this page.
export function bindMarkdown() {
  if (!window.DOMPurify) return;
  window.DOMPurify.addHook("afterSanitizeAttributes", (node) => {
    if (node.tagName === "A" && node.hasAttribute("href")) {
      node.setAttribute("target", "_blank");
      node.setAttribute("rel", "noopener noreferrer");
    }
  });
}

export function onToken(m) {
  const t = watched(m.requestId);
  if (!t || t.done) return;
  const tok = m.token ?? (m.data && m.data.token) ?? "";
  if (!tok) return;
  let step = false;
  if (!t.seg || t.seg.nextSibling !== t.typing) {
    t.seg = reply("");
    put(t, t.seg);
    step = true;
  }
  t.seg.md += tok;
  keepScrolled(() => drawMarkdown(t.seg));
  // Words after a card or a tool's line are the model's next step: what
  // Copy copies keeps them a block of their own, as the history does.
  t.text = step ? joinSteps(t.text, tok) : t.text + tok;
}

// joinSteps appends a step's text to the reply's so far, as the server's
// agent.JoinSteps makes a turn's reply.
export function joinSteps(before, step) {
  if (!before || !step || before.endsWith("\n\n") || step.startsWith("\n")) return before + step;
  return before + (before.endsWith("\n") ? "\n" : "\n\n") + step;
}

// plumbing tells the tools whose lines the transcript hides: a kind's
// raise tool and the conversational submit, whose card (or words) is what
// the person sees.
export function plumbing(name) {
  if (name === "submit_interaction") return true;
  for (const k of state.kinds.values()) if ((k.toolName || "request_" + k.name) === name) return true;
  return Object.keys(OWN).some((k) => "request_" + k === name);
}

export function onChunk(m) {
  const t = watched(m.requestId);
  if (!t || t.done) return;
  const raw = (m.data && m.data.state && m.data.state.rawResponse) || {};
  const name = m.node || (m.data && m.data.node) || "tool";
  if (raw.toolCall) {
    const tool = toolLine(name, raw.toolCall.arguments);
    t.tools.push(tool);
    // A raise tool's call arrives after its card: show it above the card.
    const card = [...state.cards.values(), ...(t.confirm ? [t.confirm] : [])]
      .find((c) => c.turn === t && c.toolName === name && !c.callShown);
    if (card) {
      card.callShown = true;
      if (card.state === "open" || card.state === "sending") tool.waiting();
      card.tool = tool;
      if (card.showArgs) card.showArgs(raw.toolCall.arguments);
      keepScrolled(() => t.el.insertBefore(tool.el, card.el));
    } else {
      put(t, tool.el);
    }
  } else if (raw.toolResult) {
    const r = raw.toolResult;
    let tool = [...t.tools].reverse().find((x) => x.name === name && !x.finished);
    if (!tool) {
      tool = toolLine(name, undefined);
      t.tools.push(tool);
      put(t, tool.el);
    }
    tool.finish(r.result, r.isError);
    settleCards(t, r.result, tool);
  }
}

// settleCards closes a turn's cards that are still open once the turn
// runs on: they were answered (here, in another tab, or by the deadline).
// A host tool's Ask does not end in a payload on the wire (the tool's own
// result follows it): its outcome is looked up in the history.
export function settleCards(t, result, tool) {
  let payload = {};
  try { payload = JSON.parse(result) || {}; } catch { /* not a payload */ }
  if (!payload || typeof payload !== "object") payload = {};
  const unknown = [];
  for (const c of state.cards.values()) {
    if (c.turn !== t) continue;
    if (c.state === "open" || c.state === "sending" || c.state === "waiting") { // waiting: its addressee answered it elsewhere
      c.closeWith(payload);
      if (!payload.status) unknown.push(c.id);
    } else if (c.state === "answered" && c.tool === tool && payload.status === "submitted") c.closeWith(payload); // the values as the server kept them
  }
  if (unknown.length) askOutcomes(unknown);
}

// askOutcomes reads the newest history page for the outcomes of cards
// that closed without one; settleFromHistory applies them.
function askOutcomes(ids) {
  const rid = nextId("outcomes");
  if (!send({ action: "get_conversation_messages", requestId: rid, sessionId: state.sessionId, limit: 10 })) return;
  state.pending.set(rid, "outcomes");
  for (const id of ids) state.unsettled.add(id);
}

export function settleFromHistory(messages) {
  for (const m of messages) {
    for (const c of Array.isArray(m.interactions) ? m.interactions : []) {
      const card = c && state.unsettled.has(c.interactionId) ? state.cards.get(c.interactionId) : null;
      if (!card || !c.outcome || typeof c.outcome !== "object") continue;
      state.unsettled.delete(c.interactionId);
      card.closeWith(c.outcome);
    }
  }
}

export function toolLine(name, args) {
  const label = h("span", { class: "tool-state", text: "running" });
  const hidden = plumbing(name); // kept in the page, not shown
  const body = h("div", { class: "tool-body" });
  if (args !== undefined) body.append(h("p", { class: "tool-h", text: "Arguments" }), h("pre", { text: JSON.stringify(args, null, 2) }));
  const node = h("details", { class: "tool", "data-tool": name, "data-state": "running", hidden },
    h("summary", {}, h("span", { class: "tool-icon", "aria-hidden": "true", text: "⚙" }), " ", h("span", { class: "tool-name", text: name }), " · ", label),
    body);
  const tool = {
    name, el: node, finished: false,
    waiting() {
      node.dataset.state = "waiting";
      label.textContent = "waiting for your answer";
    },
    resumed() {
      if (node.dataset.state !== "waiting") return;
      node.dataset.state = "running";
      label.textContent = "running";
    },
    finish(result, isError) {
      tool.finished = true;
      node.dataset.state = isError ? "failed" : "done";
      label.textContent = isError ? "failed" : "done";
      let shown = result;
      try { shown = JSON.stringify(JSON.parse(result), null, 2); } catch { /* plain text */ }
      body.append(h("p", { class: "tool-h", text: "Result" }), h("pre", { text: shown ?? "" }));
    },
  };
  return tool;
}

// retryButton sends text again, as if the person wrote it once more; the
// composer's rules hold (not while a turn runs).
export function retryButton(text) {
  const b = h("button", { type: "button", class: "retry quiet", text: "Try again" });
  b.addEventListener("click", () => {
    el.message.value = text;
    el.composer.requestSubmit();
  });
  return b;
}

// copyButton copies text: a finished reply's, as written (its Markdown),
// or a code block's.
export function copyButton(text, label = "Copy the reply", shown = "Copy") {
  const b = h("button", { type: "button", class: "copy quiet", "aria-label": label, text: shown });
  b.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text);
      b.textContent = "Copied";
    } catch {
      b.textContent = "Could not copy";
    }
    setTimeout(() => { b.textContent = shown; }, 2000);
  });
  return b;
}

export function finishTurn(t, note, isError) {
  if (t.done) return;
  t.done = true;
  t.parked = false;
  t.typing.remove();
  if (note) t.el.append(h("p", { class: isError ? "turn-error" : "turn-note", role: isError ? "alert" : null, text: note }));
  for (const c of state.cards.values()) {
    if (c.turn === t && (c.state === "open" || c.state === "sending")) c.close("closed");
  }
  if (state.active === t.rid) state.active = null;
  updateComposer();
}

export function onEventual(m) {
  const t = watched(m.requestId);
  if (!t) return;
  const parts = (m.data && m.data.data && m.data.data.response && m.data.data.response.responseParts) || [];
  const full = parts.join("");
  if (!t.text && full) {
    put(t, reply(full));
    t.text = full;
  }
  showSources(t, (m.data && m.data.data && m.data.data.citations) || []);
  if (t.text) t.el.append(copyButton(t.text));
  finishTurn(t);
  if (t.text) announce("Assistant: " + t.text.slice(0, 400));
}

// showSources lists the documents the reply drew on. A citation that
// shares no word with the message (score 0) only fills a place, so it is
// not shown; a link is only made for an http(s) address.
export function showSources(t, citations) {
  const used = citations.filter((c) => c && c.title && c.score > 0);
  if (!used.length) return;
  const items = used.map((c, i) => {
    const attrs = { title: c.snippet || null };
    const name = /^https?:\/\//.test(c.url || "")
      ? h("a", { ...attrs, href: c.url, target: "_blank", rel: "noopener noreferrer" }, c.title)
      : h("span", attrs, c.title);
    return [i ? ", " : "", name];
  });
  put(t, h("p", { class: "sources" }, "Sources: ", items));
}

export function onCancelled(m) {
  const t = state.turns.get(m.requestId);
  if (!t) return;
  const inWords = [...state.cards.values()].find((c) => c.turn === t && c.inWords);
  if (inWords) {
    inWords.close("closed", "Answered in words.");
    finishTurn(t);
    return;
  }
  // A card that waited was stopped, or withdrawn by a message from
  // another tab: the history says which.
  const open = [...state.cards.values()].filter((c) => c.turn === t && (c.state === "open" || c.state === "sending"));
  for (const c of open) c.close("closed");
  if (open.length) askOutcomes(open.map((c) => c.id));
  if (t.confirm && t.confirm.state === "open") t.confirm.close("This card is closed.");
  finishTurn(t, "Stopped.");
  if (t.asked && !open.length) t.el.append(retryButton(t.asked)); // stopped mid-reply: ask again
}

export function onError(m) {
  const err = m.error || (m.data && m.data.error) || {};
  const rid = m.requestId;
  const what = rid ? state.pending.get(rid) : undefined;
  if (what) state.pending.delete(rid);
  if (what === "create") {
    showNotice("Could not start the conversation: " + readable(err));
    return;
  }
  if (what === "history" || what === "outcomes") return; // the history is a nicety
  if (what === "confirm") {
    const c = state.confirms.get(rid);
    if (c) c.fail(readable(err));
    return;
  }
  const card = [...state.cards.values()].find((c) => c.state === "sending" && c.rid === rid);
  if (card) {
    if (err.code === "NO_PENDING_INTERACTION" || err.code === "INTERACTION_MISMATCH") {
      card.close("closed", readable(err));
      if (card.turn && !card.turn.done && state.active === card.turn.rid) {
        state.active = null;
        updateComposer();
      }
    } else {
      card.setState("open");
      card.generalError(readable(err));
    }
    return;
  }
  const t = rid && state.turns.get(rid);
  if (t && state.unacked.delete(rid)) {
    refused(t, readable(err));
    if (err.code === "SESSION_NOT_FOUND") reconnectNow();
    return;
  }
  if (t && !t.done) {
    finishTurn(t, readable(err), true);
    if (t.asked) t.el.append(retryButton(t.asked)); // as the history offers it
    if (err.code === "SESSION_NOT_FOUND") reconnectNow();
    return;
  }
  showNotice(readable(err));
}

// refused takes back a message the server did not store (another turn
// runs, a bound, a lost session): its bubble and its turn go, its text is
// back in the composer with the reason above it, and what it would have
// answered in words is open again.
export function refused(t, reason) {
  t.bubble.remove();
  t.el.remove();
  state.turns.delete(t.rid);
  if (t.card) t.card.inWords = false;
  if (state.active === t.rid) state.active = t.before && state.turns.has(t.before) ? t.before : null;
  const typed = el.message.value.trim();
  el.message.value = !typed || typed === t.asked ? t.asked : t.asked + "\n" + el.message.value;
  keepDraft();
  autosize();
  showNotice(reason);
  updateComposer();
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
