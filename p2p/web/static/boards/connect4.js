// Vier in einer Reihe / Connect Four (7x6, 8x7, 9x7, Pop Out): tap a column to drop,
// the disc falls, the winning four light up joined by a line while the rest dims, the
// result card sits below the board. Pop Out: a button under each column pops your own
// bottom disc. Columns are focusable: arrow keys move, Enter or Space drops.

import {
  InputLock, canPlay, drawMark, fillResultCard, html, reducedMotion, seatClass, statusText,
  svg, t, withDefaults,
} from "./common.js";

const CELL = 100;
const R = 40;

export function mount(element, api) {
  const root = html("div", "board c4-board", element);
  const status = html("p", "board-status", root);
  status.setAttribute("aria-live", "polite");
  const frame = svg("svg", { class: "c4-svg" }, root);
  const popsTitle = html("p", "c4-pops-title", root);
  const pops = html("div", "c4-pops", root);
  const card = html("div", "result-card", root);
  card.hidden = true;
  const lock = new InputLock(250);
  let state = null;
  let opts = withDefaults({});

  function play(move) {
    if (!state || lock.locked() || !canPlay(state, opts) || !state.legal.includes(move)) return;
    lock.lock();
    api.play(move);
  }

  function cy(row) { return (state.height - 1 - row) * CELL + CELL / 2; }
  function cx(column) { return column * CELL + CELL / 2; }

  function disc(parent, seat, column, row, extra = "") {
    const g = svg("g", { class: `disc ${seatClass(state, seat)} ${extra}`.trim() }, parent);
    svg("circle", { cx: cx(column), cy: cy(row), r: R, class: "stone" }, g);
    drawMark(g, seat, cx(column), cy(row), R);
    return g;
  }

  function render(prev) {
    const { width, height } = state;
    const focused = frame.contains(document.activeElement) ? document.activeElement.dataset.move : null;
    frame.replaceChildren();
    frame.setAttribute("viewBox", `0 0 ${width * CELL} ${height * CELL}`);
    frame.setAttribute("role", "group");
    frame.setAttribute("aria-label", t(opts.lang, "four"));
    frame.classList.toggle("playable", canPlay(state, opts));
    svg("rect", { x: 0, y: 0, width: width * CELL, height: height * CELL, rx: 18, class: "c4-frame" }, frame);
    for (let c = 0; c < width; c++) {
      for (let r = 0; r < height; r++) svg("circle", { cx: cx(c), cy: cy(r), r: R, class: "c4-hole" }, frame);
    }
    const winning = new Set();
    for (const line of state.lines) for (const [c, r] of line.cells) winning.add(`${c},${r}`);
    const discs = svg("g", { class: "c4-discs" }, frame);
    const last = state.last_move;
    const placed = {};
    state.columns.forEach((stones, c) => {
      stones.forEach((seat, r) => {
        let extra = winning.size ? (winning.has(`${c},${r}`) ? "win" : "dim") : "";
        if (last && last.column === c && last.row === r && !last.pop) extra += " last";
        if (r === 0 && canPlay(state, opts) && state.legal.includes(`p${c + 1}`)) extra += " poppable";
        placed[`${c},${r}`] = disc(discs, seat, c, r, extra);
      });
    });
    for (const line of state.lines) {
      const [a, b] = [line.cells[0], line.cells[line.cells.length - 1]];
      svg("line", {
        x1: cx(a[0]), y1: cy(a[1]), x2: cx(b[0]), y2: cy(b[1]),
        class: `win-line ${seatClass(state, line.seat)}`,
        "data-from": `${a[0]},${a[1]}`, "data-to": `${b[0]},${b[1]}`,
      }, frame);
    }
    // The columns: hit areas on top, focusable, with the landing cell's ghost disc.
    const playable = canPlay(state, opts);
    for (let c = 0; c < width; c++) {
      const move = String(c + 1);
      const legal = playable && state.legal.includes(move);
      const col = svg("g", {
        class: `c4-col${legal ? " legal" : ""}`, tabindex: 0, role: "button",
        "data-move": move, "aria-label": t(opts.lang, "column", move),
        "aria-disabled": legal ? "false" : "true",
      }, frame);
      svg("rect", { x: c * CELL, y: 0, width: CELL, height: height * CELL, class: "c4-hit" }, col);
      const filled = state.columns[c].length;
      if (legal && filled < height) {
        const ghost = svg("g", { class: `ghost ${seatClass(state, state.to_move)}` }, col);
        svg("circle", { cx: cx(c), cy: cy(filled), r: R, class: "stone" }, ghost);
      }
      col.addEventListener("click", () => play(move));
      col.addEventListener("keydown", (event) => onKey(event, c));
    }
    if (focused) frame.querySelector(`[data-move="${focused}"]`)?.focus();
    animate(prev, placed);
    renderPops(playable);
    status.textContent = statusText(state, opts);
    const details = [];
    if (state.lines.length > 1) details.push(`${state.lines.length} × ${t(opts.lang, "four")}`);
    fillResultCard(card, state, opts, details);
  }

  function renderPops(playable) {
    pops.replaceChildren();
    popsTitle.hidden = pops.hidden = !state.popout;
    if (!state.popout) return;
    popsTitle.textContent = t(opts.lang, "pop_title");
    pops.style.gridTemplateColumns = `repeat(${state.width}, 1fr)`;
    for (let c = 0; c < state.width; c++) {
      const move = `p${c + 1}`;
      const button = html("button", "c4-pop", pops);
      button.type = "button";
      button.dataset.move = move;
      button.textContent = "⇩";
      button.setAttribute("aria-label", t(opts.lang, "pop", c + 1));
      button.title = t(opts.lang, "pop", c + 1);
      button.disabled = !(playable && state.legal.includes(move));
      if (!button.disabled) button.classList.add(seatClass(state, state.to_move));
      button.addEventListener("click", () => play(move));
    }
  }

  function onKey(event, c) {
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      play(String(c + 1));
    } else if (event.key === "ArrowLeft" || event.key === "ArrowRight") {
      event.preventDefault();
      const next = (c + (event.key === "ArrowLeft" ? -1 : 1) + state.width) % state.width;
      frame.querySelector(`[data-move="${next + 1}"]`)?.focus();
    }
  }

  function animate(prev, placed) {
    const last = state.last_move;
    if (!prev || !last || reducedMotion() || state.ply !== prev.ply + 1) return;
    if (state.last_kind === "resignation") return;
    if (last.pop) { // every disc of the column slides down one row
      for (let r = 0; r < state.columns[last.column].length; r++) {
        placed[`${last.column},${r}`]?.animate(
          [{ transform: `translate(0px, ${-CELL}px)` }, { transform: "translate(0px, 0px)" }],
          { duration: 180, easing: "ease-in" });
      }
      return;
    }
    const drop = (state.height - last.row) * CELL;
    placed[`${last.column},${last.row}`]?.animate(
      [{ transform: `translate(0px, ${-drop}px)` }, { transform: "translate(0px, 0px)" }],
      { duration: 120 + 40 * (state.height - last.row), easing: "cubic-bezier(.55,0,1,.45)" });
  }

  return {
    update(newState, newOpts) {
      const prev = state;
      state = newState;
      opts = withDefaults(newOpts);
      if (prev && prev.ply !== state.ply) lock.lock();
      render(prev);
    },
    destroy() { root.remove(); },
  };
}
