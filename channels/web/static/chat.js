// nanobot web chat: plain JS, no build step. Input goes by POST, the turn
// streams back over Server-Sent Events, history comes from the journal.
'use strict';

const $ = (id) => document.getElementById(id);
const state = { chat: '', session: '', web: true, inspect: '', busy: false, es: null, turn: null };

// api GETs path, or POSTs body: JSON, or a FormData as multipart (a voice note).
async function api(path, body) {
  let opts = {};
  if (body instanceof FormData) opts = { method: 'POST', body };
  else if (body) opts = { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) };
  const r = await fetch(path, opts);
  const data = await r.json();
  if (!r.ok) throw new Error(data.error || r.statusText);
  return data;
}

// add appends a line to the conversation (scrolled to it), or to box (a page being drawn).
function add(cls, html, box) {
  const el = document.createElement('div');
  el.className = cls;
  el.innerHTML = html;
  (box || $('log')).appendChild(el);
  if (!box) $('log').scrollTop = $('log').scrollHeight;
  return el;
}

// inspectLink puts under an answer its turn's link to the Temporal Web UI and what the turn did.
function inspectLink(bubble, turn) {
  if (!turn) return;
  if (state.inspect) {
    const a = el('a', 'inspect', 'inspect');
    a.target = '_blank';
    a.rel = 'noopener';
    a.href = state.inspect + encodeURIComponent(turn) + '/history';
    bubble.appendChild(a);
  }
  turnDetails(bubble, turn);
}

function setBusy(busy, status) {
  state.busy = busy;
  $('stop').disabled = !busy;
  $('status').textContent = status || (busy ? 'working…' : '');
}

// live is the running turn's view: its progress lines and its streaming reply.
function live(turn) {
  if (!state.turn || (turn && state.turn.id && state.turn.id !== turn)) {
    state.turn = { id: turn, hints: add('hints', ''), bubble: null, iteration: -1, text: '' };
  }
  if (turn && !state.turn.id) state.turn.id = turn;
  return state.turn;
}

function hint(text, turn) {
  const t = live(turn);
  const line = document.createElement('div');
  line.textContent = '↳ ' + text;
  t.hints.appendChild(line);
}

// reasoning draws the model's reasoning, dimmed, among the progress lines.
function reasoning(ev) {
  const t = live(ev.turn);
  if (!t.thought || t.thoughtIteration !== ev.iteration) {
    t.thought = document.createElement('div');
    t.thought.className = 'reasoning';
    t.thoughtIteration = ev.iteration;
    t.hints.appendChild(t.thought);
  }
  t.thought.textContent += ev.text;
}

// fold collapses a finished turn's progress lines into one summary line.
function fold(t) {
  if (!t.hints.children.length) { t.hints.remove(); return; }
  const n = t.hints.querySelectorAll(':scope > div:not(.reasoning)').length;
  const d = document.createElement('details');
  const s = document.createElement('summary');
  s.textContent = n ? n + ' tool call' + (n > 1 ? 's' : '') : 'reasoning';
  d.appendChild(s);
  while (t.hints.firstChild) d.appendChild(t.hints.firstChild);
  t.hints.appendChild(d);
}

function delta(ev) {
  const t = live(ev.turn);
  if (ev.iteration !== t.iteration) { t.iteration = ev.iteration; t.text = ''; }
  t.text += ev.text;
  if (!t.bubble) t.bubble = add('msg assistant streaming', '');
  t.bubble.textContent = t.text; // as written until the reply comes rendered by the server
  $('log').scrollTop = $('log').scrollHeight;
}

// approval draws a request the turn waits on, with its buttons; a click
// sends the button's command as the user's message (shown once per request).
function approval(req, turn) {
  if (document.querySelector('.approval[data-approval="' + CSS.escape(req.id) + '"]')) return;
  const t = live(turn);
  if (t.bubble) { t.bubble.classList.remove('streaming'); t.bubble = null; } // what was said before the call stays
  const el = add('msg assistant approval', req.html);
  el.dataset.approval = req.id;
  const row = document.createElement('div');
  row.className = 'buttons';
  for (const b of req.buttons) {
    const btn = document.createElement('button');
    btn.type = 'button';
    btn.className = b.verdict;
    btn.textContent = b.label;
    btn.onclick = () => { closeApproval(el, btn); post(b.command); };
    row.appendChild(btn);
  }
  el.appendChild(row);
  setBusy(true, 'waiting for approval: ' + req.call);
}

// closeApproval disables a request's buttons, marking the one pressed.
function closeApproval(el, chosen) {
  for (const b of el.querySelectorAll('.buttons button')) {
    b.disabled = true;
    if (b === chosen) b.classList.add('chosen');
  }
}

// inlineReply: a command answered while the turn runs (/approve, /status): the turn goes on.
function inlineReply(ev) {
  const ids = ev.message_ids || [];
  if (ev.stop_reason !== 'command' || state.turn === null || !ids.length) return false;
  if (state.sending > 0) return true; // its message's id may not be known yet
  return ids.every((id) => { const m = document.querySelector('[data-id="' + CSS.escape(id) + '"]'); return m && m.dataset.during; });
}

function untag(ids) {
  for (const id of ids || []) {
    const m = document.querySelector('[data-id="' + CSS.escape(id) + '"]');
    if (!m) continue;
    for (const q of m.querySelectorAll('.tag:not(.injected), .withdraw')) q.remove(); // answered; an "injected" label stays to show where it went
  }
}

function reply(ev) {
  if (ev.kind === 'approval' && ev.approval) { approval(ev.approval, ev.turn); return; }
  if (inlineReply(ev)) { add('msg assistant', ev.html); untag(ev.message_ids); return; }
  const t = state.turn;
  let el = t && t.bubble;
  if (el) el.classList.remove('streaming'); else el = add('msg assistant', '');
  el.innerHTML = ev.html; // the server's rendering (goldmark): no raw HTML gets through
  inspectLink(el, ev.turn);
  untag(ev.message_ids);
  if (ev.kind === 'message') { if (t) t.bubble = null; return; } // the turn goes on
  for (const a of document.querySelectorAll('.approval')) closeApproval(a, null); // the turn is over
  if (t) fold(t);
  state.turn = null;
  setBusy(document.querySelector('.tag:not(.injected)') !== null); // a queued message starts the next turn
  loadSessions();
  loadMeter();
  if (!state.busy) attachForks().catch(() => {}); // a failed look-up only leaves the buttons for the next load
}

function connect() {
  if (state.es) state.es.close();
  const es = new EventSource('api/events?chat=' + encodeURIComponent(state.chat));
  state.es = es;
  const on = (name, fn) => es.addEventListener(name, (e) => fn(JSON.parse(e.data)));
  on('live', showLive);
  on('turn', (now) => {
    showLive(now);
    if (!now.running) { setBusy(false); return; }
    setBusy(true, (now.state || 'running') + (now.iteration ? ' · iteration ' + now.iteration : ''));
    if (!state.turn) { live(''); (now.hints || []).forEach((h) => hint(h, '')); }
    if (now.waiting) approval(now.waiting, '');
  });
  on('hint', (ev) => { setBusy(true); hint(ev.text, ev.turn); });
  on('delta', (ev) => { setBusy(true); delta(ev); });
  on('reasoning', (ev) => { setBusy(true); reasoning(ev); });
  on('reset', (ev) => { const t = live(ev.turn); t.text = ''; if (t.bubble) t.bubble.innerHTML = ''; });
  on('injected', (ev) => {
    for (const id of ev.ids) {
      const q = document.querySelector('[data-id="' + CSS.escape(id) + '"] .tag');
      if (q) { q.textContent = 'injected into the running turn'; q.className = 'tag injected'; }
      const w = document.querySelector('[data-id="' + CSS.escape(id) + '"] .withdraw');
      if (w) w.remove(); // taken into the turn: no longer withdrawable
    }
  });
  on('reply', reply);
  // After a gateway restart EventSource reconnects by itself; the history is reloaded on open.
  es.onopen = () => { if (state.opened) load(); state.opened = true; };
}

// forkButton lets a message of the journal start a new chat whose history ends with it.
function forkButton(el, index) {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'fork';
  b.title = 'Fork: a new chat with this conversation up to here';
  b.textContent = 'fork';
  b.onclick = async () => {
    try {
      const r = await api('api/fork', { session: state.session, index });
      $('search').value = ''; // the fork shows in the sidebar, not hidden by a search
      await open(r.chat);
    } catch (err) { add('msg assistant error', '').textContent = '⚠ ' + err.message; }
  };
  el.appendChild(b);
}

async function open(chat) {
  if (state.chat && state.chat !== chat) leaveChat(state.chat);
  state.chat = chat;
  state.session = 'web:' + chat;
  state.web = true;
  state.opened = false;
  if (!isTemporary(chat)) localStorage.setItem('nanobot-chat', chat);
  history.replaceState(null, '', isTemporary(chat) ? location.pathname : '#' + chat); // a reload does not bring it back
  markTemporary(chat);
  $('title').textContent = 'web:' + chat;
  $('input').hidden = false;
  await load();
  connect();
  loadSessions();
}

// openOther shows another channel's session read-only: its turns answer on that channel.
async function openOther(key) {
  if (state.es) { state.es.close(); state.es = null; }
  leaveChat(state.chat);
  state.session = key;
  state.web = false;
  state.chat = '';
  $('title').textContent = key + ' (read-only here: fork it to go on in the web chat)';
  $('input').hidden = true;
  await load();
  loadSessions();
}

// loadSessions draws the sidebar: every channel's chats, grouped, newest first; or what a search found.
async function loadSessions() {
  const q = $('search').value.trim();
  const archived = $('show-archived').checked;
  $('archive').textContent = archived ? 'Unarchive' : 'Archive';
  const { sessions } = await api('api/sessions' + (q ? '?q=' + encodeURIComponent(q) : archived ? '?archived=1' : ''));
  const box = $('sessions');
  box.innerHTML = '';
  const groups = new Map();
  for (const s of sessions) {
    if (!groups.has(s.channel)) groups.set(s.channel, []);
    groups.get(s.channel).push(s);
  }
  const order = [...groups.keys()].sort((a, b) => (a === 'web' ? -1 : b === 'web' ? 1 : a.localeCompare(b)));
  for (const ch of order) {
    const h = document.createElement('h3');
    h.textContent = ch;
    const ul = document.createElement('ul');
    ul.dataset.channel = ch;
    for (const s of groups.get(ch)) {
      const li = document.createElement('li');
      li.textContent = s.title || '(empty)';
      li.title = s.key + ' · ' + s.updated;
      li.dataset.key = s.key;
      if (s.found) {
        const f = document.createElement('div');
        f.className = 'found';
        f.textContent = s.found;
        li.appendChild(f);
      }
      if (s.key === state.session) li.className = 'current';
      li.onclick = () => (s.channel === 'web' ? open(s.chat) : openOther(s.key));
      ul.appendChild(li);
    }
    box.append(h, ul);
  }
  if (!sessions.length) box.textContent = q ? 'nothing found' : '';
}

function newChat() {
  const b = new Uint8Array(6);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

// post shows a message of the user's and sends it, with a voice note when
// audio is a Blob. While a turn runs it waits to be injected ("queued"),
// unless the turn answers it at once.
async function post(text, audio, fileName, files) {
  files = files || [];
  const el = add('msg user', '');
  el.textContent = audio ? ('🎙 ' + fileName + (text.trim() ? '\n' + text : '')) : text;
  drawMedia(el, files.map((file) => ({ file })));
  const during = state.busy;
  if (during) { el.dataset.during = '1'; state.sending = (state.sending || 0) + 1; }
  const queued = state.busy && !/^\/(stop|approve|deny|status|help|history)\b/.test(text.trim());
  if (queued) {
    const tag = document.createElement('span');
    tag.className = 'tag';
    tag.textContent = 'queued';
    el.appendChild(tag);
  }
  try {
    let body = { chat: state.chat, text };
    if (audio || files.length) {
      body = new FormData();
      body.append('chat', state.chat);
      body.append('text', text);
      if (audio) body.append('audio', audio, fileName);
      for (const f of files) body.append('file', f, f.name);
    }
    const r = await api('api/send', body);
    el.dataset.id = r.id;
    if (!queued) setBusy(true);
  } catch (err) {
    add('msg assistant error', '').textContent = '⚠ ' + err.message;
  } finally {
    if (during) state.sending--;
  }
}

function send(e) {
  e.preventDefault();
  const text = $('text').value;
  if (!text.trim() && !attach.files.length) return;
  $('text').value = '';
  post(text, null, '', takeFiles());
}

// sendAudio posts a recorded or picked file with what is typed.
function sendAudio(blob, fileName) {
  const text = $('text').value;
  $('text').value = '';
  post(text, blob, fileName);
}

// The recorder takes Ogg/Opus where the browser can, else WebM: both are transcribed.
const recording = { rec: null };
async function toggleRecord() {
  if (recording.rec) { recording.rec.stop(); return; }
  if (!window.MediaRecorder || !navigator.mediaDevices) {
    add('msg assistant error', '').textContent = '⚠ this browser cannot record here (it needs localhost or https)';
    return;
  }
  let stream;
  try {
    stream = await navigator.mediaDevices.getUserMedia({ audio: true });
  } catch (err) {
    add('msg assistant error', '').textContent = '⚠ no microphone: ' + err.message;
    return;
  }
  const type = ['audio/ogg;codecs=opus', 'audio/webm;codecs=opus', 'audio/webm'].find((t) => MediaRecorder.isTypeSupported(t)) || '';
  const rec = new MediaRecorder(stream, type ? { mimeType: type } : {});
  const chunks = [];
  rec.ondataavailable = (e) => { if (e.data.size) chunks.push(e.data); };
  rec.onstop = () => {
    stream.getTracks().forEach((t) => t.stop());
    recording.rec = null;
    $('record').textContent = 'Record';
    const blob = new Blob(chunks, { type: rec.mimeType || type || 'audio/webm' });
    if (blob.size) sendAudio(blob, 'voice-note' + (blob.type.startsWith('audio/ogg') ? '.ogg' : '.webm'));
  };
  recording.rec = rec;
  rec.start();
  $('record').textContent = 'Stop recording';
}

$('record').addEventListener('click', toggleRecord);
$('attach').addEventListener('click', () => $('file').click());
$('file').addEventListener('change', () => {
  const f = $('file').files[0];
  $('file').value = '';
  if (f) sendAudio(f, f.name);
});
$('input').addEventListener('submit', send);
$('text').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey) send(e);
});
$('stop').addEventListener('click', () => api('api/stop', { chat: state.chat }).catch((err) => add('msg assistant error', '').textContent = '⚠ ' + err.message));
$('new').addEventListener('click', () => open(newChat()));
$('show-archived').addEventListener('change', loadSessions);
// changeSession renames or (un)archives the open chat, then redraws the sidebar.
async function changeSession(change) {
  try {
    await api('api/session', Object.assign({ session: state.session }, change));
  } catch (err) { add('msg assistant error', '').textContent = '⚠ ' + err.message; }
  loadSessions();
}
$('archive').addEventListener('click', () => changeSession({ archived: !$('show-archived').checked }));
$('rename').addEventListener('click', () => {
  const input = el('input', 'rename-to');
  input.placeholder = 'a name for this chat (empty: its first line)';
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') { changeSession({ title: input.value }); input.remove(); }
    if (e.key === 'Escape') input.remove();
  });
  $('title').after(input);
  input.focus();
});
let searching = 0;
$('search').addEventListener('input', () => { clearTimeout(searching); searching = setTimeout(loadSessions, 250); });
// Opened once every script of the page has run (history.js, attach.js come after this one).
// #session=<key> (a link from the schedules page) opens another channel's session.
document.addEventListener('DOMContentLoaded', () => {
  const hash = decodeURIComponent(location.hash.slice(1));
  if (hash.startsWith('session=')) openOther(hash.slice('session='.length));
  else open(hash || localStorage.getItem('nanobot-chat') || newChat());
});
