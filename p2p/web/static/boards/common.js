// Shared parts of the boards: element builders, words in both languages, seat marks,
// the input lock, status and result texts. Untrusted text only ever goes in via textContent.

export const SVG_NS = "http://www.w3.org/2000/svg";

/** An SVG element with attributes (presentation attributes only, never style). */
export function svg(tag, attrs = {}, parent = null) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  if (parent) parent.appendChild(el);
  return el;
}

/** An HTML element with a class name, appended to parent. */
export function html(tag, className = "", parent = null) {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (parent) parent.appendChild(el);
  return el;
}

const WORDS = {
  de: {
    Red: "Rot", Yellow: "Gelb", Blue: "Blau", Green: "Grün",
    to_move: "{0} ist am Zug", your_turn: "{0} ist am Zug – du bist dran",
    wins: "{0} gewinnt", share: "{0} teilen sich den Sieg", draw: "Unentschieden",
    resigned: "{0} hat aufgegeben", you: "du", out: "raus", points: "Punkte",
    column: "Spalte {0}", pop: "Eigenen Stein unten aus Spalte {0} ziehen",
    pop_title: "Pop Out: eigenen Stein unten herausziehen", pillar: "Säule {0}",
    level: "Ebene {0}", full: "voll", turn_view: "3D-Ansicht: ziehen oder Pfeiltasten zum Drehen, Klick auf eine Säule wirft ein",
    square: "Feld {0}", empty: "leer", score: "Stand", four: "Vier in einer Reihe",
    reason_points: "nach Punkten", "reason_last player": "nur noch einer übrig",
    reason_repetition: "Stellungswiederholung", "reason_50 moves": "50-Züge-Regel",
    "reason_move limit": "Zuglimit erreicht", moves: "Züge",
    chart: "Bewertung des Lösers, Zug für Zug", chart_up: "{0} gewinnt", ply: "Zug {0}",
    mistake: "Fehler", decisive: "entscheidend", estimate: "Schätzung", unknown: "unbekannt",
    legal: "Mögliche Züge",
    K: "König", Q: "Dame", R: "Turm", B: "Läufer", N: "Springer", P: "Bauer", D: "Dame (umgewandelt)",
  },
  en: {
    Red: "Red", Yellow: "Yellow", Blue: "Blue", Green: "Green",
    to_move: "{0} to move", your_turn: "{0} to move – your turn",
    wins: "{0} wins", share: "{0} share the win", draw: "Draw",
    resigned: "{0} resigned", you: "you", out: "out", points: "points",
    column: "Column {0}", pop: "Pop your disc out of column {0}",
    pop_title: "Pop Out: pull your own disc out at the bottom", pillar: "Pillar {0}",
    level: "Level {0}", full: "full", turn_view: "3D view: drag or arrow keys to turn, click a pillar to drop",
    square: "Square {0}", empty: "empty", score: "Score", four: "Four in a row",
    reason_points: "on points", "reason_last player": "one player left",
    reason_repetition: "repetition", "reason_50 moves": "50-move rule",
    "reason_move limit": "move limit reached", moves: "moves",
    chart: "The solver's evaluation, move by move", chart_up: "{0} wins", ply: "Move {0}",
    mistake: "mistake", decisive: "decisive", estimate: "estimate", unknown: "unknown",
    legal: "Legal moves",
    K: "king", Q: "queen", R: "rook", B: "bishop", N: "knight", P: "pawn", D: "queen (promoted)",
  },
};

/** A word in the page's language, {0} {1} ... filled in. */
export function t(lang, key, ...args) {
  const table = WORDS[lang] || WORDS.en;
  const text = key in table ? table[key] : (key in WORDS.en ? WORDS.en[key] : key);
  return text.replace(/\{(\d)\}/g, (_, i) => String(args[Number(i)] ?? ""));
}

/** A seat's name as people read it ("Rot"), from the engine's English name ("Red"). */
export function seatName(lang, state, seat) {
  const name = (state.seats || [])[seat];
  return name === undefined ? `#${seat + 1}` : t(lang, String(name));
}

/** The CSS class of a seat's colour: seat-red, seat-yellow, seat-blue, seat-green. */
export function seatClass(state, seat) {
  const name = String((state.seats || [])[seat] || "grey").toLowerCase();
  return /^[a-z]+$/.test(name) ? `seat-${name}` : "seat-grey";
}

/** Default options of update(). */
export function withDefaults(opts) {
  return {
    mySeats: Array.isArray(opts?.mySeats) ? opts.mySeats : [],
    interactive: Boolean(opts?.interactive),
    lang: opts?.lang === "de" ? "de" : "en",
  };
}

/** True when this page may move now: interactive, running, and the seat to move is ours. */
export function canPlay(state, opts) {
  return Boolean(state) && opts.interactive && !state.over && state.to_move !== null &&
    opts.mySeats.includes(state.to_move);
}

/**
 * A short lock against a double tap: after a move is sent, and after a new position
 * arrives, input is ignored for `ms` milliseconds (a second tap must not move for the
 * next seat, as at one phone in hot-seat).
 */
export class InputLock {
  constructor(ms = 250) { this.ms = ms; this.until = 0; }
  lock() { this.until = performance.now() + this.ms; }
  locked() { return performance.now() < this.until; }
}

/** The status line: whose turn, or the result. */
export function statusText(state, opts) {
  if (state.over) return resultText(state, opts);
  const who = seatName(opts.lang, state, state.to_move);
  const mine = opts.interactive && opts.mySeats.includes(state.to_move);
  return t(opts.lang, mine ? "your_turn" : "to_move", who);
}

/** The result in one line: who won (or shared, or a draw). */
export function resultText(state, opts) {
  const winners = state.winners || [];
  const names = winners.map((seat) => seatName(opts.lang, state, seat));
  if (names.length === 1) return t(opts.lang, "wins", names[0]);
  if (names.length > 1) {
    const and = opts.lang === "de" ? " und " : " and ";
    return t(opts.lang, "share", names.slice(0, -1).join(", ") + and + names[names.length - 1]);
  }
  return t(opts.lang, "draw");
}

/** The result card below a board: the result, and the lines below it. */
export function fillResultCard(card, state, opts, details = []) {
  card.replaceChildren();
  card.hidden = !state.over;
  if (!state.over) return;
  const title = html("p", "result-title", card);
  title.textContent = resultText(state, opts);
  for (const seat of state.resigned || []) {
    const line = html("p", "result-line", card);
    line.textContent = t(opts.lang, "resigned", seatName(opts.lang, state, seat));
  }
  for (const text of details) {
    const line = html("p", "result-line", card);
    line.textContent = text;
  }
}

/** The mark drawn on a seat's stone, so seats differ by shape as well as colour. */
export function drawMark(parent, seat, cx, cy, r) {
  const g = svg("g", { class: "mark" }, parent);
  const a = r * 0.45;
  if (seat === 0) { // a cross
    svg("path", { d: `M${cx - a} ${cy - a}L${cx + a} ${cy + a}M${cx + a} ${cy - a}L${cx - a} ${cy + a}` }, g);
  } else if (seat === 1) { // a ring
    svg("circle", { cx, cy, r: a, fill: "none" }, g);
  } else if (seat === 2) { // a plus
    svg("path", { d: `M${cx - a} ${cy}L${cx + a} ${cy}M${cx} ${cy - a}L${cx} ${cy + a}` }, g);
  } else { // a triangle
    svg("path", { d: `M${cx} ${cy - a}L${cx + a} ${cy + a * 0.8}L${cx - a} ${cy + a * 0.8}Z`, fill: "none" }, g);
  }
  return g;
}

/** The same marks on a canvas (the cube's 3D view). */
export function canvasMark(ctx, seat, cx, cy, r) {
  const a = r * 0.45;
  ctx.beginPath();
  if (seat === 0) {
    ctx.moveTo(cx - a, cy - a); ctx.lineTo(cx + a, cy + a);
    ctx.moveTo(cx + a, cy - a); ctx.lineTo(cx - a, cy + a);
  } else if (seat === 1) {
    ctx.arc(cx, cy, a, 0, 2 * Math.PI);
  } else if (seat === 2) {
    ctx.moveTo(cx - a, cy); ctx.lineTo(cx + a, cy);
    ctx.moveTo(cx, cy - a); ctx.lineTo(cx, cy + a);
  } else {
    ctx.moveTo(cx, cy - a); ctx.lineTo(cx + a, cy + a * 0.8); ctx.lineTo(cx - a, cy + a * 0.8);
    ctx.closePath();
  }
  ctx.stroke();
}

/** A legend of the seats: mark (or `icon(svgElement, seat)`), name, score, whose turn, who is out. */
export function fillSeats(list, state, opts, withScores, icon = null) {
  list.replaceChildren();
  (state.seats || []).forEach((_, seat) => {
    const item = html("li", `seat-item ${seatClass(state, seat)}`, list);
    if (!state.over && state.to_move === seat) item.classList.add("turn");
    if ((state.eliminated || []).includes(seat)) item.classList.add("out");
    const picture = svg("svg", { viewBox: "0 0 20 20", class: "seat-icon", "aria-hidden": "true" }, item);
    if (icon) {
      icon(picture, seat);
    } else {
      svg("circle", { cx: 10, cy: 10, r: 9, class: "stone" }, picture);
      drawMark(picture, seat, 10, 10, 9);
    }
    const label = html("span", "seat-name", item);
    let text = seatName(opts.lang, state, seat);
    if (opts.mySeats.includes(seat) && opts.mySeats.length === 1) text += ` (${t(opts.lang, "you")})`;
    label.textContent = text;
    if (withScores) {
      const score = html("span", "seat-score", item);
      score.textContent = String((state.scores || [])[seat] ?? 0);
    }
    if ((state.eliminated || []).includes(seat)) {
      const out = html("span", "seat-out", item);
      out.textContent = t(opts.lang, "out");
    }
  });
}

/** True when the user asked the system for less motion. */
export function reducedMotion() {
  return window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
}
