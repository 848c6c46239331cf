// Vierschach (Einzel): four-player chess on the 14x14 cross. Click a piece, then a target
// (its legal targets are shown), or drag it there. Squares are focusable: arrow keys move,
// Enter or Space picks a piece or plays, Escape drops the choice. Eliminated players'
// pieces are grey; the seats' scores sit above the board. A pawn that reaches its 8th line
// promotes by itself (a one-point queen, marked with a dot): the move is still
// "<from>-<to>". With one own seat the board turns so that seat sits at the bottom.

import {
  InputLock, canPlay, fillResultCard, fillSeats, html, statusText, svg, t, withDefaults,
  seatClass,
} from "./common.js";

const FILES = "abcdefghijklmn";
const S = 100;
const GLYPHS = { K: "\u265A", Q: "\u265B", R: "\u265C", B: "\u265D", N: "\u265E", P: "\u265F", D: "\u265B" };

function onBoard(f, r) {
  return f >= 0 && f < 14 && r >= 0 && r < 14 && !((f < 3 || f > 10) && (r < 3 || r > 10));
}
/** Each seat's piece base has its own shape: circle, square, diamond, octagon. */
function base(parent, seat) {
  if (seat === 1) return svg("rect", { x: -40, y: -40, width: 80, height: 80, rx: 10, class: "base" }, parent);
  if (seat === 2) return svg("path", { d: "M0 -46L46 0L0 46L-46 0Z", class: "base" }, parent);
  if (seat === 3) return svg("path", { d: "M-19 -44L19 -44L44 -19L44 19L19 44L-19 44L-44 19L-44 -19Z", class: "base" }, parent);
  return svg("circle", { r: 42, class: "base" }, parent);
}

function legendIcon(picture, seat) {
  const g = svg("g", { class: "piece", transform: "translate(10 10) scale(0.2)" }, picture);
  base(g, seat);
}

function parse(name) { return [FILES.indexOf(name[0]), Number(name.slice(1)) - 1]; }
function squareName(f, r) { return FILES[f] + String(r + 1); }

export function mount(element, api) {
  const root = html("div", "board chess4-board", element);
  const status = html("p", "board-status", root);
  status.setAttribute("aria-live", "polite");
  const seats = html("ul", "seat-list", root);
  const frame = svg("svg", { class: "c4p-svg", viewBox: `0 0 ${14 * S} ${14 * S}` }, root);
  const card = html("div", "result-card", root);
  card.hidden = true;
  const lock = new InputLock(250);
  let state = null;
  let opts = withDefaults({});
  let turns = 0; // quarter turns: the seat shown at the bottom
  let selected = null;
  let cursor = "h7";
  let drag = null;
  let bySquare = new Map();
  let targets = new Map(); // from -> [to]

  // Display position of a square (x to the right, y downwards), and back.
  function toDisplay(f, r) {
    for (let i = 0; i < turns; i++) [f, r] = [13 - r, f];
    return [f, 13 - r];
  }
  function fromDisplay(x, y) {
    let [f, r] = [x, 13 - y];
    for (let i = 0; i < turns; i++) [f, r] = [r, 13 - f];
    return [f, r];
  }

  function play(move) {
    if (!state || lock.locked() || !canPlay(state, opts) || !state.legal.includes(move)) return;
    lock.lock();
    selected = null;
    api.play(move);
    render();
  }

  function mine(square) {
    const piece = bySquare.get(square);
    return Boolean(piece) && canPlay(state, opts) && !piece.grey && piece.seat === state.to_move &&
      targets.has(square);
  }

  /** A click (or Enter) on a square: pick a piece, play to a target, or drop the choice. */
  function choose(square) {
    if (!square) return;
    cursor = square;
    if (selected && (targets.get(selected) || []).includes(square)) {
      play(`${selected}-${square}`);
      return;
    }
    selected = mine(square) && selected !== square ? square : null;
    render();
  }

  function squareAt(event) {
    const point = frame.createSVGPoint();
    point.x = event.clientX;
    point.y = event.clientY;
    const p = point.matrixTransform(frame.getScreenCTM().inverse());
    const [f, r] = fromDisplay(Math.floor(p.x / S), Math.floor(p.y / S));
    return onBoard(f, r) ? squareName(f, r) : null;
  }

  function svgPoint(event) {
    const point = frame.createSVGPoint();
    point.x = event.clientX;
    point.y = event.clientY;
    return point.matrixTransform(frame.getScreenCTM().inverse());
  }

  frame.addEventListener("pointerdown", (event) => {
    const square = squareAt(event);
    if (square && mine(square)) {
      if (selected !== square) { selected = square; cursor = square; render(); }
      drag = { from: square, id: event.pointerId, x: event.clientX, y: event.clientY, moving: false };
      frame.setPointerCapture(event.pointerId);
      return;
    }
    choose(square);
  });
  frame.addEventListener("pointermove", (event) => {
    if (!drag) return;
    if (!drag.moving && Math.hypot(event.clientX - drag.x, event.clientY - drag.y) < 5) return;
    drag.moving = true;
    const piece = frame.querySelector(`.piece[data-square="${drag.from}"]`);
    if (!piece) return;
    const p = svgPoint(event);
    piece.classList.add("dragging");
    piece.setAttribute("transform", `translate(${p.x} ${p.y})`);
    frame.appendChild(piece); // on top of everything
  });
  frame.addEventListener("pointerup", (event) => {
    if (!drag) return;
    const { from, moving } = drag;
    drag = null;
    if (!moving) return; // a click: the piece stays chosen for a second click
    const square = squareAt(event);
    if (square && square !== from && (targets.get(from) || []).includes(square)) {
      play(`${from}-${square}`);
    } else {
      render(); // back to its square, still chosen
    }
  });
  frame.addEventListener("pointercancel", () => { drag = null; render(); });
  frame.addEventListener("keydown", (event) => {
    const square = event.target?.dataset?.square;
    if (!square) return;
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      choose(square);
      focusCursor();
      return;
    }
    if (event.key === "Escape") { selected = null; render(); focusCursor(); return; }
    const steps = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
    const step = steps[event.key];
    if (!step) return;
    event.preventDefault();
    let [x, y] = toDisplay(...parse(square));
    for (;;) {
      x += step[0];
      y += step[1];
      if (x < 0 || x > 13 || y < 0 || y > 13) return;
      const [f, r] = fromDisplay(x, y);
      if (onBoard(f, r)) { cursor = squareName(f, r); break; }
    }
    render();
    focusCursor();
  });

  function focusCursor() { frame.querySelector(`.sq[data-square="${cursor}"]`)?.focus(); }

  function glyphPiece(parent, piece, x, y) {
    const g = svg("g", {
      class: `piece ${piece.grey ? "grey" : seatClass(state, piece.seat)}`,
      "data-square": piece.square, transform: `translate(${x} ${y})`,
    }, parent);
    base(g, piece.seat);
    const glyph = svg("text", { x: 0, y: 3, class: "glyph" }, g);
    glyph.textContent = (GLYPHS[piece.kind] || "?") + "\uFE0E";
    if (piece.kind === "D") svg("circle", { cx: 30, cy: -30, r: 11, class: "promo" }, g);
    return g;
  }

  function render() {
    const hadFocus = frame.contains(document.activeElement);
    frame.replaceChildren();
    frame.classList.toggle("playable", canPlay(state, opts));
    frame.setAttribute("role", "grid");
    frame.setAttribute("aria-label", t(opts.lang, "legal"));
    const checked = new Set();
    for (const piece of state.pieces) {
      if (piece.kind === "K" && (state.check || []).includes(piece.seat)) checked.add(piece.square);
    }
    const last = state.last_move;
    const chosen = selected ? new Set(targets.get(selected) || []) : new Set();
    const squares = svg("g", { class: "squares" }, frame);
    for (let r = 0; r < 14; r++) {
      for (let f = 0; f < 14; f++) {
        if (!onBoard(f, r)) continue;
        const name = squareName(f, r);
        const [x, y] = toDisplay(f, r);
        let cls = `sq ${(f + r) % 2 ? "light" : "dark"}`;
        if (last && (last.from === name || last.to === name)) cls += " last";
        if (checked.has(name)) cls += " check";
        if (name === selected) cls += " sel";
        const piece = bySquare.get(name);
        if (piece && mine(name)) cls += " mine";
        const rect = svg("rect", {
          x: x * S, y: y * S, width: S, height: S, class: cls, "data-square": name,
          tabindex: name === cursor ? 0 : -1, role: "gridcell",
          "aria-label": `${name}: ${piece ? `${t(opts.lang, state.seats[piece.seat] || "grey")} ${t(opts.lang, piece.kind)}` : t(opts.lang, "empty")}`,
        }, squares);
        if (chosen.has(name)) rect.setAttribute("aria-selected", "true");
      }
    }
    // Coordinates along the bottom and left edges of the shown board.
    for (let i = 0; i < 14; i++) {
      for (const [x, y, dx, dy] of [[i, 13, 6, S - 8], [0, i, 6, 22]]) {
        let [xx, yy] = [x, y];
        while (!onBoard(...fromDisplay(xx, yy))) { if (y === 13 && x === i) yy--; else xx++; }
        const [f, r] = fromDisplay(xx, yy);
        const alongX = (y === 13 && x === i);
        const label = svg("text", { x: xx * S + dx, y: yy * S + dy, class: "coord" }, frame);
        label.textContent = (alongX ? turns % 2 === 0 : turns % 2 === 1) ? FILES[f] : String(r + 1);
      }
    }
    const pieces = svg("g", { class: "pieces" }, frame);
    for (const piece of state.pieces) {
      const [f, r] = parse(piece.square);
      const [x, y] = toDisplay(f, r);
      glyphPiece(pieces, piece, x * S + S / 2, y * S + S / 2);
    }
    const marks = svg("g", { class: "targets" }, frame);
    for (const name of chosen) {
      const [x, y] = toDisplay(...parse(name));
      const capture = bySquare.has(name);
      svg("circle", {
        cx: x * S + S / 2, cy: y * S + S / 2, r: capture ? 44 : 16,
        class: `target${capture ? " capture" : ""}`, "data-square": name,
      }, marks);
    }
    status.textContent = statusText(state, opts);
    fillSeats(seats, state, opts, true, legendIcon);
    const ranking = state.seats.map((_, seat) => seat)
      .sort((a, b) => state.scores[b] - state.scores[a] || a - b)
      .map((seat) => `${t(opts.lang, state.seats[seat])} ${state.scores[seat]}`);
    const details = [`${t(opts.lang, "score")}: ${ranking.join(" · ")}`];
    if (state.end_reason) details.push(t(opts.lang, `reason_${state.end_reason}`));
    fillResultCard(card, state, opts, details);
    if (hadFocus) focusCursor();
  }

  return {
    update(newState, newOpts) {
      const prev = state;
      state = newState;
      opts = withDefaults(newOpts);
      if (prev && prev.ply !== state.ply) { lock.lock(); selected = null; drag = null; }
      turns = opts.mySeats.length === 1 ? ((opts.mySeats[0] % 4) + 4) % 4 : 0;
      bySquare = new Map(state.pieces.map((piece) => [piece.square, piece]));
      targets = new Map();
      for (const move of state.legal) {
        const [from, to] = move.split("-");
        if (!targets.has(from)) targets.set(from, []);
        targets.get(from).push(to);
      }
      if (selected && !targets.has(selected)) selected = null;
      render();
    },
    destroy() { root.remove(); },
  };
}
