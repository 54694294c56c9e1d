// kindkit chat: a plain-JavaScript client of the smooth-operator protocol.
// It talks to /ws on the host that served it, draws a card for every
// interaction kind (its own for choices and identity_intake, a form built
// from /kinds' valuesSchema for any other) and resumes its conversation
// after a reload.
"use strict";

(() => {
  const STORE_KEY = "kindkit.conversationId";
  const params = new URLSearchParams(location.search);
  const agentId = params.get("agent") || "web";
  const token = params.get("token");

  // Cards drawn by their own code; every other kind gets the generic form.
  const CARDS = {
    choices: { capability: "choice_chips", render: renderChoices, title: choicesTitle, summary: choicesSummary },
    identity_intake: { capability: "identity_form", render: renderIdentity, title: () => "Your contact details", summary: identitySummary },
  };

  const FRIENDLY = {
    INTERNAL_ERROR: "Something went wrong on the server. Please try again.",
    TURN_IN_PROGRESS: "The assistant is still working on your last message. Answer its card or wait for the reply, then send again.",
    SESSION_NOT_FOUND: "The session was lost. Reconnecting…",
    NO_PENDING_INTERACTION: "This card is no longer waiting for an answer.",
    INTERACTION_MISMATCH: "This card is out of date.",
    STORAGE_ERROR: "The conversation could not be read. Please try again.",
    UNSUPPORTED_ACTION: "The server does not understand this request.",
  };

  const el = {
    log: document.getElementById("log"),
    empty: document.getElementById("empty"),
    status: document.getElementById("status"),
    notice: document.getElementById("notice"),
    offline: document.getElementById("offline"),
    retry: document.getElementById("retry"),
    composer: document.getElementById("composer"),
    message: document.getElementById("message"),
    send: document.getElementById("send"),
    stop: document.getElementById("stop"),
    fresh: document.getElementById("new-conversation"),
    announcer: document.getElementById("announcer"),
  };

  const state = {
    ws: null,
    sessionId: null,
    conversationId: load(),
    kinds: new Map(), // name → /kinds entry
    turns: new Map(), // turn requestId → turn
    cards: new Map(), // interactionId → card
    confirms: new Map(), // confirm requestId → confirmation card
    active: null, // requestId of the running turn
    pending: new Map(), // requestId → what it was for ("create", "history")
    seq: 0,
    uid: 0,
    retry: 500,
    retryTimer: 0,
    historyShown: false,
  };

  // ---- small helpers ------------------------------------------------------

  function h(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : String(v));
    }
    for (const kid of kids.flat(Infinity)) {
      if (kid === null || kid === undefined || kid === false) continue;
      node.append(kid instanceof Node ? kid : String(kid));
    }
    return node;
  }

  const uid = (p) => `${p}-${++state.uid}`;
  const nextId = (p) => `${p}-${Date.now().toString(36)}-${++state.seq}`;

  function load() {
    try { return localStorage.getItem(STORE_KEY); } catch { return null; }
  }
  function save(id) {
    try { if (id) localStorage.setItem(STORE_KEY, id); else localStorage.removeItem(STORE_KEY); } catch { /* private mode */ }
  }

  function humanize(key) {
    const s = String(key).replace(/[_-]+/g, " ").replace(/([a-z0-9])([A-Z])/g, "$1 $2").trim().toLowerCase();
    return s ? s[0].toUpperCase() + s.slice(1) : String(key);
  }

  // PLAIN rewords the schema validator's messages, which the model reads
  // too, for a person: no type names, no keyword jargon.
  const PLAIN = [
    [/^must be an integer(?: or [a-z ]+)?, not .*$/i, "Enter a whole number"],
    [/^must be a number(?: or [a-z ]+)?, not .*$/i, "Enter a number"],
    [/^must be a string(?: or [a-z ]+)?, not .*$/i, "Enter some text"],
    [/^must be a boolean(?: or [a-z ]+)?, not .*$/i, "Choose yes or no"],
    [/^must be an? (?:object|array)(?: or [a-z ]+)?, not .*$/i, "This answer is not in the expected form"],
    [/^must be one of .*$/i, "Pick one of the options"],
    [/^must match the pattern .*$/i, "This is not in the expected form"],
    [/^must be at most (\d+) characters? long.*$/i, "Use at most $1 characters"],
    [/^must be at least (\d+) characters? long.*$/i, "Use at least $1 characters"],
    [/^must be at least (-?[\d.]+)$/i, "Enter $1 or more"],
    [/^must be at most (-?[\d.]+)$/i, "Enter $1 or less"],
    [/^must have at least (\d+) (?:entry|entries).*$/i, "Give at least $1"],
    [/^must have at most (\d+) (?:entry|entries).*$/i, "Give at most $1"],
    [/^this field is required$/i, "This is required"],
  ];

  // sentence capitalises a validator message and ends it with a period.
  function sentence(text) {
    // The validators write for the model too: say "decline" for declined=true.
    let t = String(text || "").trim().replace(/,? or declined=true/g, ", or decline the card");
    for (const [re, plain] of PLAIN) if (re.test(t)) { t = t.replace(re, plain); break; }
    if (!t) return t;
    return t[0].toUpperCase() + t.slice(1) + (/[.!?]$/.test(t) ? "" : ".");
  }

  function announce(text) {
    el.announcer.textContent = "";
    setTimeout(() => { el.announcer.textContent = text; }, 30);
  }

  const NOT_CONNECTED = "Not connected. Try again in a moment.";

  function readable(err) {
    if (!err) return "Something went wrong.";
    return FRIENDLY[err.code] || err.message || "Something went wrong.";
  }

  function showNotice(text) {
    el.notice.textContent = text || "";
    el.notice.hidden = !text;
  }

  // keepScrolled runs fn and keeps the log pinned to its end if it was.
  function keepScrolled(fn) {
    const log = el.log;
    const pinned = log.scrollHeight - log.scrollTop - log.clientHeight < 96;
    const out = fn();
    if (pinned) log.scrollTop = log.scrollHeight;
    return out;
  }

  function append(node) {
    el.empty.hidden = true;
    keepScrolled(() => el.log.append(node));
  }

  // ---- connection ---------------------------------------------------------

  function setStatus(s, text) {
    el.status.dataset.state = s;
    el.status.textContent = text;
  }

  function wsURL() {
    const u = new URL("/ws", location.href);
    u.protocol = location.protocol === "https:" ? "wss:" : "ws:";
    u.search = "";
    if (token) u.searchParams.set("token", token);
    return u.href;
  }

  function supports() {
    const set = new Set(Object.values(CARDS).map((c) => c.capability));
    for (const k of state.kinds.values()) if (k.capability) set.add(k.capability);
    return [...set];
  }

  function connect() {
    clearTimeout(state.retryTimer);
    setStatus("connecting", "Connecting…");
    let ws;
    try {
      ws = new WebSocket(wsURL());
    } catch {
      scheduleReconnect();
      return;
    }
    state.ws = ws;
    ws.addEventListener("open", () => {
      if (state.ws !== ws) return;
      state.retry = 500;
      createSession();
    });
    ws.addEventListener("message", (ev) => {
      let m;
      try { m = JSON.parse(ev.data); } catch { return; }
      try { handle(m); } catch (e) { console.error("kindkit: cannot handle", m, e); }
    });
    ws.addEventListener("close", () => {
      if (state.ws !== ws) return;
      state.ws = null;
      state.sessionId = null;
      connectionLost();
      scheduleReconnect();
    });
  }

  function scheduleReconnect() {
    setStatus("offline", "Offline — reconnecting…");
    el.offline.hidden = false;
    clearTimeout(state.retryTimer);
    state.retryTimer = setTimeout(connect, state.retry);
    state.retry = Math.min(state.retry * 2, 10000);
  }

  // Retry now: a new socket at once, and the wait starts short again.
  el.retry.addEventListener("click", () => {
    state.retry = 500;
    reconnectNow();
  });

  function send(frame) {
    if (!state.ws || state.ws.readyState !== WebSocket.OPEN) return false;
    state.ws.send(JSON.stringify(frame));
    return true;
  }

  function createSession() {
    const f = { action: "create_conversation_session", requestId: nextId("create"), agentId, supports: supports() };
    if (state.conversationId) f.conversationId = state.conversationId;
    state.pending.set(f.requestId, "create");
    send(f);
  }

  // connectionLost ends what the old socket was streaming; parked cards
  // stay open, since the server keeps their park and shows them again.
  function connectionLost() {
    for (const t of state.turns.values()) {
      if (t.done || t.parked) continue;
      finishTurn(t, "Connection lost — this reply may be incomplete.");
    }
    for (const c of state.cards.values()) {
      if (c.state === "sending") c.setState("open");
    }
    state.active = null;
    updateComposer();
  }

  // openCard is the card the active turn waits on, if any: a message then
  // answers it in words (send_message's withdrawInteraction).
  function openCard() {
    const t = state.active && state.turns.get(state.active);
    if (!t || !t.parked) return undefined;
    return [...state.cards.values()].find((c) => c.turn === t && c.state === "open");
  }

  function updateComposer() {
    const online = !!state.sessionId;
    const turn = state.active && state.turns.get(state.active);
    const card = openCard();
    const running = !!turn && !turn.parked && !turn.done;
    el.send.disabled = !online || (!!state.active && !card);
    el.stop.hidden = !running;
    el.stop.disabled = !online;
    el.message.placeholder = card ? "Answer the card above, or write your answer…" : "Write a message…";
    if (!online) el.send.title = "Not connected";
    else if (state.active && !card) el.send.title = "Wait for the reply, or stop it";
    else el.send.removeAttribute("title");
  }

  el.stop.addEventListener("click", () => {
    if (!state.active) return;
    send({ action: "cancel", requestId: nextId("cancel") });
  });

  // ---- events -------------------------------------------------------------

  function handle(m) {
    switch (m.type) {
      case "immediate_response": return onImmediate(m);
      case "stream_token": return onToken(m);
      case "stream_chunk": return onChunk(m);
      case "interaction_required": return onInteraction(m);
      case "interaction_invalid": return onInvalid(m);
      case "write_confirmation_required": return onConfirmation(m);
      case "eventual_response": return onEventual(m);
      case "cancelled": return onCancelled(m);
      case "error": return onError(m);
      default: return undefined; // pong, keepalive, stream_preamble, stream_reasoning…
    }
  }

  function onImmediate(m) {
    const what = state.pending.get(m.requestId);
    const d = m.data || {};
    if (what === "create") {
      state.pending.delete(m.requestId);
      const resumed = !!state.conversationId && state.conversationId === d.conversationId;
      if (state.conversationId && !resumed) {
        addNote("The previous conversation is no longer available; this is a new one.");
      }
      state.sessionId = d.sessionId;
      state.conversationId = d.conversationId;
      save(d.conversationId);
      for (const c of state.cards.values()) c.sessionId = d.sessionId;
      setStatus("online", "Online");
      el.offline.hidden = true;
      showNotice("");
      // What failed for want of a connection can be tried again now.
      for (const c of state.cards.values()) c.clearStale();
      for (const t of state.turns.values()) if (t.confirm) t.confirm.clearStale();
      updateComposer();
      if (resumed && !state.historyShown) loadHistory();
      state.historyShown = true;
      return;
    }
    if (what === "history") {
      state.pending.delete(m.requestId);
      showHistory(d.messages || []);
      return;
    }
    if (what === "confirm") {
      state.pending.delete(m.requestId);
      const c = state.confirms.get(m.requestId);
      if (c) c.close(d.approved ? "Approved" : "Rejected");
      return;
    }
    if (m.status === 200 && d.interactionId) {
      const card = state.cards.get(d.interactionId);
      if (card) card.close(d.declined ? "declined" : "answered", d.declined ? undefined : summary(card.kind, card.spec, card.sent));
    }
  }

  function loadHistory() {
    const rid = nextId("history");
    state.pending.set(rid, "history");
    send({ action: "get_conversation_messages", requestId: rid, sessionId: state.sessionId, limit: 50 });
  }

  // showHistory puts the stored messages (newest first on the wire) above
  // whatever this page already shows.
  // A user message carries the cards its turn raised and that ended (a
  // kindkit extension): they are drawn as their summaries, at the start of
  // the turn's reply.
  function showHistory(messages) {
    if (!messages.length) return;
    const box = h("div", { class: "history" });
    let cards = [];
    const flush = () => {
      if (cards.length) box.append(h("article", { class: "msg assistant", "aria-label": "Assistant" }, cards));
      cards = [];
    };
    for (const msg of [...messages].reverse()) {
      const text = (msg.content && msg.content.text) || "";
      if (msg.direction === "inbound") {
        flush();
        box.append(userBubble(text));
        cards = (Array.isArray(msg.interactions) ? msg.interactions : []).map(pastCard).filter(Boolean);
      } else {
        box.append(h("article", { class: "msg assistant", "aria-label": "Assistant" }, cards, reply(text)));
        cards = [];
      }
    }
    flush();
    el.empty.hidden = true;
    el.log.insertBefore(box, el.empty.nextSibling);
    el.log.scrollTop = el.log.scrollHeight;
  }

  function userBubble(text) {
    return h("article", { class: "msg user", "aria-label": "You" }, h("p", { class: "text", text, dir: "auto" }));
  }

  function addNote(text) {
    append(h("p", { class: "note", text }));
  }

  // ---- summaries of ended cards --------------------------------------------

  // OUTCOMES are the words for a card that ended without values.
  const OUTCOMES = {
    declined: "Declined",
    no_response: "No answer in time.",
    withdrawn: "Answered in words.",
  };

  // pastCard is an ended card from the history: its heading and summary.
  function pastCard(c) {
    if (!c || typeof c !== "object" || typeof c.kind !== "string") return null;
    const spec = c.spec && typeof c.spec === "object" && !Array.isArray(c.spec) ? c.spec : {};
    const o = c.outcome && typeof c.outcome === "object" ? c.outcome : {};
    const how = o.status === "submitted" ? "answered" : o.status === "declined" ? "declined" : "closed";
    const text = o.status === "submitted" ? summary(c.kind, spec, o.values) : OUTCOMES[o.status] || "This card is closed.";
    const headingId = uid("card-title");
    return h("section", { class: "card", "data-kind": c.kind, "data-state": how, "aria-labelledby": headingId },
      h("h2", { class: "card-title", id: headingId, text: cardTitle(c.kind, spec) }),
      h("p", { class: "card-status", text, dir: "auto" }));
  }

  // cardTitle is a card's heading: its own card's, its x-ui title, or its
  // kind's name.
  function cardTitle(kind, spec) {
    if (CARDS[kind]) return CARDS[kind].title(spec);
    const info = state.kinds.get(kind);
    const t = ui(info && info.valuesSchema).title;
    return typeof t === "string" && t.trim() ? t : humanize(kind);
  }

  // summary is submitted values in one line, "Plan: Team · Topics: Pricing,
  // SSO", named as the card named them.
  function summary(kind, spec, values) {
    let parts = [];
    if (CARDS[kind] && CARDS[kind].summary) parts = CARDS[kind].summary(spec, values);
    else {
      const info = state.kinds.get(kind);
      const schema = formSchema(info && info.valuesSchema, spec);
      parts = schema ? valueParts(schema, values, spec) : [];
    }
    const line = parts.filter(Boolean).join(" · ");
    return line || "Answered";
  }

  const MAX_SHOWN = 80; // a longer text answer is cut in a summary

  function clip(text) {
    const chars = [...String(text)];
    return chars.length > MAX_SHOWN ? chars.slice(0, MAX_SHOWN - 1).join("") + "…" : chars.join("");
  }

  // valueParts is "Label: value" for each answered property of an object
  // schema, in the schema's order.
  function valueParts(schema, values, spec) {
    if (!values || typeof values !== "object" || Array.isArray(values) || !schema.properties) return [];
    const out = [];
    for (const [key, sub0] of Object.entries(schema.properties)) {
      if (!Object.prototype.hasOwnProperty.call(values, key)) continue;
      const sub = withOptions(bindSpec(sub0, spec), spec);
      const shown = valueText(sub, values[key], spec);
      if (shown === "") continue;
      const hints = ui(sub);
      const label = typeof hints.label === "string" && hints.label.trim() ? hints.label : humanize(key);
      out.push(`${label}: ${shown}`);
    }
    return out;
  }

  // valueText is one value as a person reads it: an option by its label,
  // a switch as Yes or No, a list joined with commas.
  function valueText(s, v, spec) {
    if (v === undefined || v === null || v === "") return "";
    if (typeof v === "boolean") return v ? "Yes" : "No";
    if (Array.isArray(v)) {
      const own = s && s.items && typeof s.items === "object" ? s.items : {};
      const items = withOptions(bindSpec(ui(s).options ? { ...own, "x-ui": { ...ui(own), options: ui(s).options } } : own, spec), spec);
      const merged = { ...items, "x-ui": { ...ui(items), labels: { ...labelsOf(items), ...labelsOf(s) } } };
      return v.map((x) => valueText(merged, x, spec)).filter(Boolean).join(", ");
    }
    if (typeof v === "object") {
      const inner = s && s.properties ? valueParts(s, v, spec) : Object.entries(v).map(([k, x]) => `${humanize(k)}: ${valueText({}, x, spec)}`);
      return inner.join(", ");
    }
    const names = labelsOf(s);
    return clip(typeof names[String(v)] === "string" ? names[String(v)] : v);
  }

  // ---- turns --------------------------------------------------------------

  function turnFor(rid) {
    let t = state.turns.get(rid);
    if (t) return t;
    const node = h("article", { class: "msg assistant", "aria-label": "Assistant", "data-request-id": rid });
    const typing = h("p", { class: "typing", "aria-label": "The assistant is writing" }, h("span"), h("span"), h("span"));
    node.append(typing);
    t = { rid, el: node, typing, seg: null, text: "", done: false, parked: false, tools: [] };
    state.turns.set(rid, t);
    append(node);
    return t;
  }

  // put adds node to the turn's bubble, before the typing dots.
  function put(t, node) {
    keepScrolled(() => {
      if (t.typing.parentNode === t.el) t.el.insertBefore(node, t.typing);
      else t.el.append(node);
    });
  }

  // watched is the turn of an event this tab did not ask for: another tab's,
  // or one the server resumed elsewhere. It is shown as it streams.
  function watched(rid) {
    if (!rid || state.pending.has(rid)) return undefined;
    return state.turns.get(rid) || turnFor(rid);
  }

  // reply is a bubble's block of reply text, drawn from its Markdown.
  function reply(text) {
    const node = h("div", { class: "text md", dir: "auto" });
    node.md = text;
    drawMarkdown(node);
    return node;
  }

  // drawMarkdown renders node.md with marked and sanitises the HTML with
  // DOMPurify (links only to http(s) and mailto, opening in a new tab):
  // nothing a model writes runs as HTML. Without the libraries it is text.
  function drawMarkdown(node) {
    if (!window.marked || !window.DOMPurify) {
      node.textContent = node.md;
      return;
    }
    const html = window.marked.parse(node.md, { gfm: true, breaks: true, async: false });
    node.innerHTML = window.DOMPurify.sanitize(html, { ALLOWED_URI_REGEXP: /^(?:https?:|mailto:|#)/i, FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select"] });
  }

  if (window.DOMPurify) {
    window.DOMPurify.addHook("afterSanitizeAttributes", (node) => {
      if (node.tagName === "A" && node.hasAttribute("href")) {
        node.setAttribute("target", "_blank");
        node.setAttribute("rel", "noopener noreferrer");
      }
    });
  }

  function onToken(m) {
    const t = watched(m.requestId);
    if (!t || t.done) return;
    const tok = m.token ?? (m.data && m.data.token) ?? "";
    if (!tok) return;
    if (!t.seg || t.seg.nextSibling !== t.typing) {
      t.seg = reply("");
      put(t, t.seg);
    }
    t.seg.md += tok;
    keepScrolled(() => drawMarkdown(t.seg));
    t.text += tok;
  }

  // plumbing tells the tools whose lines the transcript hides: a kind's
  // raise tool and the conversational submit, whose card (or words) is what
  // the person sees.
  function plumbing(name) {
    if (name === "submit_interaction") return true;
    for (const k of state.kinds.values()) if ((k.toolName || "request_" + k.name) === name) return true;
    return Object.keys(CARDS).some((k) => "request_" + k === name);
  }

  function onChunk(m) {
    const t = watched(m.requestId);
    if (!t || t.done) return;
    const raw = (m.data && m.data.state && m.data.state.rawResponse) || {};
    const name = m.node || (m.data && m.data.node) || "tool";
    if (raw.toolCall) {
      const tool = toolLine(name, raw.toolCall.arguments);
      t.tools.push(tool);
      // A raise tool's call arrives after its card: show it above the card.
      const card = [...state.cards.values(), ...(t.confirm ? [t.confirm] : [])]
        .find((c) => c.turn === t && c.toolName === name && !c.callShown);
      if (card) {
        card.callShown = true;
        if (card.state === "open" || card.state === "sending") tool.waiting();
        card.tool = tool;
        if (card.showArgs) card.showArgs(raw.toolCall.arguments);
        keepScrolled(() => t.el.insertBefore(tool.el, card.el));
      } else {
        put(t, tool.el);
      }
    } else if (raw.toolResult) {
      const r = raw.toolResult;
      let tool = [...t.tools].reverse().find((x) => x.name === name && !x.finished);
      if (!tool) {
        tool = toolLine(name, undefined);
        t.tools.push(tool);
        put(t, tool.el);
      }
      tool.finish(r.result, r.isError);
      settleCards(t, r.result, tool);
    }
  }

  // settleCards closes a turn's cards that are still open once the turn
  // runs on: they were answered (here, in another tab, or by the deadline).
  function settleCards(t, result, tool) {
    let payload = {};
    try { payload = JSON.parse(result) || {}; } catch { /* not a payload */ }
    for (const c of state.cards.values()) {
      if (c.turn !== t) continue;
      if (c.state === "open" || c.state === "sending") c.closeWith(payload);
      else if (c.state === "answered" && c.tool === tool && payload.status === "submitted") c.closeWith(payload); // the values as the server kept them
    }
  }

  function toolLine(name, args) {
    const label = h("span", { class: "tool-state", text: "running" });
    const hidden = plumbing(name); // kept in the page, not shown
    const body = h("div", { class: "tool-body" });
    if (args !== undefined) body.append(h("p", { class: "tool-h", text: "Arguments" }), h("pre", { text: JSON.stringify(args, null, 2) }));
    const node = h("details", { class: "tool", "data-tool": name, "data-state": "running", hidden },
      h("summary", {}, h("span", { class: "tool-icon", "aria-hidden": "true", text: "⚙" }), " ", h("span", { class: "tool-name", text: name }), " · ", label),
      body);
    const tool = {
      name, el: node, finished: false,
      waiting() {
        node.dataset.state = "waiting";
        label.textContent = "waiting for your answer";
      },
      resumed() {
        if (node.dataset.state !== "waiting") return;
        node.dataset.state = "running";
        label.textContent = "running";
      },
      finish(result, isError) {
        tool.finished = true;
        node.dataset.state = isError ? "failed" : "done";
        label.textContent = isError ? "failed" : "done";
        let shown = result;
        try { shown = JSON.stringify(JSON.parse(result), null, 2); } catch { /* plain text */ }
        body.append(h("p", { class: "tool-h", text: "Result" }), h("pre", { text: shown ?? "" }));
      },
    };
    return tool;
  }

  // copyButton copies a finished reply's text, as written (its Markdown).
  function copyButton(text) {
    const b = h("button", { type: "button", class: "copy quiet", "aria-label": "Copy the reply", text: "Copy" });
    b.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(text);
        b.textContent = "Copied";
      } catch {
        b.textContent = "Could not copy";
      }
      setTimeout(() => { b.textContent = "Copy"; }, 2000);
    });
    return b;
  }

  function finishTurn(t, note, isError) {
    if (t.done) return;
    t.done = true;
    t.parked = false;
    t.typing.remove();
    if (note) t.el.append(h("p", { class: isError ? "turn-error" : "turn-note", role: isError ? "alert" : null, text: note }));
    for (const c of state.cards.values()) {
      if (c.turn === t && (c.state === "open" || c.state === "sending")) c.close("closed");
    }
    if (state.active === t.rid) state.active = null;
    updateComposer();
  }

  function onEventual(m) {
    const t = watched(m.requestId);
    if (!t) return;
    const parts = (m.data && m.data.data && m.data.data.response && m.data.data.response.responseParts) || [];
    const full = parts.join("");
    if (!t.text && full) {
      put(t, reply(full));
      t.text = full;
    }
    showSources(t, (m.data && m.data.data && m.data.data.citations) || []);
    if (t.text) t.el.append(copyButton(t.text));
    finishTurn(t);
    if (t.text) announce("Assistant: " + t.text.slice(0, 400));
  }

  // showSources lists the documents the reply drew on. A citation that
  // shares no word with the message (score 0) only fills a place, so it is
  // not shown; a link is only made for an http(s) address.
  function showSources(t, citations) {
    const used = citations.filter((c) => c && c.title && c.score > 0);
    if (!used.length) return;
    const items = used.map((c, i) => {
      const attrs = { title: c.snippet || null };
      const name = /^https?:\/\//.test(c.url || "")
        ? h("a", { ...attrs, href: c.url, target: "_blank", rel: "noopener noreferrer" }, c.title)
        : h("span", attrs, c.title);
      return [i ? ", " : "", name];
    });
    put(t, h("p", { class: "sources" }, "Sources: ", items));
  }

  function onCancelled(m) {
    const t = state.turns.get(m.requestId);
    if (!t) return;
    const inWords = [...state.cards.values()].find((c) => c.turn === t && c.inWords);
    if (inWords) {
      inWords.close("closed", "Answered in words.");
      finishTurn(t);
      return;
    }
    finishTurn(t, "Stopped.");
  }

  function onError(m) {
    const err = m.error || (m.data && m.data.error) || {};
    const rid = m.requestId;
    const what = rid ? state.pending.get(rid) : undefined;
    if (what) state.pending.delete(rid);
    if (what === "create") {
      showNotice("Could not start the conversation: " + readable(err));
      return;
    }
    if (what === "history") return; // the history is a nicety
    if (what === "confirm") {
      const c = state.confirms.get(rid);
      if (c) c.fail(readable(err));
      return;
    }
    const card = [...state.cards.values()].find((c) => c.state === "sending" && c.rid === rid);
    if (card) {
      if (err.code === "NO_PENDING_INTERACTION" || err.code === "INTERACTION_MISMATCH") {
        card.close("closed", readable(err));
        if (card.turn && !card.turn.done && state.active === card.turn.rid) {
          state.active = null;
          updateComposer();
        }
      } else {
        card.setState("open");
        card.generalError(readable(err));
      }
      return;
    }
    const t = rid && state.turns.get(rid);
    if (t && !t.done) {
      finishTurn(t, readable(err), true);
      if (err.code === "SESSION_NOT_FOUND") reconnectNow();
      return;
    }
    showNotice(readable(err));
  }

  function reconnectNow() {
    const ws = state.ws;
    state.ws = null;
    state.sessionId = null;
    if (ws) ws.close();
    connect();
  }

  // ---- sending ------------------------------------------------------------

  el.composer.addEventListener("submit", (e) => {
    e.preventDefault();
    const text = el.message.value.trim();
    const card = openCard();
    if (!text || !state.sessionId || (state.active && !card)) return;
    const rid = nextId("msg");
    const frame = { action: "send_message", requestId: rid, sessionId: state.sessionId, message: text, stream: true };
    if (card) frame.withdrawInteraction = card.id;
    if (!send(frame)) return;
    if (card) card.inWords = true;
    append(userBubble(text));
    state.active = rid;
    turnFor(rid);
    el.message.value = "";
    autosize();
    updateComposer();
  });

  el.message.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      el.composer.requestSubmit();
    }
  });

  function autosize() {
    el.message.style.height = "auto";
    el.message.style.height = Math.min(el.message.scrollHeight, 160) + "px";
  }
  el.message.addEventListener("input", autosize);

  el.fresh.addEventListener("click", () => {
    save(null);
    state.conversationId = null;
    state.turns.clear();
    state.cards.clear();
    state.confirms.clear();
    state.active = null;
    state.historyShown = true;
    for (const node of [...el.log.children]) if (node !== el.empty) node.remove();
    el.empty.hidden = false;
    showNotice("");
    reconnectNow();
    el.message.focus();
  });

  // ---- cards --------------------------------------------------------------

  function onInteraction(m) {
    const d = (m.data && m.data.data) || {};
    if (!d.interactionId) return;
    const rid = m.requestId;
    const existing = state.cards.get(d.interactionId);
    const t = turnFor(rid);
    t.parked = true;
    t.done = false;
    state.active = rid;
    updateComposer();
    if (existing) {
      // The same card again, after a reconnect: keep what was typed.
      existing.rid = rid;
      existing.sessionId = state.sessionId;
      if (existing.state !== "open") existing.setState("open");
      return;
    }
    const card = buildCard(d, rid, t);
    state.cards.set(d.interactionId, card);
    updateComposer();
    t.el.dataset.parked = "true";
    put(t, card.el);
    t.seg = null;
    const a = document.activeElement;
    const focusWasIdle = !a || a === document.body || a === el.send;
    card.el.scrollIntoView({ block: "nearest" });
    if (focusWasIdle) card.heading.focus({ preventScroll: true });
    announce("The assistant asks: " + card.heading.textContent + ". Answer the card, or decline it.");
  }

  function onInvalid(m) {
    const d = (m.data && m.data.data) || {};
    const card = state.cards.get(d.interactionId) || [...state.cards.values()].find((c) => c.state === "sending");
    if (!card) return;
    card.setState("open");
    card.showErrors(d.errors || [], d.message || "Some fields need attention.");
  }

  function buildCard(d, rid, turn) {
    const kind = d.kind;
    const info = state.kinds.get(kind);
    const own = CARDS[kind];
    const spec = d.spec || {};
    const headingId = uid("card-title");
    const heading = h("h2", { class: "card-title", id: headingId, tabindex: "-1" });
    const generalErr = h("p", { class: "card-error", role: "alert", hidden: true });
    const submit = h("button", { type: "submit", class: "primary" }, "Submit");
    const decline = h("button", { type: "button", class: "quiet" }, "Decline");
    const body = h("div", { class: "card-body" });
    const form = h("form", { novalidate: true, "aria-labelledby": headingId }, body, generalErr,
      h("div", { class: "card-actions" }, submit, decline));
    const status = h("p", { class: "card-status", role: "status", tabindex: "-1" });
    const reason = d.reason ? h("p", { class: "card-reason", text: "Asked " + d.reason }) : null;
    const node = h("section", { class: "card", "data-kind": kind, "data-interaction-id": d.interactionId, "data-state": "open", "aria-labelledby": headingId },
      heading, reason, form, status);

    const card = {
      id: d.interactionId, kind, rid, turn, sessionId: state.sessionId, el: node, heading, state: "open",
      toolName: (info && info.toolName) || "request_" + kind, callShown: false,
      fields: new Map(), // error field → {err, focus, mark}
      aliases: new Map(), // index in the sent values → its row's path (rowPath)
      collect: () => ({}),
      setState(s) {
        card.state = s;
        node.dataset.state = s;
        const busy = s === "sending";
        submit.disabled = busy;
        decline.disabled = busy;
        form.setAttribute("aria-busy", busy ? "true" : "false");
      },
      clearErrors() {
        generalErr.hidden = true;
        generalErr.textContent = "";
        for (const f of card.fields.values()) f.mark("");
      },
      generalError(text, stale) {
        generalErr.textContent = text;
        generalErr.hidden = false;
        card.stale = !!stale;
      },
      // clearStale clears an error that only said the page was offline.
      clearStale() {
        if (card.stale) {
          generalErr.hidden = true;
          generalErr.textContent = "";
        }
        card.stale = false;
      },
      showErrors(errors, message) {
        card.clearErrors();
        const general = [];
        const byField = new Map();
        for (const e of errors) {
          const f = lookupField(card.fields, rowPath(card.aliases, e.field));
          if (!f) { general.push(e.field && e.field !== "values" && e.field !== "answers" ? `${e.field}: ${e.message}` : sentence(e.message)); continue; }
          if (!byField.has(f)) byField.set(f, []);
          byField.get(f).push(e.message);
        }
        for (const [f, msgs] of byField) f.mark(msgs.map(sentence).join(" "));
        card.generalError([message, ...general].filter(Boolean).join(" "));
        const first = [...card.fields.values()].find((f) => byField.has(f));
        if (first) first.focus();
      },
      close(how, text) {
        card.setState(how);
        turn.parked = false;
        delete turn.el.dataset.parked;
        updateComposer();
        if (card.tool) card.tool.resumed();
        for (const c of form.querySelectorAll("button, input, select, textarea")) c.disabled = true;
        generalErr.hidden = true;
        const label = text || { answered: "Answered", declined: "Declined", closed: "This card is closed." }[how] || how;
        status.textContent = label;
        const hadFocus = node.contains(document.activeElement) || document.activeElement === document.body;
        if (hadFocus) el.message.focus();
      },
    };
    // closeWith closes the card with its outcome's one-line summary.
    card.closeWith = (payload) => {
      const st = payload && payload.status;
      if (st === "submitted") card.close("answered", summary(kind, card.spec, payload.values));
      else if (st === "declined") card.close("declined");
      else card.close("closed", OUTCOMES[st]);
    };
    card.spec = spec && typeof spec === "object" && !Array.isArray(spec) ? spec : {};
    card.setState("open");

    if (own) {
      heading.textContent = own.title(spec);
      own.render(card, spec, body);
    } else {
      heading.textContent = humanize(kind);
      renderGeneric(card, spec, info, body);
    }

    form.addEventListener("submit", (e) => {
      e.preventDefault();
      if (card.state !== "open") return;
      card.clearErrors();
      let values;
      try {
        values = card.collect();
      } catch (err) {
        card.generalError(err.message);
        return;
      }
      submitCard(card, { values });
    });
    decline.addEventListener("click", () => {
      if (card.state !== "open") return;
      card.clearErrors();
      submitCard(card, { declined: true });
    });
    return card;
  }

  function submitCard(card, extra) {
    card.sent = extra.values;
    const frame = { action: "submit_interaction", requestId: card.rid, sessionId: state.sessionId || card.sessionId, interactionId: card.id, kind: card.kind, ...extra };
    if (!state.sessionId || !send(frame)) {
      card.generalError(NOT_CONNECTED, true);
      return;
    }
    card.setState("sending");
  }

  // rowPath turns a path into the sent values ("a[1].b") into the path of
  // the form's field (the row that was sent second), segment by segment.
  function rowPath(aliases, name) {
    let out = "";
    for (const seg of String(name ?? "").match(/\[[^\]]*\]|\.?[^.[]+/g) || []) {
      out += seg;
      if (aliases.has(out)) out = aliases.get(out);
    }
    return out;
  }

  // lookupField finds where an error's field belongs: the exact path, else
  // its nearest parent (a.b[0].c → a.b[0] → a.b → a).
  function lookupField(fields, name) {
    let key = String(name ?? "");
    while (key) {
      if (fields.has(key)) return fields.get(key);
      const cut = Math.max(key.lastIndexOf("."), key.lastIndexOf("["));
      if (cut <= 0) break;
      key = key.slice(0, cut);
    }
    return null;
  }

  // errorSlot makes a field's error line and the mark function that fills
  // it and flags the controls.
  function errorSlot(controls) {
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

  function requiredMark() {
    return [h("span", { class: "req", "aria-hidden": "true", text: " *" }), h("span", { class: "sr-only", text: " (required)" })];
  }

  // ---- choices ------------------------------------------------------------

  function choicesTitle(spec) {
    const n = (spec.questions || []).length;
    return n > 1 ? "A few questions" : "A quick question";
  }

  // choicesSummary is each question's header and what was picked or written.
  function choicesSummary(spec, values) {
    const answers = values && Array.isArray(values.answers) ? values.answers : [];
    return answers.map((a) => {
      if (!a || typeof a !== "object") return "";
      const picks = [...(Array.isArray(a.options) ? a.options : []), a.other].filter((x) => typeof x === "string" && x.trim()).map(clip);
      return picks.length ? `${a.header}: ${picks.join(", ")}` : "";
    });
  }

  function renderChoices(card, spec, body) {
    const questions = spec.questions || [];
    const readers = [];
    for (const q of questions) {
      const multi = q.multiSelect === true;
      const hintId = uid("hint");
      const chips = [];
      const group = h("div", { class: "chips", role: "group", "aria-label": `Options for ${q.header}`, "aria-describedby": hintId });
      for (const opt of q.options || []) {
        const label = typeof opt === "string" ? opt : opt.label;
        const desc = typeof opt === "string" ? "" : opt.description;
        const chip = h("button", { type: "button", class: "chip", "aria-pressed": "false", "data-label": label, dir: "auto" },
          h("span", { class: "chip-label", text: label }),
          desc ? h("span", { class: "chip-desc", text: desc }) : null);
        chip.addEventListener("click", () => {
          if (card.state !== "open") return;
          const on = chip.getAttribute("aria-pressed") !== "true";
          if (on && !multi) {
            for (const c of chips) c.setAttribute("aria-pressed", "false");
            other.value = ""; // a single answer: the chip replaces the words
          }
          chip.setAttribute("aria-pressed", on ? "true" : "false");
          slot.mark("");
        });
        chips.push(chip);
        group.append(chip);
      }
      const otherId = uid("other");
      const other = h("input", { type: "text", id: otherId, class: "other", name: `other-${q.header}`, autocomplete: "off", placeholder: "In your own words", dir: "auto" });
      const slot = errorSlot(() => [group, other]);
      other.addEventListener("input", () => {
        if (!multi && other.value.trim()) for (const c of chips) c.setAttribute("aria-pressed", "false");
        slot.mark("");
      });
      // Enter in a one-line answer moves on; the card is sent with its button.
      for (const type of ["keydown", "keypress"]) {
        other.addEventListener(type, (e) => {
          if (e.key === "Enter" && !e.isComposing) e.preventDefault();
        });
      }
      const fs = h("fieldset", { class: "question", "data-header": q.header },
        h("legend", { dir: "auto" }, h("span", { class: "q-header", text: q.header }), h("span", { class: "q-text", text: q.question })),
        h("p", { class: "hint", id: hintId, text: multi ? "Pick any that apply." : "Pick one." }),
        group,
        h("div", { class: "other-row" }, h("label", { for: otherId, text: "Other" }, h("span", { class: "sr-only", text: ` answer for ${q.header}` })), other),
        slot.err);
      body.append(fs);
      card.fields.set(q.header, { err: slot.err, mark: slot.mark, focus: () => (chips[0] || other).focus() });
      readers.push(() => {
        const a = { header: q.header, options: chips.filter((c) => c.getAttribute("aria-pressed") === "true").map((c) => c.dataset.label) };
        if (other.value.trim()) a.other = other.value.trim();
        return a;
      });
    }
    card.collect = () => ({ answers: readers.map((r) => r()) });
  }

  // ---- identity_intake -----------------------------------------------------

  const IDENTITY = {
    name: { label: "Name", type: "text", autocomplete: "name" },
    email: { label: "Email", type: "email", autocomplete: "email", inputmode: "email" },
    phone: { label: "Phone", type: "tel", autocomplete: "tel", inputmode: "tel" },
  };

  // identitySummary names each given field as the card did.
  function identitySummary(spec, values) {
    if (!values || typeof values !== "object") return [];
    const named = new Map();
    for (const f of (spec && Array.isArray(spec.fields) ? spec.fields : [])) {
      if (f && typeof f === "object" && f.key && f.label && !named.has(f.key)) named.set(f.key, f.label);
    }
    return Object.entries(values).filter(([, v]) => typeof v === "string" && v).map(([k, v]) =>
      `${named.get(k) || (IDENTITY[k] || {}).label || humanize(k)}: ${clip(v)}`);
  }

  function renderIdentity(card, spec, body) {
    const seen = new Map();
    for (const f of spec.fields || []) {
      const key = typeof f === "string" ? f : f.key;
      const req = typeof f === "string" ? true : f.required !== false;
      const prev = seen.get(key);
      if (prev) { prev.required = prev.required || req; continue; }
      seen.set(key, { key, required: req, label: typeof f === "object" && f.label ? f.label : null });
    }
    const inputs = [];
    if ([...seen.values()].some((f) => f.required)) body.append(h("p", { class: "hint", text: "Fields marked * are required." }));
    for (const f of seen.values()) {
      const meta = IDENTITY[f.key] || { label: humanize(f.key), type: "text" };
      const id = uid("id-" + f.key);
      const input = h("input", { id, name: f.key, type: meta.type, autocomplete: meta.autocomplete, inputmode: meta.inputmode, "aria-required": f.required ? "true" : null, spellcheck: "false" });
      const slot = errorSlot(() => [input]);
      input.addEventListener("input", () => slot.mark(""));
      body.append(h("div", { class: "field", "data-field": f.key },
        h("label", { for: id }, f.label || meta.label, f.required ? requiredMark() : null), input, slot.err));
      card.fields.set(f.key, { err: slot.err, mark: slot.mark, focus: () => input.focus() });
      inputs.push([f.key, input]);
    }
    card.collect = () => {
      const v = {};
      for (const [key, input] of inputs) if (input.value !== "") v[key] = input.value;
      return v;
    };
  }

  // ---- any other kind: a form from its Values schema -----------------------
  //
  // The form is drawn from the kind's Values schema and the card's spec.
  // Descriptions are written for the model and for developers, and titles
  // name Go types, so neither is shown; what a person reads comes from the
  // x-ui hints a kind may put in its schema (docs/adding-a-kind.md):
  //
  //   on Values:     {"title": heading, "text": [spec pointers shown as text]}
  //   on a property: {"label", "help", "widget", "labels", "minLabel",
  //                   "maxLabel", "bind": {keyword: spec pointer},
  //                   "options": {"from": spec pointer, "value", "label"},
  //                   "showIf": spec pointer}
  //
  // Without hints, a card shows the spec's question (PROMPT_KEYS) and its
  // lists (the options a person picks from), never its flags or settings.

  // The spec keys a generic card shows as its question, first one wins.
  const PROMPT_KEYS = ["question", "prompt", "title", "message", "text"];
  const MAX_CHIPS = 12; // more enum values than this get a drop-down
  const MAX_SCALE = 11; // a bounded integer with at most this many values is a row of buttons
  const HINT_KEYS = new Set(["label", "help", "minLabel", "maxLabel", "labels", "widget"]); // bind targets that are hints, not keywords

  function renderGeneric(card, spec, info, body) {
    const schema = info && info.valuesSchema;
    const hints = ui(schema);
    if (typeof hints.title === "string" && hints.title.trim()) card.heading.textContent = hints.title;
    body.append(...specText(card.spec, schema));
    // schemaFrom: the form is the schema the spec carries (an MCP server's
    // requested schema), else, if that is not a flat object schema, the
    // kind's own.
    const form = formSchema(schema, card.spec);
    const root = form ? field(card, form, "", null, true, 0) : jsonField(card, "", "Answer (JSON)", true);
    body.append(root.el);
    card.collect = () => {
      const v = root.read();
      const errs = root.check ? root.check(v) : [];
      if (errs.length) {
        const message = "Some fields need attention.";
        card.showErrors(errs.map(([f, m]) => ({ field: f, message: m })), message);
        throw new Error(message);
      }
      return v === undefined ? {} : v;
    };
  }

  // formSchema is the schema a generic card's form is drawn from: the one
  // the spec carries where the kind's x-ui schemaFrom points (an MCP
  // server's requested schema), else, if that is not a flat object
  // schema, the kind's own.
  function formSchema(schema, spec) {
    const from = ui(schema).schemaFrom;
    return (typeof from === "string" && peopleSchema(pointer(spec, from))) || schema;
  }

  // peopleSchema turns a schema written for people, as an MCP server's
  // requested schema is (flat: top-level properties of strings, numbers,
  // booleans, single- and multi-select enums), into the form's dialect:
  // each title becomes its label, each description its help, titled
  // options an enum with labels. It keeps only the keywords that shape
  // allows: the schema comes from outside, so no hint or binding of its
  // own reaches the form. It is null for anything that is not an object
  // schema with properties.
  function peopleSchema(s) {
    const obj = (x) => !!x && typeof x === "object" && !Array.isArray(x);
    if (!obj(s) || !obj(s.properties)) return null;
    const properties = Object.create(null); // a "__proto__" property stays a property
    for (const [key, p] of Object.entries(s.properties)) if (obj(p)) properties[key] = peopleProperty(p);
    if (!Object.keys(properties).length) return null;
    const required = Array.isArray(s.required) ? s.required.filter((k) => typeof k === "string" && k in properties) : [];
    return { type: "object", properties, required };
  }

  const PEOPLE_KEYWORDS = ["type", "minLength", "maxLength", "format", "minimum", "maximum", "default", "minItems", "maxItems"];

  function peopleProperty(p) {
    const out = {};
    for (const k of PEOPLE_KEYWORDS) if (p[k] !== undefined) out[k] = p[k];
    const hints = {};
    if (typeof p.title === "string" && p.title.trim()) hints.label = p.title.trim();
    if (typeof p.description === "string" && p.description.trim()) hints.help = p.description.trim();
    const titled = titledOptions(p.oneOf) || titledOptions(p.anyOf);
    const plain = enumOptions(p.enum, p.enumNames);
    const pick = titled || plain;
    if (pick) {
      out.enum = pick.values;
      hints.labels = pick.labels;
      if (!out.type) out.type = "string";
    }
    if (p.type === "array" && p.items && typeof p.items === "object") {
      const items = { type: typeof p.items.type === "string" ? p.items.type : "string" };
      const many = titledOptions(p.items.anyOf) || titledOptions(p.items.oneOf) || enumOptions(p.items.enum, p.items.enumNames);
      if (many) {
        items.enum = many.values;
        items["x-ui"] = { labels: many.labels };
      }
      out.items = items;
    }
    out["x-ui"] = hints;
    return out;
  }

  const pickable = (v) => typeof v === "string" || (typeof v === "number" && Number.isFinite(v));

  // titledOptions reads [{const, title}] as values and their labels.
  function titledOptions(list) {
    if (!Array.isArray(list)) return null;
    const values = [];
    const labels = {};
    for (const o of list) {
      if (!o || typeof o !== "object" || !pickable(o.const)) continue;
      values.push(o.const);
      if (typeof o.title === "string" && o.title.trim()) labels[String(o.const)] = o.title.trim();
    }
    return values.length ? { values, labels } : null;
  }

  // enumOptions reads an enum, named by the legacy enumNames if given.
  function enumOptions(values, names) {
    if (!Array.isArray(values)) return null;
    const labels = {};
    const kept = [];
    values.forEach((v, i) => {
      if (!pickable(v)) return;
      kept.push(v);
      if (Array.isArray(names) && typeof names[i] === "string" && names[i].trim()) labels[String(v)] = names[i].trim();
    });
    return kept.length ? { values: kept, labels } : null;
  }

  // ui is a schema's x-ui hints, or none.
  function ui(s) {
    const x = s && s["x-ui"];
    return x && typeof x === "object" && !Array.isArray(x) ? x : {};
  }

  // hinted says whether a kind wrote any x-ui hint: then the spec shows
  // only what its hints name.
  const hinted = (schema) => !!schema && JSON.stringify(schema).includes('"x-ui"');

  // pointer resolves a JSON pointer ("/scale/min") in doc.
  function pointer(doc, ptr) {
    if (typeof ptr !== "string" || (ptr !== "" && !ptr.startsWith("/"))) return undefined;
    let v = doc;
    for (const raw of ptr ? ptr.slice(1).split("/") : []) {
      if (v === null || typeof v !== "object") return undefined;
      v = v[raw.replace(/~1/g, "/").replace(/~0/g, "~")];
    }
    return v;
  }

  // specText is what of the spec a person reads.
  function specText(spec, schema) {
    const hints = ui(schema);
    const para = (v) => h("p", { class: "q-text", text: String(v), dir: "auto" });
    const texty = (v) => (typeof v === "string" && v.trim()) || typeof v === "number";
    if (Array.isArray(hints.text)) return hints.text.map((p) => pointer(spec, p)).filter(texty).map(para);
    const out = [];
    const key = PROMPT_KEYS.find((k) => typeof spec[k] === "string" && spec[k].trim());
    if (key) out.push(para(spec[key]));
    if (hinted(schema)) return out;
    for (const [k, v] of Object.entries(spec)) {
      if (k === key || !Array.isArray(v) || !v.length) continue;
      out.push(h("div", { class: "spec" }, h("p", { class: "spec-label", text: humanize(k) }), describe(v)));
    }
    return out;
  }

  // describe renders a list from a spec for a person: flat objects as
  // "a — Pizza" lines.
  function describe(v) {
    if (v === null || v === undefined) return null;
    if (Array.isArray(v)) {
      if (v.every(scalar)) return h("span", { text: v.map(show).join(", "), dir: "auto" });
      return h("ul", {}, v.map((x) => h("li", { dir: "auto" }, flat(x) ? Object.values(x).map(show).join(" — ") : describe(x))));
    }
    if (typeof v === "object") return h("span", { text: Object.values(v).filter(scalar).map(show).join(" — "), dir: "auto" });
    return h("span", { text: show(v), dir: "auto" });
  }
  const scalar = (x) => x === null || typeof x !== "object";
  const show = (x) => (x === true ? "yes" : x === false ? "no" : String(x));
  const flat = (x) => x && typeof x === "object" && !Array.isArray(x) && Object.values(x).every(scalar);

  function typeOf(s) {
    if (!s || typeof s !== "object") return "any";
    if ("const" in s) return "const";
    let t = s.type;
    if (Array.isArray(t)) t = t.find((x) => x !== "null") || t[0];
    if (!t && Array.isArray(s.enum) && s.enum.length) t = typeof s.enum[0] === "number" ? "number" : typeof s.enum[0] === "boolean" ? "boolean" : "string";
    if (!t && s.properties) t = "object";
    if (!t && s.items) t = "array";
    return t || "any";
  }

  const join = (path, key) => (path ? `${path}.${key}` : String(key));

  // bindSpec fills a schema's x-ui bind from the card's spec: a bound
  // keyword (minimum, maximum, enum, maxLength…) joins the schema, a bound
  // hint (minLabel, maxLabel…) its x-ui.
  function bindSpec(s, spec) {
    const hints = ui(s);
    if (!hints.bind || typeof hints.bind !== "object") return s;
    const out = { ...s, "x-ui": { ...hints } };
    for (const [k, ptr] of Object.entries(hints.bind)) {
      const v = pointer(spec, ptr);
      if (v === undefined || v === null) continue;
      if (HINT_KEYS.has(k)) out["x-ui"][k] = v;
      else out[k] = v;
    }
    return out;
  }

  // withOptions turns an x-ui options hint ({from: spec pointer to a list,
  // value: key, label: key}) into an enum with its labels: the picks come
  // from the spec.
  function withOptions(s, spec) {
    const o = ui(s).options;
    if (!o || typeof o !== "object") return s;
    const list = pointer(spec, o.from);
    if (!Array.isArray(list) || !list.length) return s;
    const labels = {};
    const values = [];
    for (const item of list) {
      const obj = item && typeof item === "object";
      const v = obj ? (o.value ? item[o.value] : undefined) : item;
      if (v === undefined || v === null || typeof v === "object") continue;
      values.push(v);
      if (obj && o.label && item[o.label] !== undefined) labels[String(v)] = String(item[o.label]);
    }
    if (!values.length) return s;
    return { ...s, enum: values, "x-ui": { ...ui(s), labels: { ...labels, ...(ui(s).labels || {}) } } };
  }

  // field builds the control(s) for one schema at path and returns
  // {el, read, check, focus}; read returns undefined for "nothing entered",
  // check(value) the [path, message] pairs of what is wrong with it.
  function field(card, s0, path, name, required, depth) {
    const s = withOptions(bindSpec(s0, card.spec), card.spec);
    const hints = ui(s);
    if (hints.showIf !== undefined && pointer(card.spec, hints.showIf) !== true) {
      return { el: null, read: () => undefined, check: () => [], focus() {} };
    }
    const type = typeOf(s);
    const label = typeof hints.label === "string" && hints.label.trim() ? hints.label : humanize(name || "value");
    if (type === "object" && s.properties) return objectField(card, s, path, name, label, required, depth);
    if (type === "array") return arrayField(card, s, path, label, required, depth);
    if (type === "const") return { el: h("span", { hidden: true }), read: () => s.const, check: () => [], focus() {} };
    if (type === "boolean") return boolField(card, s, path, label);
    const widget = hints.widget;
    if (Array.isArray(s.enum) && s.enum.length && widget !== "select" && (s.enum.length <= MAX_CHIPS || widget === "chips")) {
      return chipsField(card, s, path, label, required, s.enum, false);
    }
    if (type === "integer" && widget !== "number") {
      const lo = Number(s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : NaN));
      const hi = Number(s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - 1 : NaN));
      if (Number.isInteger(lo) && Number.isInteger(hi) && hi >= lo && hi - lo < MAX_SCALE) {
        const points = [];
        for (let n = lo; n <= hi; n++) points.push(n);
        return chipsField(card, s, path, label, required, points, true);
      }
    }
    if (["string", "number", "integer"].includes(type)) return scalarField(card, s, type, path, label, required);
    return jsonField(card, path, label + " (JSON)", required, s);
  }

  // help is a field's help text: its x-ui help, never its description.
  function help(s, id) {
    const text = ui(s).help;
    return typeof text === "string" && text.trim() ? h("p", { class: "help", id, text }) : null;
  }

  function labelled(id, label, required, s) {
    return [h("label", { for: id }, label, required ? requiredMark() : null), s ? help(s, id + "-help") : null];
  }

  function register(card, path, slot, focus) {
    card.fields.set(path || "values", { err: slot.err, mark: slot.mark, focus });
  }

  const REQUIRED = "This is required.";

  // chipsField is one pick (or, with multi, any) from values as toggle
  // buttons; a scale is a row of numbers with words for its ends.
  function chipsField(card, s, path, label, required, values, scale, multi) {
    const hints = ui(s);
    const legendId = uid("lbl");
    const helpNode = help(s, uid("help"));
    const names = hints.labels && typeof hints.labels === "object" ? hints.labels : {};
    const ends = scale ? [hints.minLabel, hints.maxLabel].map((x) => (typeof x === "string" && x.trim() ? x.trim() : "")) : ["", ""];
    const group = h("div", { class: scale ? "chips scale" : "chips", role: "group", "aria-labelledby": legendId, "aria-describedby": helpNode ? helpNode.id : null });
    const slot = errorSlot(() => [group]);
    const chips = values.map((v, i) => {
      const text = typeof names[String(v)] === "string" ? names[String(v)] : String(v);
      const end = i === 0 ? ends[0] : i === values.length - 1 ? ends[1] : "";
      const chip = h("button", { type: "button", class: "chip", "aria-pressed": "false", "data-value": String(v), dir: "auto",
        "aria-label": end ? `${text}, ${end}` : null }, h("span", { class: "chip-label", text }));
      chip.addEventListener("click", () => {
        if (card.state !== "open") return;
        const on = chip.getAttribute("aria-pressed") !== "true";
        if (!multi) for (const c of chips) c.setAttribute("aria-pressed", "false");
        chip.setAttribute("aria-pressed", on ? "true" : "false");
        slot.mark("");
      });
      group.append(chip);
      return chip;
    });
    // A default is picked to begin with: one value, or a list of them.
    const defaults = multi ? (Array.isArray(s.default) ? s.default : []) : s.default === undefined ? [] : [s.default];
    values.forEach((v, i) => { if (defaults.includes(v)) chips[i].setAttribute("aria-pressed", "true"); });
    const endRow = ends[0] || ends[1]
      ? h("div", { class: "scale-ends", "aria-hidden": "true" }, h("span", { text: ends[0], dir: "auto" }), h("span", { text: ends[1], dir: "auto" }))
      : null;
    const focus = () => (chips.find((c) => c.getAttribute("aria-pressed") === "true") || chips[0]).focus();
    register(card, path, slot, focus);
    const picked = () => values.filter((_, i) => chips[i].getAttribute("aria-pressed") === "true");
    const read = () => {
      const p = picked();
      if (multi) return p.length || required ? p : undefined;
      return p.length ? p[0] : undefined;
    };
    const check = (v) => {
      if (required && (v === undefined || (multi && !v.length))) return [[path, multi ? "Pick at least one; this is required." : "Pick one; this is required."]];
      if (multi && s.minItems && v && v.length < s.minItems) return [[path, `Pick at least ${s.minItems}.`]];
      if (multi && s.maxItems && v && v.length > s.maxItems) return [[path, `Pick at most ${s.maxItems}.`]];
      return [];
    };
    const el2 = h("fieldset", { class: "field pick", "data-field": path },
      h("legend", { id: legendId }, label, required ? requiredMark() : null), helpNode,
      h("p", { class: "sr-only", text: multi ? "Pick any that apply." : "Pick one." }),
      scale ? h("div", { class: "scale-box" }, group, endRow) : group, slot.err);
    return { el: el2, read, check, focus };
  }

  // FORMATS are the inputs for a string's format, and how a value is made
  // from what the browser's control holds.
  const FORMATS = {
    email: { type: "email", autocomplete: "email", inputmode: "email", spellcheck: "false" },
    uri: { type: "url", inputmode: "url", spellcheck: "false" },
    "uri-reference": { type: "url", inputmode: "url", spellcheck: "false" },
    iri: { type: "url", inputmode: "url", spellcheck: "false" },
    // JSON Schema has no phone format; "phone" and "tel" are what kinds write.
    phone: { type: "tel", autocomplete: "tel", inputmode: "tel", spellcheck: "false" },
    tel: { type: "tel", autocomplete: "tel", inputmode: "tel", spellcheck: "false" },
    date: { type: "date" },
    "date-time": { type: "datetime-local", value: (x) => { const d = new Date(x); return Number.isNaN(d.getTime()) ? x : d.toISOString().replace(/\.000Z$/, "Z"); } },
    time: { type: "time", step: "1", value: (x) => {
      const t = /^\d\d:\d\d$/.test(x) ? x + ":00" : x;
      const off = -new Date().getTimezoneOffset();
      const hh = String(Math.floor(Math.abs(off) / 60)).padStart(2, "0"), mm = String(Math.abs(off) % 60).padStart(2, "0");
      return `${t}${off >= 0 ? "+" : "-"}${hh}:${mm}`;
    } },
  };

  const labelsOf = (s) => (ui(s).labels && typeof ui(s).labels === "object" ? ui(s).labels : {});

  // setDefault puts a schema's default in its control, in the control's
  // own form (a local date and time for date-time).
  function setDefault(control, s, fmt) {
    const d = s.default;
    if (d === undefined || d === null || typeof d === "object") return;
    if (control.tagName === "SELECT") {
      const i = s.enum.indexOf(d);
      if (i >= 0) control.value = String(i);
      return;
    }
    let v = String(d);
    if (fmt && fmt.type === "datetime-local") {
      const t = new Date(v);
      if (Number.isNaN(t.getTime())) return;
      const two = (n) => String(n).padStart(2, "0");
      v = `${t.getFullYear()}-${two(t.getMonth() + 1)}-${two(t.getDate())}T${two(t.getHours())}:${two(t.getMinutes())}:${two(t.getSeconds())}`;
    } else if (fmt && fmt.type === "time") {
      const m = /^\d\d:\d\d(?::\d\d)?/.exec(v);
      if (!m) return;
      v = m[0];
    }
    control.value = v;
  }

  const FORMAT_ERRORS = {
    email: "Enter an email address, like name@example.com.",
    url: "Enter a full web address, starting with http or https.",
    tel: "Enter a phone number, like +1 555 123 4567.",
  };

  function scalarField(card, s, type, path, label, required) {
    const id = uid("f");
    let control;
    const helpNode = help(s, id + "-help");
    const described = helpNode ? helpNode.id : null;
    const fmt = type === "string" ? FORMATS[ui(s).widget === "tel" ? "tel" : s.format] || null : null;
    if (Array.isArray(s.enum)) {
      control = h("select", { id, name: path, "aria-required": required ? "true" : null, "aria-describedby": described },
        h("option", { value: "", text: "Choose…" }),
        s.enum.map((v, i) => h("option", { value: String(i), text: typeof labelsOf(s)[String(v)] === "string" ? labelsOf(s)[String(v)] : String(v) })));
    } else if (type === "string") {
      const long = !fmt && ((s.maxLength || 0) > 200 || ui(s).widget === "textarea");
      const attrs = { id, name: path, maxlength: s.maxLength, "aria-required": required ? "true" : null, "aria-describedby": described, dir: fmt ? null : "auto" };
      control = long
        ? h("textarea", { ...attrs, rows: "3" })
        : h("input", { ...attrs, type: "text", autocomplete: "off", ...(fmt || {}), value: null });
    } else {
      control = h("input", { id, name: path, type: "number", min: s.minimum, max: s.maximum, step: type === "integer" ? "1" : "any", inputmode: type === "integer" ? "numeric" : "decimal", "aria-required": required ? "true" : null, "aria-describedby": described });
    }
    setDefault(control, s, fmt);
    const slot = errorSlot(() => [control]);
    control.addEventListener(control.tagName === "SELECT" ? "change" : "input", () => slot.mark(""));
    register(card, path, slot, () => control.focus());
    const read = () => {
      if (Array.isArray(s.enum)) return control.value === "" ? undefined : s.enum[Number(control.value)];
      if (control.value === "") return undefined;
      if (type === "string") return fmt && fmt.value ? fmt.value(control.value) : control.value;
      const n = Number(control.value);
      return Number.isFinite(n) ? n : control.value;
    };
    const check = (v) => {
      if (control.validity && control.validity.badInput) return [[path, type === "integer" ? "Enter a whole number." : "Enter a number."]];
      if (v === undefined) return required ? [[path, REQUIRED]] : [];
      if (type === "string") {
        if (control.validity && control.validity.typeMismatch) return [[path, FORMAT_ERRORS[control.type] || "This is not in the expected form."]];
        // A browser checks no phone number: digits, spaces and + ( ) - . / only,
        // and enough digits to call; the server's rules check the rest.
        if (control.type === "tel" && (!/^[+\d\s().\-/]*$/.test(v) || (v.match(/\d/g) || []).length < 5)) return [[path, FORMAT_ERRORS.tel]];
        if (s.minLength && [...v].length < s.minLength) return [[path, s.minLength === 1 ? REQUIRED : `Use at least ${s.minLength} characters.`]];
        if (s.maxLength && [...v].length > s.maxLength) return [[path, `Use at most ${s.maxLength} characters.`]];
        return [];
      }
      if (typeof v !== "number") return [[path, "Enter a number."]];
      if (type === "integer" && !Number.isInteger(v)) return [[path, "Enter a whole number."]];
      if (s.minimum !== undefined && v < s.minimum) return [[path, `Enter ${s.minimum} or more.`]];
      if (s.maximum !== undefined && v > s.maximum) return [[path, `Enter ${s.maximum} or less.`]];
      return [];
    };
    return { el: h("div", { class: "field", "data-field": path }, labelled(id, label, required, s), control, slot.err), read, check, focus: () => control.focus() };
  }

  // boolField is a switch: on or off, so never missing.
  function boolField(card, s, path, label) {
    const id = uid("f");
    const helpNode = help(s, id + "-help");
    const box = h("input", { id, name: path, type: "checkbox", role: "switch", class: "switch", "aria-describedby": helpNode ? helpNode.id : null });
    if (s.default === true) box.checked = true;
    const slot = errorSlot(() => [box]);
    box.addEventListener("change", () => slot.mark(""));
    register(card, path, slot, () => box.focus());
    const el2 = h("div", { class: "field check", "data-field": path }, h("div", { class: "check-row" }, box, h("label", { for: id, text: label })),
      helpNode, slot.err);
    return { el: el2, read: () => box.checked, check: () => [], focus: () => box.focus() };
  }

  function jsonField(card, path, label, required, s) {
    const id = uid("f");
    const area = h("textarea", { id, name: path, rows: "3", class: "mono", spellcheck: "false", "aria-required": required ? "true" : null });
    const slot = errorSlot(() => [area]);
    area.addEventListener("input", () => slot.mark(""));
    register(card, path, slot, () => area.focus());
    const read = () => {
      const text = area.value.trim();
      if (!text) return undefined;
      try { return JSON.parse(text); } catch { throw new Error(`${label}: this is not valid JSON.`); }
    };
    const check = (v) => (required && v === undefined ? [[path, REQUIRED]] : []);
    return { el: h("div", { class: "field", "data-field": path }, labelled(id, label, required, s), area, slot.err), read, check, focus: () => area.focus() };
  }

  function objectField(card, s, path, name, label, required, depth) {
    const req = new Set(Array.isArray(s.required) ? s.required : []);
    const children = Object.entries(s.properties).map(([key, sub]) => [key, field(card, sub, join(path, key), key, req.has(key), depth + 1)])
      .filter(([, c]) => c.el);
    const slot = errorSlot(() => []);
    const first = () => children.length && children[0][1].focus();
    const wrap = depth === 0
      ? h("div", { class: "fields" }, children.map(([, c]) => c.el), slot.err)
      : h("fieldset", { class: "group", "data-field": path }, h("legend", {}, label, required ? requiredMark() : null),
        help(s, uid("help")), children.map(([, c]) => c.el), slot.err);
    if (depth === 0) {
      // The mark needs its key only where it tells fields apart.
      if (children.length > 1 && children.some(([key]) => req.has(key))) wrap.prepend(h("p", { class: "hint", text: "Fields marked * are required." }));
    } else {
      register(card, path, slot, first);
    }
    const read = () => {
      const out = {};
      for (const [key, c] of children) {
        const v = c.read();
        if (v !== undefined) out[key] = v;
      }
      return Object.keys(out).length || required || depth === 0 ? out : undefined;
    };
    const check = (v) => {
      if (v === undefined) return [];
      return children.flatMap(([key, c]) => c.check(v[key]));
    };
    return { el: wrap, read, check, focus: first };
  }

  function arrayField(card, s, path, label, required, depth) {
    const own = s.items && typeof s.items === "object" ? s.items : {};
    const items = withOptions(bindSpec(ui(s).options ? { ...own, "x-ui": { ...ui(own), options: ui(s).options } } : own, card.spec), card.spec);
    const itemType = typeOf(items);

    // A list of enum values: toggle buttons, any number pressed.
    if (Array.isArray(items.enum) && items.enum.length) {
      return chipsField(card, { ...items, "x-ui": { ...ui(items), ...ui(s) }, minItems: s.minItems, maxItems: s.maxItems, default: s.default }, path, label, required, items.enum, false, true);
    }

    const helpNode = help(s, uid("help"));
    const slot = errorSlot(() => [list]);
    const list = h("div", { class: "items" });
    const legend = h("legend", {}, label, required ? requiredMark() : null);
    const wrap = h("fieldset", { class: "group array", "data-field": path }, legend, helpNode);

    // Repeated rows with Add and Remove.
    const rows = [];
    const noun = humanize(label).toLowerCase();
    const add = h("button", { type: "button", class: "quiet small", text: "Add one" });
    add.setAttribute("aria-label", `Add to ${label}`);
    const renumber = () => {
      rows.forEach((r, i) => {
        r.remove.setAttribute("aria-label", `Remove ${noun} ${i + 1}`);
        if (r.legend) r.legend.textContent = `${label} ${i + 1}`;
      });
      add.textContent = rows.length ? "Add another" : "Add one";
    };
    // A row's path holds a number never given to another row of this list,
    // so a removed row's number is not reused and every row's errors stay
    // its own; read() tells the card which row each sent index is.
    let made = 0;
    const addRow = () => {
      const i = made++;
      const c = field(card, items, `${path}[${i}]`, `${label} ${i + 1}`, false, depth + 1);
      const remove = h("button", { type: "button", class: "quiet small remove", text: "Remove" });
      const row = h("div", { class: "item" }, c.el, remove);
      const r = { i, c, el: row, remove, legend: c.el && c.el.querySelector && c.el.querySelector("legend") };
      remove.addEventListener("click", () => {
        const at = rows.indexOf(r);
        rows.splice(at, 1);
        row.remove();
        renumber();
        (rows[at] || rows[at - 1] || { c: { focus: () => add.focus() } }).c.focus();
      });
      rows.push(r);
      list.append(row);
      renumber();
      return r;
    };
    add.addEventListener("click", () => addRow().c.focus());
    const start = Math.max(s.minItems || 0, itemType === "object" ? 0 : 1);
    for (let i = 0; i < start; i++) addRow();
    wrap.append(list, h("div", { class: "array-actions" }, add), slot.err);
    register(card, path, slot, () => (rows[0] ? rows[0].c.focus() : add.focus()));
    const filled = (v) => v !== undefined && !(typeof v === "object" && v && !Array.isArray(v) && !Object.keys(v).length);
    const read = () => {
      const out = [];
      for (const r of rows) {
        const v = r.c.read();
        if (filled(v)) {
          card.aliases.set(`${path}[${out.length}]`, `${path}[${r.i}]`);
          out.push(v);
        }
      }
      return out.length || required ? out : undefined;
    };
    const check = (v) => {
      const errs = rows.flatMap((r) => { const x = r.c.read(); return filled(x) && r.c.check ? r.c.check(x) : []; });
      const n = v ? v.length : 0;
      if (required && !n) errs.push([path, REQUIRED]);
      else if (n && s.minItems && n < s.minItems) errs.push([path, `Add at least ${s.minItems}.`]);
      return errs;
    };
    return { el: wrap, read, check, focus: () => (rows[0] ? rows[0].c.focus() : add.focus()) };
  }

  // ---- write confirmation (tools gated by confirmTools) --------------------

  function onConfirmation(m) {
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

  // ---- start --------------------------------------------------------------

  async function start() {
    updateComposer();
    try {
      const r = await fetch("/kinds", { headers: { Accept: "application/json" } });
      if (r.ok) for (const k of await r.json()) state.kinds.set(k.name, k);
    } catch { /* the built-in cards still work */ }
    connect();
  }

  start();
})();
