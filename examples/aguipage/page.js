// A page on @ag-ui/client and nothing else: it talks to kindkit's /agui
// (?agui=URL names it; the default is this origin's /agui), streams the
// agent's words, and draws an interrupt's card from its metadata: a
// "choices" kind's questions from its spec, any other kind as a JSON
// answer checked against its responseSchema by the server. The resume's
// field errors are shown and the card stays open.
//
// Bundle it for a browser with any bundler, for example:
//   npx esbuild page.js --bundle --format=esm --outfile=page.bundle.js
import { HttpAgent } from "@ag-ui/client";

const url = new URLSearchParams(location.search).get("agui") ?? new URL("/agui", location.href).href;
const agent = new HttpAgent({ url, threadId: crypto.randomUUID() });

const log = document.getElementById("log");
const card = document.getElementById("card");
const error = document.getElementById("error");
const composer = document.getElementById("composer");
const input = document.getElementById("message");
const send = document.getElementById("send");

function say(who, text) {
  const p = document.createElement("p");
  p.className = who;
  p.textContent = text;
  log.append(p);
  return p;
}

// run runs the agent once: the words stream into a bubble, and the run's
// outcome decides what the page shows next.
async function run(params) {
  error.textContent = "";
  send.disabled = true;
  let bubble;
  let outcome;
  try {
    await agent.runAgent(params, {
      onTextMessageStartEvent() {
        bubble = say("agent", "");
      },
      onTextMessageContentEvent({ event }) {
        bubble.textContent += event.delta;
      },
      onRunFinishedEvent({ event }) {
        outcome = event.outcome;
      },
      onRunErrorEvent({ event }) {
        const errs = event.metadata?.errors ?? [];
        error.textContent = errs.length ? errs.map((e) => `${e.field}: ${e.message}`).join("; ") : event.message;
      },
    });
  } catch (err) {
    if (!error.textContent) error.textContent = String(err);
  } finally {
    send.disabled = false;
  }
  if (outcome?.type === "interrupt") {
    draw(outcome.interrupts[0]);
  } else if (outcome) {
    card.replaceChildren();
  }
}

// draw shows interrupt i as a card; answering it resumes the run.
function draw(i) {
  const form = document.createElement("form");
  form.dataset.interrupt = i.id;
  const spec = i.metadata?.spec;
  let answer;
  if (i.metadata?.kind === "choices" && Array.isArray(spec?.questions)) {
    answer = choices(form, spec.questions);
  } else {
    answer = json(form, i);
  }
  if (i.message) {
    const why = document.createElement("p");
    why.textContent = i.message;
    form.prepend(why);
  }
  const submit = document.createElement("button");
  submit.textContent = "Answer";
  const decline = document.createElement("button");
  decline.type = "button";
  decline.textContent = "Not now";
  form.append(submit, decline);
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    let payload;
    try {
      payload = answer();
    } catch (err) {
      error.textContent = String(err.message ?? err);
      return;
    }
    run({ resume: [{ interruptId: i.id, status: "resolved", payload }] });
  });
  decline.addEventListener("click", () => run({ resume: [{ interruptId: i.id, status: "cancelled" }] }));
  card.replaceChildren(form);
}

// choices draws a choices card's questions, and returns how to read its
// answer: {answers: [{header, options}]}.
function choices(form, questions) {
  questions.forEach((q, n) => {
    const set = document.createElement("fieldset");
    const legend = document.createElement("legend");
    legend.textContent = q.question;
    set.append(legend);
    for (const option of q.options) {
      const text = typeof option === "string" ? option : option.label;
      const label = document.createElement("label");
      const box = document.createElement("input");
      box.type = q.multiSelect ? "checkbox" : "radio";
      box.name = "q" + n;
      box.value = text;
      label.append(box, " " + text);
      if (option.description) label.title = option.description;
      set.append(label, document.createElement("br"));
    }
    form.append(set);
  });
  return () => ({
    answers: questions.map((q, n) => ({
      header: q.header,
      options: [...form.querySelectorAll(`input[name="q${n}"]:checked`)].map((b) => b.value),
    })),
  });
}

// json draws any other kind as a JSON answer to its responseSchema.
function json(form, i) {
  const label = document.createElement("label");
  label.textContent = `Answer (${i.metadata?.kind ?? i.reason}, JSON)`;
  const area = document.createElement("textarea");
  area.rows = 6;
  label.append(document.createElement("br"), area);
  form.append(label);
  return () => JSON.parse(area.value);
}

composer.addEventListener("submit", (e) => {
  e.preventDefault();
  const text = input.value.trim();
  if (!text) return;
  if (agent.pendingInterrupts?.length) {
    error.textContent = "Answer the open question first.";
    return;
  }
  input.value = "";
  say("user", text);
  agent.addMessage({ id: crypto.randomUUID(), role: "user", content: text });
  run({});
});
