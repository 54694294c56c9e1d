// A write confirmation's card: a gated tool's call, its arguments in
// plain view, Approve and Reject, and where the tool's policy allows, Edit
// (a form drawn from the tool's parameters, filled with the call's
// arguments) and Answer instead. Whoever uses it says what a decision does
// and hears when it closes.
import { h, uid } from "../core/dom.js";
import { humanize, sentence } from "../core/text.js";
import { draw } from "../renderers/index.js";
import { lookupField } from "./card.js";

// makeConfirmation draws the card for a call of toolId. opts: description,
// what the call does; decisions, what may be decided (approve, edit,
// reject, respond; default approve and reject); arguments and parameters,
// the call's arguments and the tool's schema, for Edit;
// onAnswer({decision, arguments?, message?}); onClose(), once it has
// closed.
export function makeConfirmation(toolId, opts = {}) {
  const allowed = new Set(opts.decisions || ["approve", "reject"]);
  const headingId = uid("card-title");
  const heading = h("h2", { class: "card-title", id: headingId, tabindex: "-1", text: "Allow this action?" });
  const args = h("dl", { class: "confirm-args", hidden: true });
  const err = h("p", { class: "card-error", role: "alert", hidden: true });
  const status = h("p", { class: "card-status", role: "status" });
  const approve = h("button", { type: "button", class: "primary", text: "Approve" });
  const reject = h("button", { type: "button", class: "quiet", text: "Reject" });
  const buttons = [approve, reject];
  const answer = (d) => opts.onAnswer && opts.onAnswer(d);

  // Words for the assistant: a reason to reject, or the answer instead.
  let note = null;
  const noteId = uid("note");
  const noteBox = opts.decisions
    ? h("p", { class: "confirm-note" },
      h("label", { for: noteId, text: allowed.has("respond") ? "A reason to reject, or your answer instead (the assistant reads it)" : "A reason to reject (optional; the assistant reads it)" }),
      (note = h("textarea", { id: noteId, rows: 2, dir: "auto" })))
    : null;
  const message = () => (note ? note.value.trim() : "");

  // Edit: the call's arguments as a form, approved as changed.
  let editor = null;
  const editBox = h("div", { class: "confirm-edit", hidden: true });
  const edit = allowed.has("edit") && opts.parameters ? h("button", { type: "button", class: "quiet", text: "Edit" }) : null;
  if (edit) {
    const run = h("button", { type: "button", class: "primary", text: "Approve with changes" });
    buttons.push(edit, run);
    edit.addEventListener("click", () => {
      if (!editor) {
        editor = draw("tool_arguments", {}, { info: { valuesSchema: opts.parameters }, values: parsed(opts.arguments), editable: () => c.state === "open" });
        editBox.append(h("p", { class: "tool-h", text: "Arguments" }), editor.el, h("div", { class: "card-actions" }, run));
      }
      editBox.hidden = false;
      args.hidden = true;
      edit.hidden = true;
      const first = editBox.querySelector("input, select, textarea");
      if (first) first.focus();
    });
    run.addEventListener("click", () => {
      c.clearErrors();
      let values;
      try {
        values = editor.read();
      } catch (e) {
        c.showErrors(e.errors || [], e.message);
        return;
      }
      answer({ decision: "edit", arguments: values });
    });
  }
  const respond = allowed.has("respond") ? h("button", { type: "button", class: "quiet", text: "Answer instead" }) : null;
  if (respond) {
    buttons.push(respond);
    respond.addEventListener("click", () => {
      c.clearErrors();
      if (!message()) {
        c.showErrors([], "Write your answer first.");
        note.focus();
        return;
      }
      answer({ decision: "respond", message: message() });
    });
  }

  const node = h("section", { class: "card", "data-kind": "confirmation", "data-state": "open", "aria-labelledby": headingId },
    heading, h("p", { class: "card-reason", text: opts.description || `Run ${toolId}?` }), args, editBox, noteBox, err,
    h("div", { class: "card-actions" }, approve, edit, reject, respond), status);
  const c = {
    toolName: toolId, el: node, heading, state: "open",
    // showArgs lists the call's arguments: what is approved is in plain
    // view.
    showArgs(a) {
      const obj = parsed(a);
      args.replaceChildren();
      if (obj && typeof obj === "object" && !Array.isArray(obj)) {
        for (const [k, v] of Object.entries(obj)) {
          args.append(h("dt", { text: humanize(k) }), h("dd", { text: typeof v === "string" ? v : JSON.stringify(v), dir: "auto" }));
        }
      } else if (obj !== undefined && obj !== "") {
        args.append(h("dt", { text: "Arguments" }), h("dd", { text: typeof obj === "string" ? obj : JSON.stringify(obj) }));
      }
      args.hidden = !args.childElementCount || !editBox.hidden;
    },
    // busy disables the answers while one is on its way.
    busy() {
      for (const b of buttons) b.disabled = true;
    },
    close(text) {
      c.state = "answered";
      node.dataset.state = "answered";
      for (const b of buttons) b.disabled = true;
      if (note) note.disabled = true;
      for (const x of editBox.querySelectorAll("input, select, textarea, button")) x.disabled = true;
      status.textContent = text;
      err.hidden = true;
      if (opts.onClose) opts.onClose();
    },
    fail(text, stale) {
      for (const b of buttons) b.disabled = false;
      err.textContent = text;
      err.hidden = false;
      c.stale = !!stale;
    },
    // showErrors marks the edited arguments' fields the server (or the
    // form) found wrong; the rest is said above the buttons.
    showErrors(errors, text) {
      for (const b of buttons) b.disabled = false;
      const general = [];
      let first = null;
      for (const e of errors) {
        const f = editor && lookupField(editor.fields, e.field);
        if (!f) { general.push(e.field && e.field !== "arguments" ? `${e.field}: ${e.message}` : sentence(e.message)); continue; }
        f.mark(sentence(e.message));
        first = first || f;
      }
      err.textContent = [text, ...general].filter(Boolean).join(" ");
      err.hidden = !err.textContent;
      if (first) first.focus();
    },
    clearErrors() {
      err.hidden = true;
      if (editor) for (const f of editor.fields.values()) f.mark("");
    },
    clearStale() {
      if (c.stale && c.state === "open") err.hidden = true;
      c.stale = false;
    },
  };
  approve.addEventListener("click", () => answer({ decision: "approve" }));
  reject.addEventListener("click", () => answer({ decision: "reject", message: message() || undefined }));
  return c;
}

// parsed is a call's arguments as a value: they come as JSON text or
// already parsed.
function parsed(a) {
  if (typeof a !== "string") return a;
  try { return JSON.parse(a); } catch { return a; }
}
