// A form is what a renderer draws a kind's card body into and what the
// card around it reads: the renderer fills it, the card (card/card.js)
// shows its errors, gathers its values and says what became of it.
import { h, uid } from "../core/dom.js";

// newForm is an empty form for spec, which is always an object. opts:
// values, the values answered earlier, drawn in place of the schema's
// defaults; editable, whether a control may change now (the card says
// no while it sends).
export function newForm(spec, opts = {}) {
  return {
    spec: spec && typeof spec === "object" && !Array.isArray(spec) ? spec : {},
    values: opts.values,
    editable: opts.editable || (() => true),
    el: h("div", { class: "card-body" }),
    title: "", // the heading; empty for the kind's name
    fields: new Map(), // error field → {err, mark, focus}
    aliases: new Map(), // index in the sent values → its row's path (rowPath)
    actions: { submit: "Submit", decline: "Decline" }, // the buttons' words
    labels: {}, // and how an end is said otherwise: {declined: "Cancelled"}
    showReason: true, // false when the body says why it is asked itself
    blocked: false, // true when the form cannot be submitted at all
    // read returns the values, or throws an Error; one with errors
    // ([{field, message}]) says which fields are wrong.
    read: () => ({}),
  };
}

// invalid is the error read throws for values the form can tell are
// wrong before they are sent.
export function invalid(errors, message) {
  const err = new Error(message);
  err.errors = errors;
  return err;
}

// REQUIRED is a required field's error when it is left empty.
export const REQUIRED = "This is required.";

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

// enterMovesOn makes Enter in a one-line input move on to next() (a
// control, or null) or, when there is none, to the card's Submit: a card
// of several fields is never sent half filled by a stray Enter.
// Focus moves on the key's release: moved sooner, the key's press would
// reach the Submit button and send the card.
export function enterMovesOn(input, next) {
  for (const type of ["keydown", "keypress", "keyup"]) {
    input.addEventListener(type, (e) => {
      if (e.key !== "Enter" || e.isComposing) return;
      e.preventDefault();
      if (type !== "keyup") return;
      const target = next() || (input.form && input.form.querySelector('button[type="submit"]'));
      if (target) target.focus();
    });
  }
}

export function requiredMark() {
  return [h("span", { class: "req", "aria-hidden": "true", text: " *" }), h("span", { class: "sr-only", text: " (required)" })];
}
