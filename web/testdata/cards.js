// A page that draws kindkit's cards with the renderers and the card
// alone, as a link page or an inbox would: no socket, no turn, no chat.
// web's TestCardsAlone drives it through window.cards.
import { makeCard } from "../static/js/card/card.js";

const kinds = new Map(); // name → /kinds entry
const drawn = []; // {card, submitted}

window.cards = {
  loaded: false, // true once /kinds is read: draw draws generic cards from it

  // draw draws a card of kind for spec, filled with values, and returns
  // its index.
  draw(kind, spec, values) {
    const entry = { submitted: [] };
    entry.card = makeCard(kind, spec, {
      id: `test-${drawn.length}`, info: kinds.get(kind), values,
      onSubmit: (v) => entry.submitted.push({ values: v }),
      onDecline: () => entry.submitted.push({ declined: true }),
    });
    document.getElementById("cards").append(entry.card.el);
    drawn.push(entry);
    return drawn.length - 1;
  },

  // submit presses the card's Submit and says what came of it: what the
  // card gave its onSubmit, or the errors it shows instead.
  submit(i) {
    const { card, submitted } = drawn[i];
    const before = submitted.length;
    card.el.querySelector('button[type="submit"]').click();
    return { submitted: submitted.slice(before), ...shown(card) };
  },

  // showErrors shows errors as a server's interaction_invalid says them.
  showErrors(i, errors, message) {
    drawn[i].card.showErrors(errors, message);
    return shown(drawn[i].card);
  },

  // close ends the card as an outcome says, and gives its status line.
  close(i, payload) {
    drawn[i].card.closeWith(payload);
    return drawn[i].card.el.querySelector(".card-status").textContent;
  },

  // modules is the page's scripts, as the browser loaded them.
  modules: () => performance.getEntriesByType("resource").map((e) => new URL(e.name).pathname).filter((p) => p.endsWith(".js")),
};

fetch("../kinds").then((r) => r.json()).then((list) => {
  for (const k of list) kinds.set(k.name, k);
  window.cards.loaded = true;
});

// shown is what a card shows of its errors: each field's, by its
// data-field, and the card's own line.
function shown(card) {
  const fields = {};
  for (const f of card.el.querySelectorAll(".field-error:not([hidden])")) {
    const owner = f.closest("[data-field], [data-header]");
    fields[owner ? owner.dataset.field || owner.dataset.header : "?"] = f.textContent;
  }
  const general = card.el.querySelector(".card-error");
  return { fieldErrors: fields, general: general && !general.hidden ? general.textContent : "" };
}
