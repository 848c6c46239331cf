// The board for a game without a web view of its own: the engine's text picture and
// every legal move as a button (the move text exactly as the shell takes it).
// The same interface as every board: mount(element, api) -> {update(state, opts), destroy()}.

export function mount(element, api) {
  const root = document.createElement('div');
  root.className = 'fallback-board';
  const picture = document.createElement('pre');
  picture.className = 'picture';
  picture.setAttribute('aria-label', 'board');
  const winning = document.createElement('p');
  winning.className = 'winning';
  const moves = document.createElement('div');
  moves.className = 'legal';
  root.append(picture, winning, moves);
  element.append(root);
  return {
    update(state, opts) {
      picture.textContent = state.text || '';
      const cells = state.winning || [];
      winning.hidden = !cells.length;
      winning.textContent = cells.length ? '★ ' + cells.map((c) => `(${c.map((x) => x + 1).join(',')})`).join(' ') : '';
      moves.replaceChildren();
      if (!opts.interactive) return;
      for (const move of state.legal || []) {
        const button = document.createElement('button');
        button.type = 'button';
        button.textContent = move;
        button.dataset.move = move;
        button.addEventListener('click', () => api.play(move));
        moves.append(button);
      }
    },
    destroy() { root.remove(); },
  };
}
