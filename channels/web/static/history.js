// nanobot web chat: the conversation from the journal (GET /api/history),
// a page at a time: the newest lines first, older ones as the reader
// scrolls up, so a long session never becomes one big DOM.
'use strict';

const pageSize = 100;

function historyQuery() {
  return state.web ? 'chat=' + encodeURIComponent(state.chat) : 'session=' + encodeURIComponent(state.session);
}

// drawPage draws journal lines into box; it returns the progress lines of a turn not answered yet.
function drawPage(messages, box) {
  let lastTurn = '';
  let hints = null;
  for (const m of messages) {
    if (m.role === 'user') { const u = add('msg user', '', box); u.textContent = m.text; drawMedia(u, m.media); forkButton(u, m.index); hints = null; continue; }
    if (m.role === 'hint') {
      if (!hints) hints = add('hints', '', box);
      hints.appendChild(el('div', '', '↳ ' + m.text));
      continue;
    }
    if (hints) { fold({ hints }); hints = null; }
    const a = add('msg assistant', m.html, box);
    forkButton(a, m.index);
    if (m.turn !== lastTurn) inspectLink(a, m.turn);
    lastTurn = m.turn;
  }
  return hints;
}

// turnPage notes where the drawn history starts and whether older lines are left.
function turnPage(h) {
  state.more = h.more;
  if (h.messages.length) state.oldest = h.messages[0].index;
}

async function load() {
  const h = await api('api/history?' + historyQuery() + '&limit=' + pageSize);
  state.inspect = h.inspect;
  $('log').innerHTML = '';
  state.turn = null;
  turnPage(h);
  const hints = drawPage(h.messages, $('log'));
  $('log').scrollTop = $('log').scrollHeight;
  if (hints) state.turn = { id: '', hints, bubble: null, iteration: -1, text: '' };
  setBusy(h.turn.running, h.turn.running ? (h.turn.state || 'running') : '');
  showLive(h.turn);
  loadMeter();
  if (h.turn.waiting) approval(h.turn.waiting, '');
}

// older draws the page before the oldest line shown, above it, keeping the view where it was.
async function older() {
  if (!state.more || state.loadingOlder) return;
  state.loadingOlder = true;
  const session = state.session;
  try {
    const h = await api('api/history?' + historyQuery() + '&limit=' + pageSize + '&before=' + state.oldest);
    if (session !== state.session) return;
    const box = document.createElement('div');
    const hints = drawPage(h.messages, box);
    if (hints) fold({ hints });
    const log = $('log');
    const fromBottom = log.scrollHeight - log.scrollTop;
    log.prepend(...box.childNodes);
    log.scrollTop = log.scrollHeight - fromBottom;
    turnPage(h);
  } catch (err) {
    add('msg assistant error', '').textContent = '⚠ ' + err.message;
    state.more = false;
  } finally {
    state.loadingOlder = false;
  }
  if ($('log').scrollTop < 300) older(); // still at the top: the next page too
}

$('log').addEventListener('scroll', () => { if ($('log').scrollTop < 300) older(); });

// attachForks gives the messages drawn live their fork buttons once the turn
// is journaled: the page's newest messages and the journal's, in order; if
// they do not line up (a message still queued), the next load draws them.
async function attachForks() {
  const session = state.session;
  const shown = [...$('log').querySelectorAll(':scope > .msg.user, :scope > .msg.assistant:not(.approval):not(.error)')].filter((m) => !m.querySelector(':scope > .fork'));
  if (!shown.length) return;
  const h = await api('api/history?' + historyQuery() + '&limit=' + Math.min(1000, 2 * shown.length + 20));
  if (session !== state.session) return;
  const said = h.messages.filter((m) => m.role !== 'hint').slice(-shown.length);
  const role = (m) => (m.classList.contains('user') ? 'user' : 'assistant');
  if (said.length !== shown.length || shown.some((m, i) => role(m) !== said[i].role)) return;
  shown.forEach((m, i) => forkButton(m, said[i].index));
}
