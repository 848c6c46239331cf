// Test harness for the boards (tests/test_web_boards.py): mounts the board named in
// ?board=NAME and records every api.play call; the test drives it through window.harness.
const params = new URLSearchParams(location.search);
const name = params.get("board");
const played = [];
const violations = [];
const picked = [];
document.addEventListener("securitypolicyviolation", (e) => violations.push(`${e.violatedDirective} ${e.blockedURI}`));
const module = await import(`/static/boards/${name}.js`);
const board = module.mount(document.getElementById("board"), { play: (move) => played.push(move) });
let chart = null;
window.harness = {
  played,
  violations,
  picked,
  update: (state, opts) => board.update(state, opts),
  destroy: () => board.destroy(),
  chart: async (rows, opts) => {
    const { drawChart } = await import("/static/boards/chart.js");
    if (chart) chart.destroy();
    chart = drawChart(document.getElementById("chart"), rows, { ...opts, onPick: (ply) => picked.push(ply) });
  },
};
document.body.dataset.ready = "1";
