// kindkit's inbox page: the questions waiting for the signed-in person,
// across conversations (package inbox's GET inbox/asks), each drawn as its
// card with the page's own card and renderers and answered in place
// (POST inbox/submit), where the server validates it as it does any other
// answer. It opens no socket and shows nothing of the conversations but
// their ids. The bearer token is the page's ?token=, as on the chat page
// and the answer page; the filters are its ?kind= and ?before= (an RFC 3339
// time), so that a filtered inbox can be bookmarked.
import { h, uid } from "./js/core/dom.js";
import { makeCard } from "./js/card/card.js";
import { makeConfirmation } from "./js/card/confirm.js";

const list = document.getElementById("asks");
const status = document.getElementById("status");
const moreBox = document.getElementById("more-box");
const more = document.getElementById("more");
const filters = document.getElementById("filters");
const kindSelect = document.getElementById("kind");
const beforeInput = document.getElementById("before");
const bearer = new URLSearchParams(location.search).get("token");
let kinds = [];
let cursor = "";
let waiting = 0;
let generation = 0; // a filter's change starts a new list; older pages are dropped

function setStatus(state, text) {
  status.dataset.state = state;
  status.textContent = text;
  document.body.dataset.state = state;
}

function countWaiting() {
  if (!waiting && query().size) return setStatus("idle", "No questions match the filters");
  setStatus(waiting ? "online" : "idle", waiting === 1 ? "1 question waits for you" : `${waiting || "No"} questions wait for you`);
}

// localInput is d as a datetime-local input's value: local time, to the
// minute.
function localInput(d) {
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

// readFilters sets the filters from the page's address.
function readFilters() {
  const p = new URLSearchParams(location.search);
  kindSelect.value = kinds.some((k) => k.name === p.get("kind")) ? p.get("kind") : "";
  const before = new Date(p.get("before") || NaN);
  beforeInput.value = Number.isNaN(before.getTime()) ? "" : localInput(before);
}

// query is the filters as inbox/asks's parameters.
function query() {
  const q = new URLSearchParams();
  if (kindSelect.value) q.set("kind", kindSelect.value);
  const before = new Date(beforeInput.value || NaN);
  if (!Number.isNaN(before.getTime())) q.set("before", before.toISOString());
  return q;
}

// refilter lists the inbox again with the filters, and puts them in the
// page's address.
function refilter() {
  const q = query();
  const url = new URLSearchParams(location.search);
  for (const name of ["kind", "before"]) {
    if (q.has(name)) url.set(name, q.get(name));
    else url.delete(name);
  }
  history.replaceState(null, "", `${location.pathname}?${url}`);
  document.getElementById("problem")?.remove();
  list.replaceChildren();
  cursor = "";
  waiting = 0;
  load();
}

// call fetches inbox/<what> with the bearer and gives its status and JSON
// reply.
async function call(what, init = {}) {
  const headers = { ...(init.headers || {}) };
  if (bearer) headers.Authorization = `Bearer ${bearer}`;
  const res = await fetch(`inbox/${what}`, { ...init, headers });
  let reply = {};
  try { reply = await res.json(); } catch { /* an empty or non-JSON body */ }
  return { code: res.status, reply };
}

function submit(ask, body) {
  return call("submit", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ conversationId: ask.conversationId, interactionId: ask.interactionId, ...body }),
  });
}

function failed(text) {
  list.replaceChildren();
  moreBox.hidden = true;
  list.after(h("p", { class: "notice", id: "problem", role: "alert", text }));
  setStatus("error", "The inbox cannot be shown");
}

// meta is the line above an ask's card: its kind, deadline and
// conversation.
function meta(ask) {
  const parts = [h("span", { class: "inbox-kind", text: ask.kind || `Action: ${ask.tool}` })];
  if (ask.deadline) {
    parts.push(" · due ", h("time", { datetime: ask.deadline, text: new Date(ask.deadline).toLocaleString() }));
  }
  parts.push(" · conversation ", h("code", { class: "inbox-conversation", text: ask.conversationId }));
  if (ask.addressee) parts.push(` · for ${ask.addressee}`);
  return h("p", { class: "inbox-meta", id: uid("inbox-meta") }, ...parts);
}

// named adds an ask's line (meta) to the names of its card's landmarks
// (the card's region, its form): every card of a kind has the same
// heading, and a page of them needs names that tell them apart.
function named(cardEl, meta) {
  for (const el of [cardEl, ...cardEl.querySelectorAll("form[aria-labelledby]")]) {
    el.setAttribute("aria-labelledby", `${el.getAttribute("aria-labelledby")} ${meta.id}`);
  }
}

// settled handles a submit's reply on an ask's card, through ui: done()
// when it was taken, closed(text) when it had ended or is not the
// person's, invalid(errors, text) with the field errors, failed(text)
// otherwise.
function settled({ code, reply }, ui) {
  if (code === 200 || code === 404 || code === 409) {
    waiting--;
    countWaiting();
  }
  if (code === 200) return ui.done();
  if (code === 422) return ui.invalid(reply.errors || [], reply.error);
  if (code === 409 || code === 404) return ui.closed(reply.error || "This question is closed.");
  ui.failed(reply.error || `The answer was not taken (${code}); try again.`);
}

function item(ask) {
  const line = meta(ask);
  const li = h("li", { class: "inbox-ask", "data-interaction-id": ask.interactionId, "data-conversation-id": ask.conversationId }, line);
  if (ask.ask === "confirmation") {
    const c = makeConfirmation(ask.tool, {
      arguments: ask.arguments,
      onAnswer: async (d) => {
        c.busy();
        const approved = d.decision === "approve";
        settled(await submit(ask, { approved }), {
          done: () => c.close(approved ? "Approved" : "Rejected"),
          closed: (text) => c.close(text),
          invalid: (errors, text) => c.showErrors(errors, text),
          failed: (text) => c.fail(text),
        });
      },
    });
    c.showArgs(ask.arguments);
    named(c.el, line);
    li.append(c.el);
    return li;
  }
  const info = kinds.find((k) => k.name === ask.kind);
  const send = async (body) => {
    card.setState("sending");
    settled(await submit(ask, body), {
      done: () => (body.declined ? card.close("declined") : card.close("answered", card.summary(body.values))),
      closed: (text) => card.close("closed", text),
      invalid: (errors, text) => { card.setState("open"); card.showErrors(errors, text); },
      failed: (text) => { card.setState("open"); card.generalError(text); },
    });
  };
  const card = makeCard(ask.kind, ask.spec, {
    id: ask.interactionId, reason: ask.reason, info,
    onSubmit: (values) => send({ values }),
    onDecline: () => send({ declined: true }),
  });
  named(card.el, line);
  li.append(card.el);
  return li;
}

// load appends the next page of the inbox.
async function load() {
  const gen = ++generation;
  more.disabled = true;
  const q = query();
  if (cursor) q.set("cursor", cursor);
  let page;
  try {
    page = await call(`asks${q.size ? `?${q}` : ""}`);
  } catch {
    if (gen === generation) failed("The server could not be reached; reload to try again.");
    return;
  }
  if (gen !== generation) return; // the filters changed meanwhile
  const { code, reply } = page;
  if (code !== 200) {
    const fallback = code === 401 ? "Open this page with your sign-in token (?token=…)." : `The inbox cannot be shown (${code}).`;
    return failed(reply.error || fallback);
  }
  for (const ask of reply.asks) list.append(item(ask));
  waiting += reply.asks.length;
  cursor = reply.nextCursor || "";
  moreBox.hidden = !cursor;
  more.disabled = false;
  countWaiting();
}

async function start() {
  try {
    kinds = await fetch("kinds").then((r) => r.json());
  } catch {
    return failed("The server could not be reached; reload to try again.");
  }
  for (const k of kinds) kindSelect.append(h("option", { value: k.name, text: k.name }));
  readFilters();
  more.addEventListener("click", load);
  filters.addEventListener("change", refilter);
  filters.addEventListener("submit", (e) => e.preventDefault());
  await load();
}

start();
