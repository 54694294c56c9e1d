// A card: its frame, its submit and decline, its errors; the cards with code of their own.
import { choicesSummary, choicesTitle, renderChoices } from "./choices.js";
import { send, updateComposer } from "./connection.js";
import { NOT_CONNECTED, announce, el, h, humanize, sentence, state, uid } from "./core.js";
import { renderGeneric } from "./generic.js";
import { identitySummary, renderIdentity } from "./identity.js";
import { OUTCOMES, summary } from "./summary.js";
import { put, turnFor } from "./turns.js";

// Cards drawn by their own code; every other kind gets the generic form.
export const CARDS = {
  choices: { capability: "choice_chips", render: renderChoices, title: choicesTitle, summary: choicesSummary },
  identity_intake: { capability: "identity_form", render: renderIdentity, title: () => "Your contact details", summary: identitySummary },
};

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
    if (existing.state !== "open") existing.setState("open");
    return;
  }
  const card = buildCard(d, rid, t);
  state.cards.set(d.interactionId, card);
  updateComposer();
  t.el.dataset.parked = "true";
  put(t, card.el);
  t.seg = null;
  const a = document.activeElement;
  const focusWasIdle = !a || a === document.body || a === el.send;
  card.el.scrollIntoView({ block: "nearest" });
  if (focusWasIdle) card.heading.focus({ preventScroll: true });
  announce("The assistant asks: " + card.heading.textContent + ". Answer the card, or decline it.");
}

export function onInvalid(m) {
  const d = (m.data && m.data.data) || {};
  const card = state.cards.get(d.interactionId) || [...state.cards.values()].find((c) => c.state === "sending");
  if (!card) return;
  card.setState("open");
  card.showErrors(d.errors || [], d.message || "Some fields need attention.");
}

export function buildCard(d, rid, turn) {
  const kind = d.kind;
  const info = state.kinds.get(kind);
  const own = CARDS[kind];
  const spec = d.spec || {};
  const headingId = uid("card-title");
  const heading = h("h2", { class: "card-title", id: headingId, tabindex: "-1" });
  const generalErr = h("p", { class: "card-error", role: "alert", hidden: true });
  const submit = h("button", { type: "submit", class: "primary" }, "Submit");
  const decline = h("button", { type: "button", class: "quiet" }, "Decline");
  const body = h("div", { class: "card-body" });
  const form = h("form", { novalidate: true, "aria-labelledby": headingId }, body, generalErr,
    h("div", { class: "card-actions" }, submit, decline));
  const status = h("p", { class: "card-status", role: "status", tabindex: "-1" });
  const reason = d.reason ? h("p", { class: "card-reason", text: "Asked " + d.reason }) : null;
  const node = h("section", { class: "card", "data-kind": kind, "data-interaction-id": d.interactionId, "data-state": "open", "aria-labelledby": headingId },
    heading, reason, form, status);

  const card = {
    id: d.interactionId, kind, rid, turn, sessionId: state.sessionId, el: node, heading, state: "open",
    toolName: (info && info.toolName) || "request_" + kind, callShown: false,
    buttons: { submit, decline }, // a kind's card may name them otherwise (link.js)
    labels: {}, // and say otherwise how it ended: {declined: "Cancelled"}
    fields: new Map(), // error field → {err, focus, mark}
    aliases: new Map(), // index in the sent values → its row's path (rowPath)
    collect: () => ({}),
    setState(s) {
      card.state = s;
      node.dataset.state = s;
      const busy = s === "sending";
      submit.disabled = busy || submit.dataset.keepDisabled === "true";
      decline.disabled = busy;
      form.setAttribute("aria-busy", busy ? "true" : "false");
    },
    clearErrors() {
      generalErr.hidden = true;
      generalErr.textContent = "";
      for (const f of card.fields.values()) f.mark("");
    },
    generalError(text, stale) {
      generalErr.textContent = text;
      generalErr.hidden = false;
      card.stale = !!stale;
    },
    // clearStale clears an error that only said the page was offline.
    clearStale() {
      if (card.stale) {
        generalErr.hidden = true;
        generalErr.textContent = "";
      }
      card.stale = false;
    },
    showErrors(errors, message) {
      card.clearErrors();
      const general = [];
      const byField = new Map();
      for (const e of errors) {
        const f = lookupField(card.fields, rowPath(card.aliases, e.field));
        if (!f) { general.push(e.field && e.field !== "values" && e.field !== "answers" ? `${e.field}: ${e.message}` : sentence(e.message)); continue; }
        if (!byField.has(f)) byField.set(f, []);
        byField.get(f).push(e.message);
      }
      for (const [f, msgs] of byField) f.mark(msgs.map(sentence).join(" "));
      card.generalError([message, ...general].filter(Boolean).join(" "));
      const first = [...card.fields.values()].find((f) => byField.has(f));
      if (first) first.focus();
    },
    close(how, text) {
      card.setState(how);
      dropDraft(card.id);
      turn.parked = false;
      delete turn.el.dataset.parked;
      updateComposer();
      if (card.tool) card.tool.resumed();
      for (const c of form.querySelectorAll("button, input, select, textarea")) c.disabled = true;
      generalErr.hidden = true;
      const label = text || card.labels[how] || { answered: "Answered", declined: "Declined", closed: "This card is closed." }[how] || how;
      status.textContent = label;
      const hadFocus = node.contains(document.activeElement) || document.activeElement === document.body;
      if (hadFocus) el.message.focus();
    },
  };
  // closeWith closes the card with its outcome's one-line summary.
  card.closeWith = (payload) => {
    const st = payload && payload.status;
    if (st === "submitted") card.close("answered", summary(kind, card.spec, payload.values));
    else if (st === "declined") card.close("declined");
    else card.close("closed", OUTCOMES[st]);
  };
  card.spec = spec && typeof spec === "object" && !Array.isArray(spec) ? spec : {};
  card.setState("open");

  if (own) {
    heading.textContent = own.title(spec);
    own.render(card, spec, body);
  } else {
    heading.textContent = humanize(kind);
    renderGeneric(card, spec, info, body);
  }

  restoreDraft(card.id, form);
  const keep = () => { if (card.state === "open") keepDraft(card.id, form); };
  form.addEventListener("input", keep);
  form.addEventListener("click", keep); // after a chip's own handler has pressed it

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    if (card.state !== "open") return;
    card.clearErrors();
    let values;
    try {
      values = card.collect();
    } catch (err) {
      card.generalError(err.message);
      return;
    }
    submitCard(card, { values });
  });
  decline.addEventListener("click", () => {
    if (card.state !== "open") return;
    card.clearErrors();
    submitCard(card, { declined: true });
  });
  return card;
}

// A card's draft, what was picked and typed, outlives a reload and a
// reload while offline: it is kept in localStorage, per card, until the
// card closes, for the newest maxDrafts cards. It is read back only into
// the same card with the same fields. A password field is never kept.
const DRAFTS_KEY = "kindkit.cards";
const maxDrafts = 20;

function draftControls(form) {
  return [...form.querySelectorAll("input:not([type=password]), textarea, select, button.chip")];
}

function readDrafts() {
  try {
    const all = JSON.parse(localStorage.getItem(DRAFTS_KEY) || "{}");
    return all && typeof all === "object" && !Array.isArray(all) ? all : {};
  } catch {
    return {};
  }
}

function writeDrafts(all) {
  try {
    const ids = Object.keys(all);
    for (const id of ids.slice(0, Math.max(0, ids.length - maxDrafts))) delete all[id];
    localStorage.setItem(DRAFTS_KEY, JSON.stringify(all));
  } catch { /* private mode: no draft is kept */ }
}

function keepDraft(id, form) {
  const all = readDrafts();
  delete all[id]; // re-added last: the newest
  all[id] = draftControls(form).map((c) =>
    c.matches("button") ? c.getAttribute("aria-pressed") === "true" : c.type === "checkbox" || c.type === "radio" ? c.checked : c.value);
  writeDrafts(all);
}

function restoreDraft(id, form) {
  const saved = readDrafts()[id];
  const controls = draftControls(form);
  if (!Array.isArray(saved) || saved.length !== controls.length) return;
  controls.forEach((c, i) => {
    const v = saved[i];
    if (c.matches("button")) c.setAttribute("aria-pressed", v === true ? "true" : "false");
    else if (c.type === "checkbox" || c.type === "radio") c.checked = v === true;
    else if (typeof v === "string") c.value = v;
  });
}

function dropDraft(id) {
  const all = readDrafts();
  if (id in all) {
    delete all[id];
    writeDrafts(all);
  }
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

// rowPath turns a path into the sent values ("a[1].b") into the path of
// the form's field (the row that was sent second), segment by segment.
export function rowPath(aliases, name) {
  let out = "";
  for (const seg of String(name ?? "").match(/\[[^\]]*\]|\.?[^.[]+/g) || []) {
    out += seg;
    if (aliases.has(out)) out = aliases.get(out);
  }
  return out;
}

// lookupField finds where an error's field belongs: the exact path, else
// its nearest parent (a.b[0].c → a.b[0] → a.b → a).
export function lookupField(fields, name) {
  let key = String(name ?? "");
  while (key) {
    if (fields.has(key)) return fields.get(key);
    const cut = Math.max(key.lastIndexOf("."), key.lastIndexOf("["));
    if (cut <= 0) break;
    key = key.slice(0, cut);
  }
  return null;
}

// errorSlot makes a field's error line and the mark function that fills
// it and flags the controls.
export function errorSlot(controls) {
  const err = h("p", { class: "field-error", id: uid("err"), hidden: true });
  const mark = (text) => {
    err.textContent = text ? text : "";
    err.hidden = !text;
    for (const c of controls()) {
      const ids = (c.getAttribute("aria-describedby") || "").split(" ").filter((x) => x && x !== err.id);
      if (text) { c.setAttribute("aria-invalid", "true"); ids.push(err.id); } else c.removeAttribute("aria-invalid");
      if (ids.length) c.setAttribute("aria-describedby", ids.join(" ")); else c.removeAttribute("aria-describedby");
    }
  };
  return { err, mark };
}

export function requiredMark() {
  return [h("span", { class: "req", "aria-hidden": "true", text: " *" }), h("span", { class: "sr-only", text: " (required)" })];
}
