// kindkit's answer page: one ask, reached by a one-time answer link
// (…/answer#<token>, package link). It draws the ask's card with the
// page's own card and renderers, and posts the answer to answer/submit,
// where the server validates it as it does any other; it opens no socket
// and knows no conversation. The token is in the URL's fragment, which
// the browser never sends to a server; it goes in a request body. With
// auth on, the page passes its own ?token= (a bearer token) on, as the
// chat page does.
import { h } from "./js/core/dom.js";
import { makeCard } from "./js/card/card.js";
import { makeConfirmation } from "./js/card/confirm.js";

const main = document.getElementById("answer");
const status = document.getElementById("status");
const link = decodeURIComponent(location.hash.slice(1));
const bearer = new URLSearchParams(location.search).get("token");

// The words for how an ask ended, by its outcome's status.
const ENDED = {
  submitted: "Answered", declined: "Declined", no_response: "Expired without an answer",
  withdrawn: "Withdrawn", cancelled: "Stopped", approved: "Approved", denied: "Rejected",
};
// The words for the path an answer came by (the record's via).
const VIA = { link: "through an answer link", inbox: "from an inbox", card: "in the conversation", tool: "by its tool", deadline: "at its deadline" };

function setStatus(state, text) {
  status.dataset.state = state;
  status.textContent = text;
  document.body.dataset.state = state;
}

// call posts body to the server's answer/<what> and gives its status and
// JSON reply.
async function call(what, body) {
  const headers = { "Content-Type": "application/json" };
  if (bearer) headers.Authorization = `Bearer ${bearer}`;
  const res = await fetch(`answer/${what}`, { method: "POST", headers, body: JSON.stringify({ token: link, ...body }) });
  let reply = {};
  try { reply = await res.json(); } catch { /* an empty or non-JSON body */ }
  return { code: res.status, reply };
}

// showEnded replaces the page's card with how the ask ended: what, when,
// by whom and by which path.
function showEnded(e, note) {
  const what = ENDED[e.status] || "Ended";
  const parts = [what];
  if (e.by) parts.push(`by ${e.by}`);
  if (e.via && VIA[e.via]) parts.push(VIA[e.via]);
  const when = e.at ? new Date(e.at) : null;
  const ended = h("section", { class: "card", id: "ended", "data-status": e.status, "data-via": e.via || "", "data-by": e.by || "" },
    h("h2", { class: "card-title", text: "This question is closed" }),
    h("p", { class: "card-status", text: parts.join(" ") + "." }),
    when ? h("p", { class: "card-reason" }, "At ", h("time", { datetime: e.at, text: when.toLocaleString() }), ".") : null,
    note ? h("p", { class: "card-error", role: "alert", text: note }) : null);
  main.replaceChildren(ended);
  setStatus("ended", what);
}

function failed(reply, fallback) {
  main.replaceChildren(h("p", { class: "notice", id: "problem", role: "alert", "data-code": reply.code || "", text: reply.error || fallback }));
  setStatus("error", "This link cannot be used");
}

// answered handles a submit's reply on card c (which shows errors with
// showErrors and reopens with reopen).
function answered({ code, reply }, c, reopen) {
  if (code === 200) return showEnded(reply);
  if (code === 422) {
    reopen();
    return c.showErrors(reply.errors || [], reply.error);
  }
  if (code === 409 && reply.ended) return showEnded(reply.ended, reply.error);
  failed(reply, `The answer was not taken (${code}).`);
}

async function start() {
  if (!link) return failed({}, "This link is incomplete: copy the whole link, with what follows its #.");
  let asked, kinds;
  try {
    [asked, kinds] = await Promise.all([call("ask", {}), fetch("kinds").then((r) => r.json())]);
  } catch {
    return failed({}, "The server could not be reached; reload to try again.");
  }
  const { code, reply: ask } = asked;
  if (code !== 200) return failed(ask, `This link cannot be used (${code}).`);
  if (ask.state === "ended") return showEnded(ask);
  setStatus("online", "Waiting for your answer");
  if (ask.ask === "confirmation") {
    const c = makeConfirmation(ask.tool, {
      arguments: ask.arguments,
      onAnswer: async (d) => {
        c.busy();
        answered(await call("submit", { approved: d.decision === "approve" }), c, () => {});
      },
    });
    c.showArgs(ask.arguments);
    main.replaceChildren(c.el);
    return;
  }
  const info = kinds.find((k) => k.name === ask.kind);
  const send = async (body) => {
    card.setState("sending");
    answered(await call("submit", body), card, () => card.setState("open"));
  };
  const card = makeCard(ask.kind, ask.spec, {
    id: ask.interactionId, reason: ask.reason, info,
    onSubmit: (values) => send({ values }),
    onDecline: () => send({ declined: true }),
  });
  main.replaceChildren(card.el);
}

start();
