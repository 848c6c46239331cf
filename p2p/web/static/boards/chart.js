// The solver's evaluation of a finished Connect Four round as a chart: one bar per move,
// up when the position after it is Red's, down when Yellow's; exact results beyond the
// half line, search estimates (pale) within it; "?" marks a mistake, "!" the decisive
// move. Rows come from the connect4 web view's analysis(game). Click or Enter on a
// move's column calls opts.onPick(ply) (to step the board there).
//
//   drawChart(element, rows, {lang, seats, ply, onPick}) -> {update(ply), destroy()}

import { html, svg, t } from "./common.js";

const W = 600;
const H = 170;
const MID = 85;
const LEFT = 4;

export function drawChart(element, rows, opts = {}) {
  const lang = opts.lang === "de" ? "de" : "en";
  const seats = opts.seats || ["Red", "Yellow"];
  const root = html("figure", "chart-box", element);
  const caption = html("figcaption", "chart-caption", root);
  caption.textContent = t(lang, "chart");
  const width = W;
  const COL = (W - LEFT - 4) / Math.max(rows.length, 24);
  const chart = svg("svg", {
    class: "chart", viewBox: `0 0 ${width} ${H}`, role: "group", "aria-label": t(lang, "chart"),
  }, root);
  const scale = (MID - 18) / 100;
  svg("line", { x1: LEFT, y1: MID, x2: width - 2, y2: MID, class: "axis" }, chart);
  for (const y of [MID - 50 * scale, MID + 50 * scale]) {
    svg("line", { x1: LEFT, y1: y, x2: width - 2, y2: y, class: "axis", "stroke-dasharray": "2 3" }, chart);
  }
  const up = svg("text", { x: LEFT + 2, y: 12, class: "label" }, chart);
  up.textContent = `▲ ${t(lang, "chart_up", t(lang, seats[0]))}`;
  const down = svg("text", { x: LEFT + 2, y: H - 3, class: "label" }, chart);
  down.textContent = `▼ ${t(lang, "chart_up", t(lang, seats[1]))}`;
  const columns = [];
  const trend = [];
  rows.forEach((row, i) => {
    const x = LEFT + i * COL;
    const col = svg("g", { class: "ply-col", tabindex: 0, role: "button", "data-ply": row.ply }, chart);
    svg("rect", { x, y: 16, width: COL, height: H - 32, class: "bg" }, col);
    const value = row.value;
    let kind = "unknown";
    if (value !== null && value !== undefined) {
      kind = row.score === null || row.score === undefined ? "est" : "exact";
      const h = Math.max(1.5, Math.abs(value) * scale);
      const y = value >= 0 ? MID - h : MID;
      svg("rect", {
        x: x + COL * 0.15, y, width: COL * 0.7, height: h,
        class: `bar ${value >= 0 ? "pos" : "neg"} ${kind}`,
      }, col);
      trend.push(`${x + COL / 2},${MID - value * scale}`);
    } else {
      svg("rect", { x: x + COL * 0.15, y: MID - 1, width: COL * 0.7, height: 2, class: "bar unknown" }, col);
    }
    const notes = (row.mistake ? "?" : "") + (row.decisive ? "!" : "");
    if (notes) {
      const note = svg("text", { x: x + COL / 2, y: value < 0 ? 28 : H - 20, class: "note" }, col);
      note.textContent = notes;
    }
    const words = [t(lang, "ply", row.ply) + `: ${row.move}`];
    if (kind === "exact") {
      words.push(row.score > 0 ? t(lang, "chart_up", t(lang, seats[0])) :
        row.score < 0 ? t(lang, "chart_up", t(lang, seats[1])) : t(lang, "draw"));
    } else {
      words.push(t(lang, kind === "est" ? "estimate" : "unknown"));
    }
    if (row.mistake) words.push(t(lang, "mistake"));
    if (row.decisive) words.push(t(lang, "decisive"));
    const title = svg("title", {}, col);
    title.textContent = words.join(" · ");
    col.setAttribute("aria-label", words.join(" · "));
    const pick = () => { if (opts.onPick) opts.onPick(row.ply); };
    col.addEventListener("click", pick);
    col.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); pick(); }
    });
    columns.push(col);
  });
  if (trend.length > 1) svg("polyline", { points: trend.join(" "), class: "trend" }, chart);

  function update(ply) {
    columns.forEach((col) => col.classList.toggle("current", Number(col.dataset.ply) === ply));
  }
  update(opts.ply);
  return { update, destroy() { root.remove(); } };
}
