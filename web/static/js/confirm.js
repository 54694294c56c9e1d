// The write-confirmation card of a gated tool.
import { send, updateComposer } from "./connection.js";
import { NOT_CONNECTED, h, humanize, nextId, state, uid } from "./core.js";
import { put, turnFor } from "./turns.js";

export function onConfirmation(m) {
  const d = (m.data && m.data.data) || {};
  const t = turnFor(m.requestId);
  t.parked = true;
  t.el.dataset.parked = "true";
  state.active = m.requestId;
  updateComposer();
  const headingId = uid("card-title");
  const heading = h("h2", { class: "card-title", id: headingId, tabindex: "-1", text: "Allow this action?" });
  const args = h("dl", { class: "confirm-args", hidden: true });
  const err = h("p", { class: "card-error", role: "alert", hidden: true });
  const status = h("p", { class: "card-status", role: "status" });
  const approve = h("button", { type: "button", class: "primary", text: "Approve" });
  const reject = h("button", { type: "button", class: "quiet", text: "Reject" });
  const node = h("section", { class: "card", "data-kind": "confirmation", "data-state": "open", "aria-labelledby": headingId },
    heading, h("p", { class: "card-reason", text: d.actionDescription || `Run ${d.toolId}?` }), args, err,
    h("div", { class: "card-actions" }, approve, reject), status);
  const c = {
    turn: t, toolName: d.toolId, el: node, callShown: false, state: "open",
    // showArgs lists the call's arguments, which come with its chunk
    // right after the card: what is approved is in plain view.
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
    close(text) {
      c.state = "answered";
      if (c.tool) c.tool.resumed();
      t.parked = false;
      delete t.el.dataset.parked;
      updateComposer();
      node.dataset.state = "answered";
      approve.disabled = reject.disabled = true;
      status.textContent = text;
      err.hidden = true;
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
  const answer = (approved) => {
    const rid = nextId("confirm");
    if (!send({ action: "confirm_tool_action", requestId: rid, sessionId: state.sessionId, approved })) {
      c.fail(NOT_CONNECTED, true);
      return;
    }
    state.pending.set(rid, "confirm");
    state.confirms.set(rid, c);
    approve.disabled = reject.disabled = true;
  };
  approve.addEventListener("click", () => answer(true));
  reject.addEventListener("click", () => answer(false));
  t.confirm = c;
  put(t, node);
  t.seg = null;
  heading.focus({ preventScroll: true });
  node.scrollIntoView({ block: "nearest" });
}
