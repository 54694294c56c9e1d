// Drives kindserver's /agui with the real AG-UI client (@ag-ui/client and
// @ag-ui/core, from the folder KINDKIT_TEST_AGUI names) through one
// scenario, and exits non-zero with what went wrong. Every event must pass
// @ag-ui/core's EventSchemas as it came off the wire, and the client's own
// stream verification and enforcement, which warn or fail on anything a
// 1.0 stream must not carry.
//
//   node agui-client.cjs SCENARIO http://127.0.0.1:PORT/agui
"use strict";
const path = require("node:path");
const { createRequire } = require("node:module");
const { randomUUID } = require("node:crypto");

const fromAGUI = createRequire(path.join(process.env.KINDKIT_TEST_AGUI, "node_modules", "_.js"));
const { HttpAgent } = fromAGUI("@ag-ui/client");
const { EventSchemas, AgentCapabilitiesSchema } = fromAGUI("@ag-ui/core/schemas");

const [scenario, url] = process.argv.slice(2);

// What the client says about the stream: any AG-UI warning is a failure.
const warnings = [];
for (const level of ["warn", "error"]) {
  const original = console[level];
  console[level] = (...args) => {
    warnings.push(args.map(String).join(" "));
    original(...args);
  };
}

function check(ok, what, detail) {
  if (!ok) {
    throw new Error(what + (detail === undefined ? "" : ": " + JSON.stringify(detail)));
  }
}

// Each agent keeps the events of its run under way as they came off the
// wire (tap), read beside the client from a tee of the response body.
function tapped(a) {
  const tap = { raw: [], reading: Promise.resolve() };
  a.fetch = (input, init) =>
    fetch(input, init).then((res) => {
      if (!res.body) return res;
      const [mine, theirs] = res.body.tee();
      tap.reading = (async () => {
        const text = await new Response(mine).text();
        for (const block of text.split("\n\n")) {
          const data = block.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")).join("\n");
          if (data) tap.raw.push(JSON.parse(data));
        }
      })();
      return new Response(theirs, { status: res.status, statusText: res.statusText, headers: res.headers });
    });
  a.tap = tap;
  return a;
}

function agent(threadId) {
  return tapped(new HttpAgent({ url, threadId: threadId ?? randomUUID() }));
}

// clone is another client of a's thread, with a's state.
const clone = (a) => tapped(a.clone());

// run runs the agent once and returns its events; the run must not fail
// in the client, and every event must pass the schemas.
async function run(a, params, label) {
  a.tap.raw = [];
  const events = [];
  let failed;
  try {
    await a.runAgent(params, {
      onEvent: ({ event }) => {
        events.push(event);
      },
      onRunFailed: ({ error }) => {
        failed = error;
      },
    });
  } catch (err) {
    failed = err;
  }
  await a.tap.reading;
  const raw = a.tap.raw;
  check(failed === undefined, label + ": the client failed the run", String(failed));
  check(raw.length === events.length, label + ": the client saw a different number of events than came", { raw: raw.length, seen: events.length });
  for (const ev of raw) {
    const parsed = EventSchemas.safeParse(ev);
    check(parsed.success, label + ": " + ev.type + " breaks @ag-ui/core's schema", parsed.error?.issues);
  }
  check(raw[0]?.type === "RUN_STARTED", label + ": the first event", raw[0]);
  return raw.slice();
}

const types = (evs) => evs.map((e) => e.type).filter((t, i, all) => t !== "TEXT_MESSAGE_CONTENT" || all[i - 1] !== t);
const end = (evs) => evs[evs.length - 1];

function interruptOf(evs, label) {
  const last = end(evs);
  check(last.type === "RUN_FINISHED" && last.outcome?.type === "interrupt" && last.outcome.interrupts.length === 1,
    label + ": the run did not end with one interrupt", last);
  return last.outcome.interrupts[0];
}

function runError(evs, code, label) {
  const last = end(evs);
  check(last.type === "RUN_ERROR" && last.code === code, label + ": want RUN_ERROR " + code, last);
  return last;
}

function success(evs, label) {
  const last = end(evs);
  check(last.type === "RUN_FINISHED" && last.outcome?.type === "success", label + ": want success", last);
}

const assistantTexts = (a) => a.messages.filter((m) => m.role === "assistant" && m.content).map((m) => m.content);

function userMessage(a, text) {
  a.addMessage({ id: randomUUID(), role: "user", content: text });
}

// A choices card up to its interrupt, which is checked.
async function toCard(a) {
  userMessage(a, "Compare your plans");
  const evs = await run(a, {}, "first run");
  const i = interruptOf(evs, "first run");
  const call = evs.find((e) => e.type === "TOOL_CALL_START");
  check(i.reason === "input_required" && i.message === "to quote", "the interrupt's reason and message", i);
  check(call && call.toolCallName === "request_choices" && i.toolCallId === call.toolCallId, "the interrupt's tool call", { i, call });
  check(i.metadata?.kind === "choices" && i.metadata.spec?.questions?.[0]?.header === "Plan", "the interrupt's metadata", i.metadata);
  check(i.responseSchema?.type === "object" && i.responseSchema.properties?.answers, "the interrupt's responseSchema", i.responseSchema);
  check(!Number.isNaN(Date.parse(i.expiresAt)) && Date.parse(i.expiresAt) > Date.now(), "the interrupt's expiresAt", i.expiresAt);
  check(types(evs).includes("MESSAGES_SNAPSHOT"), "no MESSAGES_SNAPSHOT before the interrupt", types(evs));
  check(a.pendingInterrupts.length === 1 && a.pendingInterrupts[0].id === i.id, "the client's pending interrupts", a.pendingInterrupts);
  return i;
}

const pro = { answers: [{ header: "Plan", options: ["Pro"] }] };
const gold = { answers: [{ header: "Plan", options: ["Gold"] }] };

const scenarios = {
  // text, the interrupt, an invalid resume, a valid resume, the reply.
  async cycle() {
    const a = agent();
    const i = await toCard(a);
    let evs = await run(a, { resume: [{ interruptId: i.id, status: "resolved", payload: gold }] }, "invalid resume");
    const bad = runError(evs, "resume_invalid", "invalid resume");
    check(bad.metadata?.errors?.length > 0, "the invalid resume's field errors", bad);
    check(a.pendingInterrupts.length === 1, "the interrupt did not stay open", a.pendingInterrupts);
    evs = await run(a, { resume: [{ interruptId: i.id, status: "resolved", payload: pro }] }, "resume");
    success(evs, "resume");
    const want = ["RUN_STARTED", "TOOL_CALL_RESULT", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "MESSAGES_SNAPSHOT", "RUN_FINISHED"];
    check(JSON.stringify(types(evs)) === JSON.stringify(want), "the resumed run's events", types(evs));
    check(evs[1].toolCallId === i.toolCallId && JSON.parse(evs[1].content).status === "submitted", "the card's result", evs[1]);
    check(a.pendingInterrupts.length === 0, "the interrupt is still pending in the client", a.pendingInterrupts);
    check(JSON.stringify(assistantTexts(a)) === JSON.stringify(["Pro it is."]), "the reply in the client's messages", assistantTexts(a));
  },

  // A cancelled interrupt: the card is declined, the turn goes on.
  async cancelled() {
    const a = agent();
    const i = await toCard(a);
    const evs = await run(a, { resume: [{ interruptId: i.id, status: "cancelled" }] }, "cancel");
    success(evs, "cancel");
    const result = evs.find((e) => e.type === "TOOL_CALL_RESULT");
    check(result && JSON.parse(result.content).status === "declined", "the cancelled card's result", result);
    check(a.pendingInterrupts.length === 0, "the interrupt is still pending in the client", a.pendingInterrupts);
  },

  // A new input while the interrupt is open: the client itself refuses
  // it; another client of the thread (another tab) gets RUN_ERROR naming
  // the interrupt; the first then resumes it.
  async inputWhileOpen() {
    const a = agent();
    const i = await toCard(a);
    userMessage(a, "hello?");
    let refused;
    await a.runAgent({}).catch((err) => {
      refused = err;
    });
    check(refused && /pending interrupt/.test(String(refused)), "the client sent new input past its own interrupt", String(refused));
    a.messages.pop();
    const tab = agent(a.threadId);
    userMessage(tab, "hello?");
    const evs = await run(tab, {}, "input while open");
    const err = runError(evs, "interrupt_open", "input while open");
    check(err.metadata?.interrupts?.[0]?.id === i.id, "RUN_ERROR names the open interrupt", err.metadata);
    success(await run(a, { resume: [{ interruptId: i.id, status: "resolved", payload: pro }] }, "resume"), "resume");
  },

  // The same resume twice, one after the other and at once from two
  // clients: the turn resumes once.
  async resumeTwice() {
    const a = agent();
    let i = await toCard(a);
    const resume = { resume: [{ interruptId: i.id, status: "resolved", payload: pro }] };
    success(await run(a, resume, "resume"), "resume");
    const again = await run(a, resume, "the same resume again");
    success(again, "the same resume again");
    check(!again.some((e) => e.type === "TOOL_CALL_RESULT"), "the replay resumed the turn again", types(again));
    check(JSON.stringify(assistantTexts(a)) === JSON.stringify(["Pro it is."]), "the turn replied more than once", assistantTexts(a));

    const b = agent();
    i = await toCard(b);
    const c = clone(b);
    const both = { resume: [{ interruptId: i.id, status: "resolved", payload: pro }] };
    const [x, y] = await Promise.all([run(b, both, "resume at once (1)"), run(c, both, "resume at once (2)")].map((p) => p.catch((e) => e)));
    for (const r of [x, y]) check(Array.isArray(r), "a concurrent resume failed", String(r));
    const resumed = [x, y].filter((evs) => evs.some((e) => e.type === "TOOL_CALL_RESULT"));
    check(resumed.length === 1, "resumed by both or neither", [types(x), types(y)]);
    success(x, "resume at once (1)");
    success(y, "resume at once (2)");
    const late = agent(b.threadId);
    success(await run(late, {}, "the thread afterwards"), "the thread afterwards");
    check(JSON.stringify(assistantTexts(late)) === JSON.stringify(["Pro it is."]), "the turn replied other than once", assistantTexts(late));
  },

  // A write confirmation, approved and denied. Approving with edited
  // arguments is refused: this server's policy (-tool-decisions) allows
  // approve and reject alone.
  async confirm() {
    for (const approved of [true, false]) {
      const a = agent();
      userMessage(a, "delete record 42");
      let evs = await run(a, {}, "first run");
      const i = interruptOf(evs, "first run");
      check(i.reason === "tool_call" && i.metadata?.tool === "delete_record" && i.metadata.arguments?.id === 42, "the confirmation", i);
      check(evs.some((e) => e.type === "TOOL_CALL_START" && e.toolCallId === i.toolCallId), "the confirmation's tool call", types(evs));
      check(i.responseSchema?.properties?.approved && !i.responseSchema.properties.editedArgs, "the confirmation's responseSchema", i.responseSchema);
      evs = await run(a, { resume: [{ interruptId: i.id, status: "resolved", payload: { approved: true, editedArgs: { id: 43 } } }] }, "edited");
      runError(evs, "resume_invalid", "edited");
      evs = await run(a, { resume: [{ interruptId: i.id, status: "resolved", payload: { approved } }] }, approved ? "approve" : "deny");
      success(evs, approved ? "approve" : "deny");
      const result = evs.find((e) => e.type === "TOOL_CALL_RESULT" && e.toolCallId === i.toolCallId);
      check(result && (approved ? result.content === "record 42 deleted" : /Denied/.test(result.content)), "the tool's result", result);
    }
  },

  // A confirmation whose tool's policy allows edits: its responseSchema
  // has editedArgs; arguments that are no object are refused and the
  // interrupt stays open; edited arguments run the tool, and its result
  // says which ran.
  async confirmEdit() {
    const a = agent();
    userMessage(a, "delete record 42");
    let evs = await run(a, {}, "first run");
    const i = interruptOf(evs, "first run");
    check(i.responseSchema?.properties?.editedArgs, "the responseSchema has no editedArgs", i.responseSchema);
    evs = await run(a, { resume: [{ interruptId: i.id, status: "resolved", payload: { approved: true, editedArgs: "forty-three" } }] }, "bad edit");
    runError(evs, "resume_invalid", "bad edit");
    evs = await run(a, { resume: [{ interruptId: i.id, status: "resolved", payload: { approved: true, editedArgs: { id: 43 } } }] }, "edited");
    success(evs, "edited");
    const result = evs.find((e) => e.type === "TOOL_CALL_RESULT" && e.toolCallId === i.toolCallId);
    check(result && result.content.includes('{"id":43}') && result.content.includes("record 42 deleted"), "the edited call's result", result);
  },

  // The capabilities the agent declares pass @ag-ui/core's schema.
  async capabilities() {
    const caps = await (await fetch(url + "/capabilities")).json();
    const parsed = AgentCapabilitiesSchema.safeParse(caps);
    check(parsed.success, "the capabilities break @ag-ui/core's schema", parsed.error?.issues);
    check(caps.humanInTheLoop?.interrupts === true && caps.humanInTheLoop.approveWithEdits === true, "the capabilities", caps);
  },
};

(async () => {
  const fn = scenarios[scenario];
  check(fn, "no scenario " + scenario);
  await fn();
  check(warnings.length === 0, "the client warned about the stream", warnings);
  console.log("ok " + scenario);
})().catch((err) => {
  process.stderr.write("FAIL " + scenario + ": " + (err && err.stack ? err.stack : String(err)) + "\n");
  process.exit(1);
});
