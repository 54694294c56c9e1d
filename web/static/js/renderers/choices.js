// The choices card: chips and an "Other" box per question.
import { h, uid } from "../core/dom.js";
import { clip } from "../core/text.js";
import { enterMovesOn, errorSlot } from "./form.js";

export function choicesTitle(spec) {
  const n = (spec.questions || []).length;
  return n > 1 ? "A few questions" : "A quick question";
}

// choicesSummary is each question's header and what was picked or written.
export function choicesSummary(spec, values) {
  const answers = values && Array.isArray(values.answers) ? values.answers : [];
  return answers.map((a) => {
    if (!a || typeof a !== "object") return "";
    const picks = [...(Array.isArray(a.options) ? a.options : []), a.other].filter((x) => typeof x === "string" && x.trim()).map(clip);
    return picks.length ? `${a.header}: ${picks.join(", ")}` : "";
  });
}

// renderChoices draws each question of spec into form; earlier values
// press their chips and fill their Other boxes.
export function renderChoices(form, spec, body) {
  const questions = spec.questions || [];
  const earlier = form.values && Array.isArray(form.values.answers) ? form.values.answers : [];
  const readers = [];
  for (const q of questions) {
    const multi = q.multiSelect === true;
    const was = earlier.find((a) => a && typeof a === "object" && a.header === q.header) || {};
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
        if (!form.editable()) return;
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
    if (typeof was.other === "string") other.value = was.other;
    const picked = Array.isArray(was.options) ? was.options : [];
    for (const c of chips) if (picked.includes(c.dataset.label)) c.setAttribute("aria-pressed", "true");
    const slot = errorSlot(() => [group, other]);
    other.addEventListener("input", () => {
      if (!multi && other.value.trim()) for (const c of chips) c.setAttribute("aria-pressed", "false");
      slot.mark("");
    });
    // Enter in a one-line answer moves on, to the next question or, after
    // the last, to the card's Submit.
    enterMovesOn(other, () => {
      const next = other.closest(".question").nextElementSibling;
      return next && next.matches(".question") ? next.querySelector(".chip, input.other") : null;
    });
    const fs = h("fieldset", { class: "question", "data-header": q.header },
      h("legend", { dir: "auto" }, h("span", { class: "q-header", text: q.header }), h("span", { class: "q-text", text: q.question })),
      h("p", { class: "hint", id: hintId, text: multi ? "Pick any that apply." : "Pick one." }),
      group,
      h("div", { class: "other-row" }, h("label", { for: otherId, text: "Other" }, h("span", { class: "sr-only", text: ` answer for ${q.header}` })), other),
      slot.err);
    body.append(fs);
    form.fields.set(q.header, { err: slot.err, mark: slot.mark, focus: () => (chips[0] || other).focus() });
    readers.push(() => {
      const a = { header: q.header, options: chips.filter((c) => c.getAttribute("aria-pressed") === "true").map((c) => c.dataset.label) };
      if (other.value.trim()) a.other = other.value.trim();
      return a;
    });
  }
  form.read = () => ({ answers: readers.map((r) => r()) });
}
