// A write confirmation's card: a gated tool's call, its arguments in
// plain view, Approve and Reject. Whoever uses it says what an answer
// does and hears when it closes.
import { h, uid } from "../core/dom.js";
import { humanize } from "../core/text.js";

// makeConfirmation draws the card for a call of toolId. opts: description,
// what the call does; onAnswer(approved); onClose(), once it has closed.
export function makeConfirmation(toolId, opts = {}) {
  const headingId = uid("card-title");
  const heading = h("h2", { class: "card-title", id: headingId, tabindex: "-1", text: "Allow this action?" });
  const args = h("dl", { class: "confirm-args", hidden: true });
  const err = h("p", { class: "card-error", role: "alert", hidden: true });
  const status = h("p", { class: "card-status", role: "status" });
  const approve = h("button", { type: "button", class: "primary", text: "Approve" });
  const reject = h("button", { type: "button", class: "quiet", text: "Reject" });
  const node = h("section", { class: "card", "data-kind": "confirmation", "data-state": "open", "aria-labelledby": headingId },
    heading, h("p", { class: "card-reason", text: opts.description || `Run ${toolId}?` }), args, err,
    h("div", { class: "card-actions" }, approve, reject), status);
  const c = {
    toolName: toolId, el: node, heading, state: "open",
    // showArgs lists the call's arguments: what is approved is in plain
    // view.
    showArgs(a) {
      let obj = a;
      if (typeof a === "string") { try { obj = JSON.parse(a); } catch { obj = a; } }
      args.replaceChildren();
      if (obj && typeof obj === "object" && !Array.isArray(obj)) {
        for (const [k, v] of Object.entries(obj)) {
          args.append(h("dt", { text: humanize(k) }), h("dd", { text: typeof v === "string" ? v : JSON.stringify(v), dir: "auto" }));
        }
      } else if (obj !== undefined && obj !== "") {
        args.append(h("dt", { text: "Arguments" }), h("dd", { text: typeof obj === "string" ? obj : JSON.stringify(obj) }));
      }
      args.hidden = !args.childElementCount;
    },
    // busy disables the answers while one is on its way.
    busy() {
      approve.disabled = reject.disabled = true;
    },
    close(text) {
      c.state = "answered";
      node.dataset.state = "answered";
      approve.disabled = reject.disabled = true;
      status.textContent = text;
      err.hidden = true;
      if (opts.onClose) opts.onClose();
    },
    fail(text, stale) {
      approve.disabled = reject.disabled = false;
      err.textContent = text;
      err.hidden = false;
      c.stale = !!stale;
    },
    clearStale() {
      if (c.stale && c.state === "open") err.hidden = true;
      c.stale = false;
    },
  };
  approve.addEventListener("click", () => opts.onAnswer && opts.onAnswer(true));
  reject.addEventListener("click", () => opts.onAnswer && opts.onAnswer(false));
  return c;
}
