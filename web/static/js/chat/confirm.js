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
    onAnswer(approved) {
      const rid = nextId("confirm");
      if (!send({ action: "confirm_tool_action", requestId: rid, sessionId: state.sessionId, approved })) {
        c.fail(NOT_CONNECTED, true);
        return;
      }
      state.pending.set(rid, "confirm");
      state.confirms.set(rid, c);
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
