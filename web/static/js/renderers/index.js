// The renderers: a kind's card body from its spec, with no socket, no
// turn and no page state. Two kinds have cards of their own; every other
// kind gets the generic form drawn from its Values schema.
import { humanize } from "../core/text.js";
import { choicesSummary, choicesTitle, renderChoices } from "./choices.js";
import { newForm } from "./form.js";
import { renderGeneric } from "./generic.js";
import { identitySummary, renderIdentity } from "./identity.js";

// OWN are the cards drawn by their own code, by kind, with the client
// capability each declares in supports.
export const OWN = {
  choices: { capability: "choice_chips", render: renderChoices, title: choicesTitle, summary: choicesSummary },
  identity_intake: { capability: "identity_form", render: renderIdentity, title: () => "Your contact details", summary: identitySummary },
};

// draw renders a card of kind for spec and returns its form
// (renderers/form.js): form.el is the body, form.read() its values.
// opts: info, the kind's /kinds entry (its valuesSchema draws a generic
// card); values, the values answered earlier; editable (newForm).
export function draw(kind, spec, opts = {}) {
  const form = newForm(spec, opts);
  const own = OWN[kind];
  if (own) {
    form.title = own.title(form.spec);
    own.render(form, form.spec, form.el);
  } else {
    form.title = humanize(kind);
    renderGeneric(form, form.spec, opts.info, form.el);
  }
  return form;
}
