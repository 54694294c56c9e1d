// The write confirmation of a gated tool in the chat: answered with
// confirm_tool_action.
import { makeConfirmation } from "../card/confirm.js";
import { updateComposer } from "./composer.js";
import { send } from "./socket.js";
import { NOT_CONNECTED, nextId, state } from "./state.js";
import { put, turnFor } from "./turns.js";

export function onConfirmation(m) {
  const d = (m.data && m.data.data) || {};
  const t = turnFor(m.requestId);
  t.parked = true;
  t.el.dataset.parked = "true";
  state.active = m.requestId;
  const c = makeConfirmation(d.toolId, {
    description: d.actionDescription,
    // What may be decided beyond approve and reject (kindkit.tool_decisions).
    decisions: Array.isArray(d.decisions) ? d.decisions : undefined,
    arguments: d.arguments,
    parameters: d.parameters && typeof d.parameters === "object" ? d.parameters : undefined,
    onAnswer(decided) {
      const rid = nextId("confirm");
      const approved = decided.decision === "approve" || decided.decision === "edit";
      const frame = { action: "confirm_tool_action", requestId: rid, sessionId: state.sessionId, approved };
      if (decided.decision === "edit" || decided.decision === "respond") frame.decision = decided.decision;
      if (decided.arguments !== undefined) frame.arguments = decided.arguments;
      if (decided.message) frame.message = decided.message;
      if (!send(frame)) {
        c.fail(NOT_CONNECTED, true);
        return;
      }
      state.pending.set(rid, "confirm");
      state.confirms.set(rid, c);
      c.decided = decided.decision;
      c.busy();
    },
    onClose() {
      if (c.tool) c.tool.resumed();
      t.parked = false;
      delete t.el.dataset.parked;
      updateComposer();
    },
  });
  // The call's arguments come with its chunk right after the card
  // (turns.js: showArgs).
  Object.assign(c, { turn: t, callShown: false });
  t.confirm = c;
  updateComposer(); // Stop, for the confirmation that waits
  put(t, c.el);
  t.seg = null;
  c.heading.focus({ preventScroll: true });
  c.el.scrollIntoView({ block: "nearest" });
}

// onConfirmationInvalid shows what the server found wrong in edited
// arguments (kindkit.tool_decisions); the confirmation stays open.
export function onConfirmationInvalid(m) {
  const d = (m.data && m.data.data) || {};
  state.pending.delete(m.requestId);
  const c = state.confirms.get(m.requestId);
  if (c) c.showErrors(Array.isArray(d.errors) ? d.errors : [], d.message);
}
