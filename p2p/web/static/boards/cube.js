// Viergewinnt 3D: a 3D view of the 4x4x4 cube you can turn (drag, or arrow keys when it
// has focus; a canvas projection, no library), the four levels side by side as 4x4 grids,
// and a pad of the 16 pillars. Clicking a pillar (in the 3D view, on any level, or on the
// pad) drops a stone there; every scored line is drawn in its owner's colour, the lines
// of the last move stand out. 2 or 3 players.

import {
  InputLock, canPlay, canvasMark, drawMark, fillResultCard, fillSeats, html, seatClass,
  statusText, svg, t, withDefaults,
} from "./common.js";

const N = 4;
const GRID = 22;
const GAP = 14;
const TOP = 14;

function xyz(cell) { return [cell % N, Math.floor(cell / N) % N, Math.floor(cell / (N * N))]; }

export function mount(element, api) {
  const root = html("div", "board cube-board", element);
  const status = html("p", "board-status", root);
  status.setAttribute("aria-live", "polite");
  const seats = html("ul", "seat-list", root);
  const layout = html("div", "cube-layout", root);
  const canvas = html("canvas", "cube-3d", layout);
  canvas.tabIndex = 0;
  canvas.setAttribute("role", "img");
  const side = html("div", "cube-side", layout);
  const levels = svg("svg", { class: "cube-levels" }, side);
  const pad = html("div", "cube-pad", side);
  pad.setAttribute("role", "group");
  const card = html("div", "result-card", root);
  card.hidden = true;
  const lock = new InputLock(250);
  let state = null;
  let opts = withDefaults({});
  let yaw = -0.45;
  let pitch = 0.45;
  let hover = -1;
  let drag = null;

  function play(move) {
    if (!state || lock.locked() || !canPlay(state, opts) || !state.legal.includes(move)) return;
    lock.lock();
    api.play(move);
  }

  // -- the 3D view ------------------------------------------------------------------

  function geometry() {
    const size = canvas.clientWidth || 320;
    const scale = size / 7.6;
    const cy = Math.cos(yaw), sy = Math.sin(yaw), cp = Math.cos(pitch), sp = Math.sin(pitch);
    return {
      size, scale,
      project(x, y, z) { // x: file, y: row, z: level, all 0..3
        const X = x - 1.5, Y = z - 1.0, Z = y - 1.5; // the plate below level 1 is in view too
        const x1 = X * cy - Z * sy, z1 = X * sy + Z * cy;
        const y2 = Y * cp + z1 * sp, z2 = z1 * cp - Y * sp; // tilted: the top leans back
        const f = 1 / (1 + z2 * 0.07);
        return { x: size / 2 + x1 * scale * f, y: size / 2 - y2 * scale * f, depth: z2, f };
      },
    };
  }

  const colours = new Map();
  function colour(seat) { // the seats' colours from the style sheet, read once
    const name = String(state.seats[seat] || "grey").toLowerCase();
    if (!colours.has(name)) {
      colours.set(name, getComputedStyle(root).getPropertyValue(`--seat-${name}`).trim() || "#999");
    }
    return colours.get(name);
  }

  function draw() {
    if (!state) return;
    const dpr = window.devicePixelRatio || 1;
    const geo = geometry();
    canvas.width = Math.round(geo.size * dpr);
    canvas.height = Math.round(geo.size * dpr);
    canvas.dataset.yaw = yaw.toFixed(2);
    canvas.dataset.pitch = pitch.toFixed(2);
    const ctx = canvas.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, geo.size, geo.size);
    // The base plate and the 16 pillars.
    const corners = [[-0.5, -0.5], [3.5, -0.5], [3.5, 3.5], [-0.5, 3.5]].map(([x, y]) => geo.project(x, y, -0.6));
    ctx.fillStyle = "rgba(60, 80, 120, .18)";
    ctx.strokeStyle = "rgba(60, 80, 120, .6)";
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    corners.forEach((p, i) => (i ? ctx.lineTo(p.x, p.y) : ctx.moveTo(p.x, p.y)));
    ctx.closePath();
    ctx.fill();
    ctx.stroke();
    for (let pillar = 0; pillar < N * N; pillar++) {
      const [x, y] = [pillar % N, Math.floor(pillar / N)];
      const a = geo.project(x, y, -0.6), b = geo.project(x, y, 3.5);
      ctx.strokeStyle = pillar === hover ? "rgba(40, 90, 220, .95)" : "rgba(60, 70, 90, .35)";
      ctx.lineWidth = pillar === hover ? 5 : 2;
      ctx.beginPath(); ctx.moveTo(a.x, a.y); ctx.lineTo(b.x, b.y); ctx.stroke();
    }
    // Stones and empty cells, far ones first.
    const items = state.cells.map((seat, cell) => ({ seat, cell, p: geo.project(...xyz(cell)) }));
    items.sort((a, b) => b.p.depth - a.p.depth || a.cell - b.cell);
    const last = state.last_move ? state.last_move.cell : -1;
    for (const { seat, cell, p } of items) {
      const r = geo.scale * 0.22 * p.f;
      ctx.beginPath();
      if (seat < 0) {
        ctx.fillStyle = "rgba(60, 70, 90, .35)";
        ctx.arc(p.x, p.y, r * 0.22, 0, 2 * Math.PI);
        ctx.fill();
        continue;
      }
      ctx.arc(p.x, p.y, r, 0, 2 * Math.PI);
      ctx.fillStyle = colour(seat);
      ctx.fill();
      ctx.lineWidth = cell === last ? 3 : 1;
      ctx.strokeStyle = cell === last ? "#111" : "rgba(0, 0, 0, .45)";
      ctx.stroke();
      ctx.lineWidth = Math.max(1.5, r * 0.18);
      ctx.strokeStyle = seat === 1 ? "rgba(0, 0, 0, .75)" : "rgba(255, 255, 255, .9)";
      canvasMark(ctx, seat, p.x, p.y, r);
    }
    // Scored lines: a band in the owner's colour; the last move's lines outlined.
    for (const line of state.lines) {
      const a = geo.project(...xyz(line.cells[0]));
      const b = geo.project(...xyz(line.cells[line.cells.length - 1]));
      ctx.lineCap = "round";
      ctx.strokeStyle = line.last ? "#ff2bd6" : "rgba(20, 20, 30, .8)";
      ctx.lineWidth = line.last ? 9 : 7;
      ctx.beginPath(); ctx.moveTo(a.x, a.y); ctx.lineTo(b.x, b.y); ctx.stroke();
      ctx.strokeStyle = colour(line.seat);
      ctx.lineWidth = line.last ? 5 : 4;
      ctx.beginPath(); ctx.moveTo(a.x, a.y); ctx.lineTo(b.x, b.y); ctx.stroke();
    }
    // Files and rows beside the base plate, on top with a light halo.
    ctx.font = `600 ${Math.round(geo.scale * 0.3)}px system-ui, sans-serif`;
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    ctx.lineWidth = 4;
    ctx.strokeStyle = "rgba(255, 255, 255, .85)";
    ctx.fillStyle = "#223";
    for (let i = 0; i < N; i++) {
      for (const [text, p] of [["abcd"[i], geo.project(i, -1.1, -0.6)], [String(i + 1), geo.project(-1.1, i, -0.6)]]) {
        ctx.strokeText(text, p.x, p.y);
        ctx.fillText(text, p.x, p.y);
      }
    }
  }

  function pick(clientX, clientY) {
    const rect = canvas.getBoundingClientRect();
    const geo = geometry();
    const px = (clientX - rect.left) * (geo.size / rect.width);
    const py = (clientY - rect.top) * (geo.size / rect.height);
    let best = -1, bestDistance = Infinity;
    for (let cell = 0; cell < N * N * N; cell++) {
      const p = geo.project(...xyz(cell));
      const d = Math.hypot(p.x - px, p.y - py);
      if (d < bestDistance) { best = cell; bestDistance = d; }
    }
    return bestDistance <= geo.scale * 0.45 ? best % (N * N) : -1;
  }

  canvas.addEventListener("pointerdown", (event) => {
    drag = { x: event.clientX, y: event.clientY, moved: 0, id: event.pointerId };
    canvas.setPointerCapture(event.pointerId);
  });
  canvas.addEventListener("pointermove", (event) => {
    if (!drag) {
      const pillar = pick(event.clientX, event.clientY);
      if (pillar !== hover) setHover(pillar);
      return;
    }
    const dx = event.clientX - drag.x, dy = event.clientY - drag.y;
    drag.moved += Math.abs(dx) + Math.abs(dy);
    drag.x = event.clientX; drag.y = event.clientY;
    yaw += dx * 0.01;
    pitch = Math.max(-0.2, Math.min(1.4, pitch + dy * 0.01));
    draw();
  });
  canvas.addEventListener("pointerup", (event) => {
    const wasClick = drag && drag.moved < 6;
    drag = null;
    if (wasClick) {
      const pillar = pick(event.clientX, event.clientY);
      if (pillar >= 0) play(state.pillars[pillar]);
    }
  });
  canvas.addEventListener("pointercancel", () => { drag = null; });
  canvas.addEventListener("pointerleave", () => { if (!drag) setHover(-1); });
  canvas.addEventListener("keydown", (event) => {
    const step = Math.PI / 12;
    if (event.key === "ArrowLeft") yaw -= step;
    else if (event.key === "ArrowRight") yaw += step;
    else if (event.key === "ArrowUp") pitch = Math.min(1.4, pitch + step);
    else if (event.key === "ArrowDown") pitch = Math.max(-0.2, pitch - step);
    else return;
    event.preventDefault();
    draw();
  });

  // -- the four levels side by side ---------------------------------------------------

  function renderLevels() {
    levels.replaceChildren();
    const width = N * (N * GRID) + (N - 1) * GAP;
    levels.setAttribute("viewBox", `0 0 ${width} ${TOP + N * GRID + 14}`);
    levels.setAttribute("role", "group");
    const scored = new Map();
    for (const line of state.lines) {
      for (const cell of line.cells) scored.set(cell, (scored.get(cell) || "") + (line.last ? " lastline" : " scored"));
    }
    const playable = canPlay(state, opts);
    for (let z = 0; z < N; z++) {
      const gx = z * (N * GRID + GAP);
      const label = svg("text", { x: gx + (N * GRID) / 2, y: 10, class: "cube-label" }, levels);
      label.textContent = t(opts.lang, "level", z + 1);
      const cells = svg("g", { class: "cube-cells" }, levels);
      for (let y = 0; y < N; y++) {
        for (let x = 0; x < N; x++) {
          const cell = x + N * y + N * N * z;
          const pillar = x + N * y;
          const move = state.pillars[pillar];
          const legal = playable && state.legal.includes(move);
          const g = svg("g", { "data-cell": cell, "data-move": move, class: legal ? "legal" : "" }, cells);
          const cx = gx + x * GRID, cy = TOP + (N - 1 - y) * GRID;
          svg("rect", { x: cx, y: cy, width: GRID, height: GRID, class: `cube-cell${pillar === hover ? " hl" : ""}` }, g);
          const seat = state.cells[cell];
          if (seat >= 0) {
            let extra = scored.get(cell) || "";
            if (state.last_move && state.last_move.cell === cell) extra += " last";
            const stone = svg("g", { class: `cube-stone ${seatClass(state, seat)}${extra}` }, g);
            svg("circle", { cx: cx + GRID / 2, cy: cy + GRID / 2, r: 8.5, class: "stone" }, stone);
            drawMark(stone, seat, cx + GRID / 2, cy + GRID / 2, 8.5);
          }
          g.addEventListener("click", () => play(move));
          g.addEventListener("pointerenter", () => setHover(pillar));
          g.addEventListener("pointerleave", () => setHover(-1));
        }
      }
      for (let x = 0; x < N; x++) {
        const letter = svg("text", { x: gx + x * GRID + GRID / 2, y: TOP + N * GRID + 11, class: "cube-label" }, levels);
        letter.textContent = "abcd"[x];
      }
    }
  }

  // -- the pad of the 16 pillars ---------------------------------------------------------

  function renderPad() {
    const focused = pad.contains(document.activeElement) ? document.activeElement.dataset.move : null;
    pad.replaceChildren();
    pad.setAttribute("aria-label", t(opts.lang, "legal"));
    const playable = canPlay(state, opts);
    for (let y = N - 1; y >= 0; y--) {
      for (let x = 0; x < N; x++) {
        const pillar = x + N * y;
        const move = state.pillars[pillar];
        const button = html("button", pillar === hover ? "hl" : "", pad);
        button.type = "button";
        button.dataset.move = move;
        button.dataset.pillar = String(pillar);
        const height = state.heights[pillar];
        button.textContent = move;
        const small = html("span", "height", button);
        small.textContent = height >= N ? t(opts.lang, "full") : `${height}/${N}`;
        button.setAttribute("aria-label", `${t(opts.lang, "pillar", move)}, ${small.textContent}`);
        button.disabled = !(playable && state.legal.includes(move));
        button.addEventListener("click", () => play(move));
        button.addEventListener("focus", () => setHover(pillar));
        button.addEventListener("blur", () => setHover(-1));
        button.addEventListener("pointerenter", () => setHover(pillar));
        button.addEventListener("pointerleave", () => setHover(-1));
        button.addEventListener("keydown", (event) => onPadKey(event, x, y));
      }
    }
    if (focused) pad.querySelector(`[data-move="${focused}"]`)?.focus();
  }

  function onPadKey(event, x, y) {
    const steps = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1] };
    const step = steps[event.key];
    if (!step) return;
    event.preventDefault();
    const nx = (x + step[0] + N) % N, ny = (y + step[1] + N) % N;
    pad.querySelector(`[data-pillar="${nx + N * ny}"]`)?.focus();
  }

  function setHover(pillar) {
    if (pillar === hover) return;
    hover = pillar;
    levels.querySelectorAll(".cube-cell").forEach((rect) => {
      const cell = Number(rect.parentNode.dataset.cell);
      rect.classList.toggle("hl", cell % (N * N) === hover);
    });
    pad.querySelectorAll("button").forEach((b) => b.classList.toggle("hl", Number(b.dataset.pillar) === hover));
    draw();
  }

  function render() {
    status.textContent = statusText(state, opts);
    fillSeats(seats, state, opts, true);
    canvas.setAttribute("aria-label", t(opts.lang, "turn_view"));
    renderLevels();
    renderPad();
    draw();
    const scores = state.seats.map((_, seat) => `${t(opts.lang, state.seats[seat])} ${state.scores[seat]}`);
    fillResultCard(card, state, opts, [`${t(opts.lang, "score")}: ${scores.join(" · ")}`]);
  }

  const resize = typeof ResizeObserver === "function" ? new ResizeObserver(() => draw()) : null;
  resize?.observe(canvas);

  return {
    update(newState, newOpts) {
      const prev = state;
      state = newState;
      opts = withDefaults(newOpts);
      if (prev && prev.ply !== state.ply) lock.lock();
      render();
    },
    destroy() { resize?.disconnect(); root.remove(); },
  };
}
