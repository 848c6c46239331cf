// The browser face of p2p: one page over the process's peer (docs/web.md).
// The server sends whole snapshots and lines; the page renders them and sends actions.
// Untrusted text (nicknames, chat) is only ever set with textContent.

const $ = (id) => document.getElementById(id);

const app = {
  ws: null,
  texts: {},
  games: [],
  lang: 'en',
  snap: null,
  lines: [],
  pinned: null,          // 'local', a round id, or null (auto)
  replay: null,          // {key, states, ply}
  chosen: new Set(),     // lobby people ticked for an invitation (public key hex)
  board: null,           // {script, key, handle, el}
  hiddenSince: null,
  seenMoves: new Map(),  // round id -> moves seen while the tab was visible
  retry: 0,
  baseTitle: 'p2p',
  formGame: null,
  lastTurnKey: null,
};

// -- helpers -------------------------------------------------------------------------------

function t(key, params = {}) {
  const text = app.texts[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (m, name) => (name in params ? String(params[name]) : m));
}

// An element with text children only via textContent (never innerHTML).
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'on') for (const [ev, fn] of Object.entries(value)) el.addEventListener(ev, fn);
    else if (name === 'class') el.className = value;
    else if (name === 'dataset') Object.assign(el.dataset, value);
    else if (name in el && typeof value !== 'string') el[name] = value;
    else el.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

function send(a, fields = {}) {
  if (app.ws && app.ws.readyState === WebSocket.OPEN) app.ws.send(JSON.stringify({ a, ...fields }));
}

function gameTitle(name) {
  const g = app.games.find((x) => x.name === name);
  return g ? g.title[app.lang === 'de' ? 0 : 1] : name;
}

function gameInfo(name) {
  return app.games.find((x) => x.name === name) || { options: {}, levels: [], players: 2 };
}

function levelName(level) { return t('level.' + level) === 'level.' + level ? level : t('level.' + level); }
function seatColor(color) { const k = 'seat.' + color; return app.texts[k] ? t(k) : color; }

function seatLabel(round, i) {
  const seat = round.seats[i];
  if (!seat) return '?';
  const who = seat.me ? t('ui.you') : seat.computer ? t('ui.computer', { level: levelName(seat.computer) })
    : seat.open ? t('ui.open') : seat.nick;
  return `${seatColor(seat.color)} (${who})`;
}

function localSeatLabel(local, i) {
  const color = seatColor(local.board.state.seat_names[i] || `Player ${i + 1}`);
  const level = local.levels[i];
  return level ? `${color} (${t('ui.computer', { level: levelName(level) })})` : color;
}

function resultText(state, winners, label) {
  if (gameInfo(state.game).ranking) {
    const scores = state.scores;
    // the game's own places when it gives them (chess4: at equal points a seat that
    // resigned ranks below one that played on), else by points
    const rankOf = (i) => (state.ranks ? state.ranks[i] : 1 + scores.filter((s) => s > scores[i]).length);
    const order = scores.map((s, i) => i).sort((a, b) => rankOf(a) - rankOf(b) || a - b);
    return order.map((i) => {
      const rank = rankOf(i);
      return t('ui.result.rank', { rank, seat: label(i), points: scores[i] });
    }).join(' · ');
  }
  if (!winners.length) return t('ui.result.draw');
  if (winners.length === 1) return t('ui.result.win', { seat: label(winners[0]) });
  return t('ui.result.wins', { seats: winners.map(label).join(', ') });
}

// A slow round's limit per move in the largest unit that divides it: 1 d, 2 h, 30 min.
function formatLimit(secs) {
  for (const [size, unit] of [[86400, 'd'], [3600, 'h'], [60, 'min']]) {
    if (secs % size === 0) return `${secs / size} ${unit}`;
  }
  return `${secs} s`;
}

function formatTime(secs, slow) {
  if (secs === null || secs === undefined) return '';
  if (!slow) return `${Math.floor(secs / 60)}:${String(secs % 60).padStart(2, '0')}`;
  if (secs >= 2 * 86400) return `${Math.floor(secs / 86400)} d`;
  if (secs >= 3600) return `${Math.floor(secs / 3600)} h`;
  return `${Math.max(1, Math.floor(secs / 60))} min`;
}

// -- the connection to the process -------------------------------------------------------------

function connect() {
  const ws = new WebSocket(`ws://${location.host}/ws`);
  app.ws = ws;
  ws.addEventListener('open', () => { app.retry = 0; banner(null); });
  ws.addEventListener('message', (ev) => {
    let msg;
    try { msg = JSON.parse(ev.data); } catch { return; }
    receive(msg);
  });
  ws.addEventListener('close', () => {
    app.ws = null;
    banner(app.texts['ui.page.reconnecting'] ? t('ui.page.reconnecting') : 'reconnecting …');
    document.body.dataset.page = 'reconnecting';
    const wait = Math.min(5000, 500 * 2 ** app.retry++);
    setTimeout(connect, wait);
  });
}

function banner(text) {
  const el = $('banner');
  el.hidden = !text;
  el.textContent = text || '';
  if (!text) document.body.dataset.page = 'connected';
}

function receive(msg) {
  switch (msg.t) {
    case 'hello':
      app.texts = msg.texts; app.games = msg.games; app.lang = msg.lang;
      document.documentElement.lang = msg.lang;
      staticTexts(); buildNewForm(); render();
      relabelInfo();
      break;
    case 'history':
      app.lines = msg.lines.slice();
      renderLog();
      break;
    case 'line':
      app.lines.push(msg);
      if (app.lines.length > 400) app.lines.shift();
      appendLine(msg);
      break;
    case 'state':
      if (app.snap && msg.seq < app.snap.seq) return;
      app.snap = msg;
      render();
      break;
    case 'replay':
      app.replay = { key: msg.round, states: msg.states, ply: Math.min(msg.states.length - 1, app.pendingPly ?? Infinity) };
      app.pendingPly = null;
      render();
      break;
    case 'analysis':
      showAnalysis(msg.data);
      break;
    case 'rules':
      app.info = { kind: 'rules', game: msg.game };
      showInfo(t('ui.rules.title', { game: gameTitle(msg.game) }), msg.lines.map((line) => h('p', {}, line)), 'rules');
      break;
    case 'stats':
      showStats(msg);
      break;
    case 'your_turn':
      yourTurn(msg);
      break;
    default:
      break;
  }
}

// -- texts that do not change with the state --------------------------------------------------

function staticTexts() {
  const set = (id, key) => { const el = $(id); if (el) el.textContent = t(key); };
  document.title = app.baseTitle = t('ui.title');
  set('rounds-title', 'ui.rounds'); set('invitations-title', 'ui.invitations');
  set('lobby-title', 'ui.lobby'); set('friends-title', 'ui.friends');
  set('new-title', 'ui.new_round'); set('join-title', 'ui.join_title');
  set('settings-title', 'ui.settings'); set('log-title', 'ui.log');
  set('move-label', 'ui.move_input'); set('move-send', 'ui.play');
  set('join-send', 'ui.join'); set('chat-send', 'ui.send');
  set('moves-title', 'ui.moves');
  set('rp-first', 'ui.first'); set('rp-prev', 'ui.prev'); set('rp-next', 'ui.next');
  set('rp-last', 'ui.last'); set('rp-close', 'ui.replay.close');
  $('rp-first').setAttribute('aria-label', 'first'); $('rp-last').setAttribute('aria-label', 'last');
  $('rp-prev').setAttribute('aria-label', 'previous'); $('rp-next').setAttribute('aria-label', 'next');
  $('chat-input').placeholder = t('ui.chat.placeholder');
  $('join-code').placeholder = t('ui.code');
  $('lang').textContent = app.lang === 'de' ? 'English' : 'Deutsch';
  set('btn-stats', 'ui.stats'); set('info-close', 'ui.close');
  renderLog();
}

// -- the whole page from the snapshot --------------------------------------------------------

function render() {
  const snap = app.snap;
  if (!snap || !app.texts['ui.title']) return;
  const conn = snap.connection;
  $('conn').textContent = t('ui.conn.' + conn);
  $('conn').dataset.state = conn;
  document.body.dataset.notify = snap.settings.notifications ? 'on' : 'off';
  $('me').textContent = snap.me ? `${snap.me.nick} [${snap.me.fp}]` : snap.settings.nick;
  const watching = Boolean(snap.me && !snap.me.acting);  // another session of our key plays
  $('watching').hidden = !watching;
  $('watching-text').textContent = watching ? t('ui.watching') : '';
  $('btn-takeover').textContent = t('ui.takeover');
  renderRounds(); renderInvitations(); renderLobby(); renderFriends(); renderSettings();
  renderChatTargets(); renderStage();
  if (!document.hidden) {  // what was seen: the base of "moved while you were away"
    for (const r of snap.rounds) if (r.board) app.seenMoves.set(r.id, r.board.state.history.length);
  }
}

function shownRound() {
  const snap = app.snap;
  if (!snap) return null;
  if (app.pinned === 'local') return snap.local ? 'local' : null;
  const rounds = snap.rounds;
  if (app.pinned) {
    const r = rounds.find((x) => x.id === app.pinned);
    if (r) return r;
  }
  const held = rounds.filter((r) => r.held !== false);
  const pick = held.find((r) => r.my_turn && !r.slow)
    || held.find((r) => !r.over && !r.slow)
    || held.find((r) => r.my_turn)
    || rounds[rounds.length - 1];
  if (pick) return pick;
  return snap.local ? 'local' : null;
}

function turnText(r) {
  if (r.over) return t('ui.turn.over');
  if (!r.board || r.phase !== 'play') return t('ui.turn.forming');
  if (r.my_turn) return t('ui.turn.you');
  const seat = r.seats[r.board.state.to_move];
  if (!seat) return '?';
  return t('ui.turn.other', { nick: seat.computer ? t('ui.computer', { level: levelName(seat.computer) }) : seat.nick || '?' });
}

function renderRounds() {
  const list = $('rounds');
  list.replaceChildren();
  const shown = shownRound();
  const rounds = app.snap.rounds;
  rounds.forEach((r, n) => {
    const others = r.seats.filter((s) => !s.me).map((s) => (s.computer ? t('ui.computer', { level: levelName(s.computer) }) : s.nick || t('ui.open'))).join(', ');
    const bits = [`${n + 1}. ${gameTitle(r.game)}`, others, turnText(r)];
    if (r.time_left !== null && !r.over) bits.push(t('ui.time_left', { time: formatTime(r.time_left, r.slow) }));
    bits.push(r.slow ? t('ui.slow', { limit: formatLimit(r.turn) }) : t('ui.live'));
    const li = h('li', { class: (r === shown ? 'shown ' : '') + (r.my_turn ? 'mine' : ''), dataset: { round: r.id, turn: r.my_turn ? 'me' : '' } },
      h('button', { type: 'button', class: 'link', on: { click: () => { app.pinned = r.id; app.replay = null; render(); $('stage').focus(); } } }, bits.join(' · ')));
    list.append(li);
  });
  if (app.snap.local) {
    const l = app.snap.local;
    list.append(h('li', { class: shownRound() === 'local' ? 'shown' : '' },
      h('button', { type: 'button', class: 'link', on: { click: () => { app.pinned = 'local'; app.replay = null; render(); } } },
        t('ui.local.title', { game: gameTitle(l.game) }))));
  }
  if (!list.children.length) list.append(h('li', { class: 'muted' }, t('ui.rounds.none')));
}

function renderInvitations() {
  const list = $('invitations');
  list.replaceChildren();
  for (const inv of app.snap.invitations) {
    const opts = Object.entries(inv.options).filter(([k]) => k !== 'first').map(([k, v]) => `${k}=${v}`).join(' ');
    list.append(h('li', { dataset: { invitation: inv.id } },
      h('div', {}, t('ui.invitation', { from: inv.from, game: gameTitle(inv.game) })),
      h('div', { class: 'muted' }, [opts, inv.turn ? t('ui.slow', { limit: formatLimit(inv.turn) }) : t('ui.live')].filter(Boolean).join(' · ')),
      h('button', { type: 'button', class: 'accept', on: { click: () => { app.pinned = null; send('accept', { id: inv.id }); } } }, t('ui.accept')),
      h('button', { type: 'button', class: 'decline', on: { click: () => send('decline', { id: inv.id }) } }, t('ui.decline'))));
  }
  $('invitations-box').hidden = !app.snap.invitations.length;
}

function renderLobby() {
  const list = $('lobby');
  list.replaceChildren();
  const snap = app.snap;
  if (snap.me) list.append(h('li', { class: 'me' }, `${snap.me.nick} [${snap.me.fp}] · ${t('ui.you')}`));
  for (const p of snap.lobby) {
    const box = h('input', { type: 'checkbox', checked: app.chosen.has(p.pk), 'aria-label': p.nick, dataset: { pk: p.pk },
      on: { change: (ev) => { if (ev.target.checked) app.chosen.add(p.pk); else app.chosen.delete(p.pk); buildStarter(); } } });
    const label = h('label', {}, box, ' ', p.friend ? '★ ' : '', p.nick, ' ', h('span', { class: 'fp' }, `[${p.fp}]`),
      ' · ', p.busy ? t('ui.busy') : t('ui.free'),
      p.clock ? ' · ' + t(p.clock.ahead ? 'ui.clock_ahead' : 'ui.clock_behind', p.clock) : '');
    const li = h('li', { dataset: { nick: p.nick } }, label);
    if (p.impostor) li.append(h('div', { class: 'warn' }, '⚠ ' + t('ui.impostor', { friend: p.impostor })));
    if (!p.friend) li.append(h('button', { type: 'button', class: 'small', on: { click: () => send('friend', { who: p.pk }) } }, t('ui.befriend')));
    list.append(li);
  }
  for (const pk of [...app.chosen]) if (!snap.lobby.some((p) => p.pk === pk)) app.chosen.delete(pk);
  buildStarter();
  if (!snap.lobby.length) list.append(h('li', { class: 'muted' }, t('ui.lobby.empty')));
}

function renderFriends() {
  const list = $('friends');
  list.replaceChildren();
  for (const f of app.snap.friends) {
    list.append(h('li', {}, `★ ${f.nick} [${f.fp}]`, f.online ? ` · ${t('ui.online')}` : '',
      ' ', h('button', { type: 'button', class: 'small', on: { click: () => send('unfriend', { who: f.pk }) } }, t('ui.unfriend'))));
  }
}

function renderSettings() {
  const form = $('settings-form');
  const s = app.snap.settings;
  const key = JSON.stringify([app.lang, s]);
  // rebuilt only when the saved settings change: what is being typed there stays
  if (form.dataset.built === key) return;
  if (document.activeElement && form.contains(document.activeElement) && form.dataset.lang === app.lang) return;
  form.dataset.built = key;
  form.dataset.lang = app.lang;
  form.replaceChildren(
    h('label', {}, t('ui.nick'), h('input', { name: 'nick', value: s.nick, maxlength: 20 })),
    h('label', {}, t('ui.namespace'), h('input', { name: 'namespace', value: s.namespace, maxlength: 32 })),
    h('label', {}, t('ui.broker'), h('input', { name: 'broker', value: s.broker, maxlength: 500 })),
    h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'notifications', checked: s.notifications }), ' ', t('ui.notifications')),
    h('div', { class: 'row' },
      h('button', { type: 'submit' }, t('ui.save')),
      h('button', { type: 'button', on: { click: () => send('connect', {}) } }, t('ui.connect')),
      h('button', { type: 'button', on: { click: () => send('local_broker', {}) } }, t('ui.local_broker'))),
  );
}

function renderChatTargets() {
  const select = $('chat-target');
  const shown = shownRound();
  const want = [['', t('ui.chat.lobby')]];
  if (shown && shown !== 'local') want.push([shown.id, `${t('ui.chat.round')}: ${gameTitle(shown.game)}`]);
  const current = select.value;
  const same = select.options.length === want.length
    && want.every(([v, label], i) => select.options[i].value === v && select.options[i].textContent === label);
  if (same) return;  // an open drop-down stays open
  select.replaceChildren(...want.map(([v, label]) => h('option', { value: v }, label)));
  select.value = want.some(([v]) => v === current) ? current : want[want.length - 1][0];
}

// -- the stage: status, board, controls --------------------------------------------------------

async function mountBoard(script, key) {
  if (app.board && app.board.script === script && app.board.key === key) return app.board;
  if (app.board && app.board.handle) { try { app.board.handle.destroy(); } catch (e) { console.error(e); } }
  const el = $('board');
  el.replaceChildren();
  const entry = { script, key, handle: null };
  app.board = entry;
  const api = {
    play: (move) => playMove(move),
    lang: () => app.lang,
    t,
  };
  try {
    const mod = await import(`/static/${script}`);
    if (app.board !== entry) return entry;
    entry.handle = mod.mount(el, api);
  } catch (err) {
    console.error(err);
    if (script !== 'boards/fallback.js') return mountBoard('boards/fallback.js', key);
  }
  return entry;
}

function playMove(move) {
  const shown = shownRound();
  if (app.replay || !shown) return;
  if (shown === 'local') send('local_play', { move });
  else send('play', { round: shown.id, move });
}

function renderStage() {
  const shown = shownRound();
  const chartKey = shown === 'local' ? 'local' : shown ? shown.id : '';
  if (app.chartKey !== chartKey) {
    app.chartKey = chartKey; $('chart').hidden = true; $('chart').replaceChildren();
    $('analysis-text').hidden = true; $('analysis-text').replaceChildren();
  }
  const status = $('status');
  const controls = $('controls');
  const result = $('result');
  controls.replaceChildren();
  result.replaceChildren();
  result.hidden = true;
  $('takeback-note').hidden = true;
  $('moves-box').hidden = !shown;
  status.dataset.result = ''; status.dataset.myTurn = '';
  if (!shown) {
    status.textContent = t('ui.welcome');
    status.dataset.over = ''; status.dataset.roundNo = '';
    $('moves').textContent = ''; $('score').textContent = '';
    $('move-form').hidden = true;
    if (app.board && app.board.handle) { app.board.handle.destroy(); }
    app.board = null;
    $('board').replaceChildren();
    $('replay-bar').hidden = true;
    return;
  }
  let state; let key; let script; let opts; let statusText; let over; let roundNo; let scoreText; let label;
  if (shown === 'local') {
    const l = app.snap.local;
    key = 'local'; script = l.board.script; state = l.board.state;
    label = (i) => localSeatLabel(l, i);
    over = state.over;
    roundNo = l.round_no;
    const mySeats = l.levels.map((lv, i) => (lv ? -1 : i)).filter((i) => i >= 0);
    opts = { mySeats, interactive: l.human_turn && !over, lang: app.lang };
    if (over) statusText = t('ui.status.over', { result: resultText(state, state.winners, label) });
    else if (!l.human_turn) statusText = t('ui.status.thinking', { seat: label(state.to_move) });
    else statusText = t('ui.status.other', { seat: label(state.to_move) });
    scoreText = l.score.map((s, i) => `${label(i)} ${s}`).join(' · ');
    controls.append(...[
      h('button', { type: 'button', id: 'btn-undo', on: { click: () => send('local_undo') } }, t('ui.undo')),
      gameInfo(l.game).levels.length ? h('button', { type: 'button', id: 'btn-hint', on: { click: () => send('local_hint') } }, t('ui.hint')) : null,
      h('button', { type: 'button', id: 'btn-resign', on: { click: () => send('local_resign') } }, t('ui.resign')),
      h('button', { type: 'button', id: 'btn-again', on: { click: () => { app.replay = null; send('local_again'); } } }, t('ui.again')),
      h('button', { type: 'button', id: 'btn-replay', on: { click: () => send('local_replay') } }, t('ui.replay')),
      over && l.board.analysis ? h('button', { type: 'button', id: 'btn-analysis', on: { click: () => send('local_analysis') } }, t('ui.analysis')) : null,
      h('button', { type: 'button', id: 'btn-rules', on: { click: () => send('rules', { game: l.game }) } }, t('ui.rules')),
      h('button', { type: 'button', id: 'btn-close', on: { click: () => { app.pinned = null; app.replay = null; send('local_close'); } } }, t('ui.local.close')),
    ].filter(Boolean));
  } else {
    const r = shown;
    key = r.id;
    label = (i) => seatLabel(r, i);
    over = r.over;
    roundNo = r.round_no;
    scoreText = r.wins.map(([nick, w]) => `${nick} ${w}`).join(' · ');
    if (!r.board) {
      statusText = t('ui.status.forming') + (r.code ? ' · ' + t('ui.status.code', { code: `${r.code.slice(0, 3)} ${r.code.slice(3)}` }) : '');
      if (r.admin && !r.over) controls.append(h('button', { type: 'button', id: 'btn-cancel', on: { click: () => send('cancel', { round: r.id }) } }, t('ui.cancel')));
      if (r.admin && r.code && !r.over) controls.append(h('button', { type: 'button', id: 'btn-start-now', on: { click: () => { app.pinned = null; send('start_now', { round: r.id }); } } }, t('ui.start_now')));
      controls.append(h('button', { type: 'button', id: 'btn-leave', on: { click: () => send('leave', { round: r.id }) } }, t('ui.leave')));
      status.textContent = statusText;
      status.dataset.over = r.over ? 'yes' : ''; status.dataset.roundNo = '';
      $('board').replaceChildren(); if (app.board && app.board.handle) app.board.handle.destroy(); app.board = null;
      $('move-form').hidden = true; $('replay-bar').hidden = true;
      $('moves').textContent = ''; $('score').textContent = '';
      return;
    }
    script = r.board.script; state = r.board.state;
    opts = { mySeats: r.my_seat === null ? [] : [r.my_seat], interactive: r.my_turn && !over, lang: app.lang };
    const prefix = roundNo ? t('ui.round_no', { n: roundNo }) + ' · ' : '';
    if (over) statusText = prefix + t('ui.status.over', { result: resultText(state, r.winners, label) });
    else if (r.my_turn) statusText = prefix + t('ui.status.you', { seat: seatColor(state.seat_names[r.my_seat]) });
    else statusText = prefix + t('ui.status.other', { seat: label(state.to_move) });
    if (!over && r.time_left !== null) statusText += ' · ' + t('ui.time_left', { time: formatTime(r.time_left, r.slow) });
    if (r.takeback !== null && r.takeback !== undefined && !over) {
      const note = $('takeback-note');
      note.hidden = false;
      note.replaceChildren(t('ui.takeback_asked', { seat: label(r.takeback) }));
      if (r.my_turn && r.takeback !== r.my_seat) {
        note.append(' ', h('button', { type: 'button', id: 'btn-allow', on: { click: () => send('accept_takeback', { round: r.id }) } }, t('ui.accept_takeback')));
        note.append(' ', h('button', { type: 'button', id: 'btn-decline-takeback', on: { click: () => send('decline_takeback', { round: r.id }) } }, t('ui.decline_takeback')));
      }
    }
    if (!over) {
      if (r.can_undo) controls.append(h('button', { type: 'button', id: 'btn-takeback', on: { click: () => send('takeback', { round: r.id }) } }, t('ui.takeback')));
      if (r.held) controls.append(h('button', { type: 'button', id: 'btn-resign', on: { click: () => send('resign', { round: r.id }) } }, t('ui.resign')));
    }
    controls.append(h('button', { type: 'button', id: 'btn-leave', on: { click: () => { send('leave', { round: r.id }); } } }, t('ui.leave')));
    controls.append(h('button', { type: 'button', id: 'btn-rules', on: { click: () => send('rules', { game: r.game }) } }, t('ui.rules')));
    if (over) {
      if (r.admin || r.my_seat !== null) controls.append(h('button', { type: 'button', id: 'btn-again', on: { click: () => { app.pinned = null; app.replay = null; send('again', { round: r.id }); } } }, t('ui.again')));
      controls.append(h('button', { type: 'button', id: 'btn-replay', on: { click: () => send('replay', { round: r.id }) } }, t('ui.replay')));
      if (r.board.analysis) controls.append(h('button', { type: 'button', id: 'btn-analysis', on: { click: () => send('analysis', { round: r.id }) } }, t('ui.analysis')));
    }
  }
  // the replay of a finished round, or the live position
  let shownState = state;
  const replaying = app.replay && app.replay.key === key;
  if (app.replay && !replaying) app.replay = null;
  $('replay-bar').hidden = !replaying;
  if (replaying) {
    shownState = app.replay.states[app.replay.ply];
    opts = { ...opts, interactive: false };
    $('rp-pos').textContent = t('ui.replay.pos', { ply: app.replay.ply, total: app.replay.states.length - 1 });
  }
  status.textContent = statusText;
  status.dataset.over = over ? 'yes' : '';
  status.dataset.roundNo = String(roundNo || '');
  status.dataset.myTurn = opts.interactive ? 'yes' : '';
  $('moves').textContent = state.history.join(' ');
  $('moves').dataset.count = String(state.history.length);
  $('score').textContent = scoreText ? `${t('ui.score')}: ${scoreText}` : '';
  const resultLine = over ? resultText(state, shown === 'local' ? state.winners : shown.winners, label) : '';
  status.dataset.result = resultLine;
  if (over) {
    result.append(h('strong', {}, resultLine));
    if (scoreText) result.append(h('div', {}, `${t('ui.score')}: ${scoreText}`));
  }
  $('board').dataset.winning = String((shownState.winning || []).length);
  $('board').dataset.legal = opts.interactive ? (shownState.legal || []).join(' ') : '';
  $('board').dataset.game = shownState.game;
  $('move-form').hidden = !opts.interactive;
  addStyle(shown === 'local' ? app.snap.local.board.style : shown.board.style);
  mountBoard(script, key).then((entry) => {
    if (entry.handle && app.board === entry) {
      try { entry.handle.update(shownState, opts); } catch (err) { console.error(err); }
    }
    // the games' own boards draw their result card; the plain board gets ours
    result.hidden = !(over && result.childElementCount && entry.script === 'boards/fallback.js');
  });
}

// A board's style sheet (the view's ``style``), added once.
function addStyle(path) {
  if (!path || document.querySelector(`link[data-board-style="${path}"]`)) return;
  document.head.append(h('link', { rel: 'stylesheet', href: `/static/${path}`, dataset: { boardStyle: path } }));
}

// The solver's evaluation of a finished Connect Four round (boards/chart.js); a click on a
// move steps the replay there.
function showAnalysis(data) {
  const el = $('chart');
  el.hidden = false;
  el.replaceChildren();
  const shown = shownRound();
  const seats = shown && shown !== 'local' && shown.board ? shown.board.state.seats : undefined;
  import('/static/boards/chart.js').then((mod) => {
    mod.drawChart(el, data, {
      lang: app.lang, seats,
      onPick: (ply) => {
        app.pendingPly = ply;
        if (shown === 'local') send('local_replay');
        else if (shown) send('replay', { round: shown.id });
      },
    });
  }).catch(() => {
    el.append(h('p', {}, data.map((row) => `${row.ply}: ${row.score ?? '?'}`).join(' · ')));
  });
  showAnalysisText(data, shown);
}

// The same review as lines, as the shell's /analyze says it: each move, what it kept for
// the mover, a mistake (with what the best move kept) or the decisive move; then how many
// mistakes.
function showAnalysisText(data, shown) {
  app.review = { data, shown };
  const list = $('analysis-text');
  list.hidden = false;
  const label = (i) => (shown === 'local' ? localSeatLabel(app.snap.local, i) : shown ? seatLabel(shown, i) : String(i + 1));
  let mistakes = 0; let estimated = 0; let anyEstimate = false;
  const items = data.map((row) => {
    const notes = [];
    anyEstimate = anyEstimate || row.estimated;
    if (row.mistake) {
      mistakes += 1;
      if (row.estimated) estimated += 1;
      notes.push(t(row.estimated ? 'ui.analysis.probable_mistake' : 'ui.analysis.mistake', { was: t('ui.analysis.' + row.was) }));
    }
    if (row.decisive) notes.push(t('ui.analysis.decisive'));
    const verdict = [t('ui.analysis.' + row.verdict), ...notes].join(' · ');
    return h('li', { class: row.mistake ? 'mistake' : '', dataset: { ply: String(row.ply) } },
      t('ui.analysis.line', { ply: row.ply, seat: label(row.seat), move: row.move, verdict }));
  });
  let summary;
  if (estimated) summary = t(mistakes === 1 ? 'ui.analysis.summary_estimates_one' : 'ui.analysis.summary_estimates', { mistakes, estimated });
  else summary = mistakes === 1 ? t('ui.analysis.summary_one') : t('ui.analysis.summary', { mistakes });
  items.push(h('li', { class: 'summary' }, summary));
  if (anyEstimate) items.push(h('li', { class: 'muted' }, t('ui.analysis.estimate_note')));
  list.replaceChildren(...items);
}

// A box under the board for texts asked for: the rules of a game, the statistics.
function showInfo(title, children, kind) {
  const box = $('info');
  box.hidden = false;
  box.dataset.kind = kind;
  $('info-title').textContent = title;
  $('info-lines').replaceChildren(...children);
  box.scrollIntoView({ block: 'nearest' });
}

// After a language switch: the texts asked for are said again in the new language.
function relabelInfo() {
  if (!$('analysis-text').hidden && app.review) showAnalysisText(app.review.data, app.review.shown);
  if ($('info').hidden || !app.info) return;
  if (app.info.kind === 'rules') send('rules', { game: app.info.game });
  else if (app.info.kind === 'stats') showStats(app.info.msg);
}

function showStats(msg) {
  app.info = { kind: 'stats', msg };
  const parts = [h('h3', {}, t('ui.stats.local'))];
  const local = msg.local.map((row) => h('li', {}, t('ui.stats.local_row', { ...row, game: gameTitle(row.game), level: row.level.split('+').map(levelName).join(', ') })));
  parts.push(h('ul', { class: 'stats-local' }, local.length ? local : h('li', { class: 'muted' }, t('ui.stats.none'))));
  parts.push(h('h3', {}, t('ui.stats.online')));
  const online = msg.online.map((row) => h('li', {}, t('ui.stats.online_row', { ...row, with: row.with.length ? row.with.join(', ') : t('ui.stats.computers') })));
  parts.push(h('ul', { class: 'stats-online' }, online.length ? online : h('li', { class: 'muted' }, t('ui.stats.none'))));
  showInfo(t('ui.stats'), parts, 'stats');
}

// -- your turn, away, notifications -----------------------------------------------------------

function yourTurn(msg) {
  if (!app.snap || !app.snap.settings.notifications) return;
  if (!document.hidden) return;
  const title = t('ui.your_turn_title');
  const body = t('ui.your_turn_body', { game: gameTitle(msg.game) });
  if ('Notification' in window && Notification.permission === 'granted') {
    try { new Notification(title, { body, tag: 'p2p-' + msg.round }); } catch { /* falls back to the title */ }
  }
  document.title = '● ' + title;
}

document.addEventListener('visibilitychange', () => {
  if (document.hidden) { app.hiddenSince = Date.now(); return; }
  document.title = app.baseTitle;
  if (app.hiddenSince === null || !app.snap) return;
  app.hiddenSince = null;
  for (const r of app.snap.rounds) {
    if (!r.board) continue;
    const seen = app.seenMoves.get(r.id);
    const now = r.board.state.history.length;
    if (seen !== undefined && now > seen) {
      const line = { t: 'line', kind: 'round', key: 'msg.moved_away', params: { nicks: r.seats.filter((s) => !s.me).map((s) => s.nick || '?').join(', '), game: r.game } };
      appendLine(line);
      banner(t('msg.moved_away', { nicks: line.params.nicks, game: gameTitle(r.game) }));
      setTimeout(() => banner(null), 6000);
    }
  }
  render();
});

// -- the log: chat and notices ---------------------------------------------------------------

function lineText(line) {
  if (line.kind === 'chat') return line.text;
  if (line.key) {
    const params = { ...line.params };
    if (params.game) params.game = gameTitle(params.game);
    return t(line.key, params);
  }
  return line.text || '';
}

function appendLine(line) {
  const list = $('log');
  const li = h('li', { class: 'line ' + line.kind, dataset: { kind: line.kind } });
  if (line.kind === 'chat') {
    li.append(h('span', { class: 'who' }, `${line.nick} [${(line.fp || '').slice(0, 9)}]`),
      line.round ? h('span', { class: 'tag' }, ` (${t('ui.chat.round')})`) : '', ': ', h('span', { class: 'text' }, line.text));
  } else {
    li.append(h('span', { class: 'text' }, lineText(line)));
  }
  list.append(li);
  while (list.children.length > 400) list.firstChild.remove();
  list.scrollTop = list.scrollHeight;
}

function renderLog() {
  $('log').replaceChildren();
  for (const line of app.lines) appendLine(line);
}

// -- the new-round form: invite, private, here ----------------------------------------------

function buildNewForm() {
  const form = $('new-form');
  const game = app.formGame || (app.games[0] && app.games[0].name);
  app.formGame = game;
  const info = gameInfo(game);
  const fields = [];
  fields.push(h('label', {}, t('ui.game'), h('select', { name: 'game', id: 'new-game', on: { change: (ev) => { app.formGame = ev.target.value; buildNewForm(); } } },
    app.games.map((g) => h('option', { value: g.name, selected: g.name === game }, g.title[app.lang === 'de' ? 0 : 1])))));
  for (const [key, value] of Object.entries(info.options)) {
    if (key === 'first') continue;
    const text = app.texts['opt.' + key] ? t('opt.' + key) : key;
    if (typeof value === 'boolean') {
      fields.push(h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'opt-' + key, id: 'opt-' + key, checked: value }), ' ', text));
    } else {
      const onInput = key === 'players' ? { input: () => buildSeats() } : undefined;
      fields.push(h('label', {}, text, h('input', { type: 'number', name: 'opt-' + key, id: 'opt-' + key, value: String(value), min: 0, max: 99, on: onInput })));
    }
  }
  fields.push(h('button', { type: 'button', id: 'btn-rules-form', class: 'small', on: { click: () => send('rules', { game: app.formGame }) } }, t('ui.rules')));
  fields.push(h('label', {}, t('ui.computers'), h('input', { type: 'number', name: 'computers', id: 'new-computers', value: '0', min: 0, max: 3 })));
  fields.push(h('label', {}, t('ui.level'), h('select', { name: 'level', id: 'new-level' },
    info.levels.map((lv) => h('option', { value: lv }, levelName(lv))))));
  fields.push(h('label', {}, t('ui.starter'), h('select', { name: 'start', id: 'new-start' })));
  fields.push(h('label', {}, t('ui.turn_limit'), h('input', { name: 'turn', id: 'new-turn', maxlength: 10 })));
  fields.push(h('label', {}, t('ui.open_seats'), h('input', { type: 'number', name: 'open', id: 'new-open', value: '1', min: 1, max: 3 })));
  fields.push(h('div', { class: 'row' },
    h('button', { type: 'button', id: 'btn-invite', on: { click: () => newRound('invite') } }, t('ui.invite')),
    h('button', { type: 'button', id: 'btn-private', on: { click: () => newRound('private') } }, t('ui.private'))));
  const seats = h('fieldset', { id: 'local-seats' });
  fields.push(seats);
  form.replaceChildren(...fields);
  buildSeats();
  buildStarter();
}

// The seats of a game here on this device: a person or a computer level each (as many as
// the players field says, for a game that has one).
function buildSeats() {
  const info = gameInfo(app.formGame);
  const field = $('opt-players');
  const wanted = field ? Number.parseInt(field.value, 10) : NaN;
  const count = Number.isInteger(wanted) && wanted > 0 && wanted <= 8 ? wanted : info.players;
  const seats = $('local-seats');
  const kept = [...seats.querySelectorAll('select')].map((el) => el.value);
  seats.replaceChildren(h('legend', {}, t('ui.local')));
  for (let i = 0; i < count; i++) {
    const select = h('select', { name: 'seat' + i, id: 'local-seat' + i },
      h('option', { value: '' }, t('ui.local.person')),
      info.levels.map((lv) => h('option', { value: lv }, t('ui.computer', { level: levelName(lv) }))));
    if (kept[i] !== undefined) select.value = kept[i];
    seats.append(h('label', {}, t('ui.local.seat', { n: i + 1 }), select));
  }
  seats.append(h('button', { type: 'button', id: 'btn-local', on: { click: () => localStart() } }, t('ui.local.start')));
}

function buildStarter() {
  const select = $('new-start');
  if (!select || !app.snap) return;
  const options = [h('option', { value: 'draw' }, t('ui.starter.draw')), h('option', { value: 'me' }, t('ui.starter.me'))];
  for (const pk of app.chosen) {
    const p = app.snap.lobby.find((x) => x.pk === pk);
    if (p) options.push(h('option', { value: pk }, p.nick));
  }
  const current = select.value;
  const same = select.options.length === options.length
    && options.every((o, i) => select.options[i].value === o.value && select.options[i].textContent === o.textContent);
  if (same) return;
  select.replaceChildren(...options);
  if ([...select.options].some((o) => o.value === current)) select.value = current;
}

function formOptions() {
  const info = gameInfo(app.formGame);
  const options = {};
  for (const [key, value] of Object.entries(info.options)) {
    if (key === 'first') continue;
    const el = $('opt-' + key);
    if (!el) continue;
    const v = typeof value === 'boolean' ? el.checked : Number.parseInt(el.value, 10);
    if (v !== value && !(typeof v === 'number' && Number.isNaN(v))) options[key] = v;
  }
  return options;
}

function newRound(kind) {
  const n = Number.parseInt($('new-computers').value, 10) || 0;
  const level = $('new-level').value;
  const fields = {
    game: app.formGame, options: formOptions(), computers: Array(n).fill(level),
    start: $('new-start').value || 'draw', turn: $('new-turn').value.trim(), who: [...app.chosen],
  };
  if (kind === 'private') fields.open = Number.parseInt($('new-open').value, 10) || 1;
  app.pinned = null; app.replay = null;
  send(kind, fields);
}

function localStart() {
  const options = formOptions();
  const seats = [...$('local-seats').querySelectorAll('select')].map((el) => el.value || null);
  app.pinned = 'local'; app.replay = null;
  send('local_start', { game: app.formGame, options, seats });
}

// -- wiring ----------------------------------------------------------------------------------

function wire() {
  $('chat-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const text = $('chat-input').value;
    if (!text.trim()) return;
    const round = $('chat-target').value;
    send('say', round ? { text, round } : { text });
    $('chat-input').value = '';
  });
  $('move-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const move = $('move-input').value.trim();
    if (move) playMove(move);
    $('move-input').value = '';
  });
  $('join-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    app.pinned = null;
    send('join', { code: $('join-code').value.trim() });
    $('join-code').value = '';
  });
  $('settings-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const form = ev.target;
    const notifications = form.elements.notifications.checked;
    if (notifications && 'Notification' in window && Notification.permission === 'default') {
      Notification.requestPermission().catch(() => {});
    }
    send('settings', { nick: form.elements.nick.value, namespace: form.elements.namespace.value,
      broker: form.elements.broker.value, notifications });
  });
  $('lang').addEventListener('click', () => send('settings', { lang: app.lang === 'de' ? 'en' : 'de' }));
  $('btn-takeover').addEventListener('click', () => send('takeover', {}));
  $('btn-stats').addEventListener('click', () => send('stats', {}));
  $('info-close').addEventListener('click', () => { $('info').hidden = true; });
  const step = (fn) => () => {
    if (!app.replay) return;
    app.replay.ply = Math.max(0, Math.min(app.replay.states.length - 1, fn(app.replay.ply)));
    render();
  };
  $('rp-first').addEventListener('click', step(() => 0));
  $('rp-prev').addEventListener('click', step((p) => p - 1));
  $('rp-next').addEventListener('click', step((p) => p + 1));
  $('rp-last').addEventListener('click', step(() => Infinity));
  $('rp-close').addEventListener('click', () => { app.replay = null; render(); });
  document.addEventListener('keydown', (ev) => {
    if (!app.replay || ['INPUT', 'SELECT', 'TEXTAREA'].includes(document.activeElement?.tagName)) return;
    if (ev.key === 'ArrowLeft') step((p) => p - 1)();
    else if (ev.key === 'ArrowRight') step((p) => p + 1)();
    else if (ev.key === 'Home') step(() => 0)();
    else if (ev.key === 'End') step(() => Infinity)();
  });
  setInterval(() => {  // time left ticks down between snapshots
    if (!app.snap) return;
    let changed = false;
    for (const r of app.snap.rounds) if (r.time_left > 0 && !r.over) { r.time_left -= 1; changed = true; }
    if (changed) { renderRounds(); }
  }, 1000);
}

// Browsers ask for the notification permission only after a user gesture: the first
// click on the page asks, when notifications are on in the settings.
document.addEventListener('click', () => {
  if (app.snap && app.snap.settings.notifications && 'Notification' in window
      && Notification.permission === 'default') Notification.requestPermission().catch(() => {});
}, { once: true });

wire();
connect();
