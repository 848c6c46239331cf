// A game without its own board (GameSpec.web empty): the engine's text picture and a
// button per legal move, so every registered game is playable in the browser.

import {
  InputLock, canPlay, fillResultCard, fillSeats, html, statusText, t, withDefaults,
} from "./common.js";

export function mount(element, api) {
  const root = html("div", "board plain-board", element);
  const status = html("p", "board-status", root);
  status.setAttribute("aria-live", "polite");
  const seats = html("ul", "seat-list", root);
  const picture = html("pre", "plain-text", root);
  const moves = html("div", "plain-moves", root);
  moves.setAttribute("role", "group");
  const card = html("div", "result-card", root);
  const lock = new InputLock(250);
  let state = null;
  let opts = withDefaults({});

  function play(move) {
    if (!state || lock.locked() || !canPlay(state, opts) || !state.legal.includes(move)) return;
    lock.lock();
    api.play(move);
  }

  function render() {
    status.textContent = statusText(state, opts);
    fillSeats(seats, state, opts, true);
    picture.textContent = String(state.text ?? "");
    moves.replaceChildren();
    moves.setAttribute("aria-label", t(opts.lang, "legal"));
    if (canPlay(state, opts)) {
      for (const move of state.legal) {
        const button = html("button", "", moves);
        button.type = "button";
        button.dataset.move = move;
        button.textContent = move;
        button.addEventListener("click", () => play(move));
      }
    }
    fillResultCard(card, state, opts);
  }

  return {
    update(newState, newOpts) {
      const prev = state;
      state = newState;
      opts = withDefaults(newOpts);
      if (prev && prev.ply !== state.ply) lock.lock();
      render();
    },
    destroy() { root.remove(); },
  };
}
