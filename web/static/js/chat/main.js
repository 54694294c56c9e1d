// The chat page: its controls wired, the catalog read, then the socket.
import { bindStop, updateComposer } from "./composer.js";
import { handle } from "./events.js";
import { bindComposer } from "./sending.js";
import { bindRetry, connect, listen } from "./socket.js";
import { bindJump, state } from "./state.js";
import { bindMarkdown, connectionLost } from "./turns.js";

export async function start() {
  bindMarkdown();
  bindRetry();
  bindStop();
  bindComposer();
  bindJump();
  listen({ message: handle, lost: connectionLost });
  updateComposer();
  try {
    const r = await fetch("kinds", { headers: { Accept: "application/json" } });
    if (r.ok) for (const k of await r.json()) state.kinds.set(k.name, k);
  } catch { /* the built-in cards still work */ }
  connect();
}
