// A card's life around a renderer: open, sending, invalid (its errors
// shown by field), and ended (answered, declined or closed, with a one-
// line summary). Whoever uses a card says what a submit and a decline do
// and hears when it closes; the card knows no socket and no turn.
import { h, uid } from "../core/dom.js";
import { sentence } from "../core/text.js";
import { draw } from "../renderers/index.js";
import { OUTCOMES, summary } from "../renderers/summary.js";

// makeCard draws a card of kind for spec. opts:
//   id        the card's id (its interactionId): its draft is kept by it
//   reason    why it is asked, shown under the heading
//   info      the kind's /kinds entry
//   values    the values answered earlier, drawn in the fields
//   onSubmit  called with the values when the person submits them
//   onDecline called when the person declines
//   onClose   called with (how, hadFocus) once the card has closed
export function makeCard(kind, spec, opts = {}) {
  const id = opts.id || uid("card");
  const headingId = uid("card-title");
  const heading = h("h2", { class: "card-title", id: headingId, tabindex: "-1" });
  const generalErr = h("p", { class: "card-error", role: "alert", hidden: true });
  const submit = h("button", { type: "submit", class: "primary" }, "Submit");
  const decline = h("button", { type: "button", class: "quiet" }, "Decline");
  const status = h("p", { class: "card-status", role: "status", tabindex: "-1" });

  const card = {
    id, kind, info: opts.info, el: null, heading, state: "open",
    setState(s) {
      card.state = s;
      node.dataset.state = s;
      const busy = s === "sending";
      submit.disabled = busy || form.blocked;
      decline.disabled = busy;
      formEl.setAttribute("aria-busy", busy ? "true" : "false");
    },
    clearErrors() {
      generalErr.hidden = true;
      generalErr.textContent = "";
      for (const f of form.fields.values()) f.mark("");
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
        const f = lookupField(form.fields, rowPath(form.aliases, e.field));
        if (!f) { general.push(e.field && e.field !== "values" && e.field !== "answers" ? `${e.field}: ${e.message}` : sentence(e.message)); continue; }
        if (!byField.has(f)) byField.set(f, []);
        byField.get(f).push(e.message);
      }
      for (const [f, msgs] of byField) f.mark(msgs.map(sentence).join(" "));
      card.generalError([message, ...general].filter(Boolean).join(" "));
      const first = [...form.fields.values()].find((f) => byField.has(f));
      if (first) first.focus();
    },
    // read is the card's values as they stand, or an error shown on the
    // card and thrown.
    read() {
      try {
        return form.read();
      } catch (err) {
        if (err.errors) card.showErrors(err.errors, err.message);
        else card.generalError(err.message);
        throw err;
      }
    },
    close(how, text) {
      card.setState(how);
      dropDraft(card.id);
      for (const c of formEl.querySelectorAll("button, input, select, textarea")) c.disabled = true;
      generalErr.hidden = true;
      const label = text || form.labels[how] || { answered: "Answered", declined: "Declined", closed: "This card is closed." }[how] || how;
      status.textContent = label;
      const hadFocus = node.contains(document.activeElement) || document.activeElement === document.body;
      if (opts.onClose) opts.onClose(how, hadFocus);
    },
    // waitFor shows the card read-only: it is addressed to someone else
    // (who), whose answer the page will hear of.
    waitFor(who) {
      card.setState("waiting");
      for (const c of formEl.querySelectorAll("button, input, select, textarea")) c.disabled = true;
      formEl.querySelector(".card-actions").hidden = true;
      node.dataset.waitingFor = who;
      status.textContent = `Waiting for ${who}`;
    },
    // closeWith closes the card with its outcome's one-line summary.
    closeWith(payload) {
      const st = payload && payload.status;
      if (st === "submitted") card.close("answered", summary(kind, card.spec, payload.values, card.info));
      else if (st === "declined") card.close("declined");
      else card.close("closed", OUTCOMES[st]);
    },
    // summary is values in one line, as the card names them.
    summary: (values) => summary(kind, card.spec, values, card.info),
  };
  const form = draw(kind, spec, { info: opts.info, values: opts.values, editable: () => card.state === "open" });
  const why = form.showReason ? reasonText(opts.reason) : "";
  const reason = why ? h("p", { class: "card-reason", text: why }) : null;
  card.spec = form.spec;
  heading.textContent = form.title;
  submit.textContent = form.actions.submit;
  decline.textContent = form.actions.decline;
  const formEl = h("form", { novalidate: true, "aria-labelledby": headingId }, form.el, generalErr,
    h("div", { class: "card-actions" }, submit, decline));
  const node = h("section", { class: "card", "data-kind": kind, "data-interaction-id": opts.id || null, "data-state": "open", "aria-labelledby": headingId },
    heading, reason, formEl, status);
  card.el = node;
  card.setState("open");

  restoreDraft(card.id, formEl);
  const keep = () => { if (card.state === "open") keepDraft(card.id, formEl); };
  formEl.addEventListener("input", keep);
  formEl.addEventListener("click", keep); // after a chip's own handler has pressed it

  formEl.addEventListener("submit", (e) => {
    e.preventDefault();
    if (card.state !== "open") return;
    card.clearErrors();
    let values;
    try {
      values = card.read();
    } catch {
      return; // shown on the card
    }
    if (opts.onSubmit) opts.onSubmit(values);
  });
  decline.addEventListener("click", () => {
    if (card.state !== "open") return;
    card.clearErrors();
    if (opts.onDecline) opts.onDecline();
  });
  return card;
}

// reasonText is the line under a card's heading. A raise tool asks the
// model for a phrase that follows "Asked" ("to send you the quote");
// a reason worded otherwise is shown as a sentence of its own.
export function reasonText(reason) {
  const r = typeof reason === "string" ? reason.trim() : "";
  if (!r) return "";
  if (/^(to|for|so|because|in order)\b/.test(r)) return "Asked " + r;
  return r[0].toUpperCase() + r.slice(1) + (/[.!?]$/.test(r) ? "" : ".");
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
