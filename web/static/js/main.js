// Start: the catalog, then the socket.
import { connect, updateComposer } from "./connection.js";
import { state } from "./core.js";

export async function start() {
  updateComposer();
  try {
    const r = await fetch("kinds", { headers: { Accept: "application/json" } });
    if (r.ok) for (const k of await r.json()) state.kinds.set(k.name, k);
  } catch { /* the built-in cards still work */ }
  connect();
}
