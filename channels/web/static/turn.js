// nanobot web chat: what a turn did (GET /api/turn), drawn collapsed under
// its answer; plain JS, loaded before chat.js, which uses el().
'use strict';

// el makes an element with a class and text (never HTML).
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

// took shows a duration given in nanoseconds (Go's time.Duration) or, with ms, milliseconds.
function took(n, ms) {
  const v = ms ? n : n / 1e6;
  return v < 1000 ? Math.round(v) + ' ms' : (v / 1000).toFixed(1) + ' s';
}

// turnDetails is what a turn did, collapsed under its answer; opened, it asks /api/turn once.
function turnDetails(bubble, turn) {
  const d = el('details', 'turn-details');
  d.appendChild(el('summary', '', 'what this turn did'));
  d.addEventListener('toggle', async () => {
    if (!d.open || d.dataset.loaded) return;
    d.dataset.loaded = '1';
    try {
      drawTurn(d, await api('api/turn?session=' + encodeURIComponent(state.session) + '&turn=' + encodeURIComponent(turn)));
    } catch (err) { d.appendChild(el('div', 'error', '⚠ ' + err.message)); }
  });
  bubble.appendChild(d);
}

function drawTurn(d, r) {
  const t = r.turn;
  const drawn = new Set();
  if (r.unavailable) d.appendChild(el('div', 'note', r.unavailable));
  if (t) {
    const states = el('div', 'states');
    for (const s of t.states || []) states.appendChild(el('span', 'state' + (s.error ? ' failed' : ''), s.state + ' ' + took(s.duration_ms, true)));
    if (t.current) states.appendChild(el('span', 'state current', t.current + ' …'));
    d.appendChild(states);
    for (const a of t.approvals || []) { // who answered each approval request, and when
      const why = a.reason ? ' — ' + a.reason : '';
      d.appendChild(el('div', 'approval-answer ' + a.verdict, 'approval ' + a.id + ': ' + a.verdict + ' by ' + (a.by || '?') + ' at ' + new Date(a.at).toLocaleTimeString() + why));
    }
    for (const it of t.iterations || []) {
      const m = el('div', 'model-call');
      let line = (it.model || 'model') + ' · ' + it.prompt_tokens + ' in / ' + it.completion_tokens + ' out';
      if (it.cached_tokens) line += ' (' + it.cached_tokens + ' cached)';
      line += ' · ' + (it.pending ? 'running' : took(it.duration));
      if (it.attempts > 1) line += ' · attempt ' + it.attempts;
      if (it.error) line += ' · ' + it.error;
      m.textContent = line;
      d.appendChild(m);
      for (const tool of it.tools || []) {
        d.appendChild(toolCard(tool, (r.calls || {})[tool.id] || {}));
        drawn.add(tool.id);
      }
    }
  }
  for (const [id, call] of Object.entries(r.calls || {})) { // journaled calls Temporal does not (or no longer) tell of
    if (!drawn.has(id)) d.appendChild(toolCard({ id, name: call.name, outcome: call.result ? 'ok' : 'unknown' }, call));
  }
  if (r.inspect) {
    const a = el('a', 'inspect', 'inspect in Temporal');
    a.href = r.inspect; a.target = '_blank'; a.rel = 'noopener';
    d.appendChild(a);
  }
}

// toolCard is one tool call: what it was asked, what it answered, how it went.
function toolCard(tool, call) {
  const c = el('div', 'tool-card ' + (tool.outcome || ''));
  c.dataset.tool = tool.name;
  let head = tool.name + ' · ' + (tool.outcome === 'unknown' ? 'outcome unknown (its worker died)' : tool.outcome || '');
  if (tool.duration !== undefined) head += ' · ' + took(tool.duration);
  if (tool.attempts > 1) head += ' · ' + tool.attempts + ' attempts';
  if (call.exit_code !== undefined) head += ' · exit ' + call.exit_code;
  c.appendChild(el('div', 'tool-head', head));
  c.appendChild(el('pre', 'tool-args', call.args || tool.args || ''));
  if (call.diff) c.appendChild(diffView(call.diff));
  c.appendChild(el('pre', 'tool-result', call.result || tool.preview || ''));
  if (call.subagent) c.appendChild(subagentCard(call));
  return c;
}

// subagentPoll is how often a running subagent's card asks how it is doing (ms).
const subagentPoll = 1000;

// subagentCard is the subagent a spawn call started, nested in the call's card:
// its label and task, its state, its result once done; it asks GET /api/subagent
// again every second while the subagent runs and the card is on the page.
function subagentCard(call) {
  const box = el('div', 'subagent-card');
  box.dataset.subagent = call.subagent;
  let args = {};
  try { args = JSON.parse(call.args || '{}'); } catch (_) { /* cut at maxCallText: the task shows on the call's card */ }
  const head = el('div', 'subagent-head', 'subagent ' + (args.label || call.subagent));
  const state = el('span', 'subagent-state', '…');
  head.append(' · ', state);
  const result = el('pre', 'subagent-result');
  result.hidden = true;
  box.append(head, el('div', 'subagent-task', args.task || ''), result);
  const follow = async () => {
    let s;
    try { s = await api('api/subagent?id=' + encodeURIComponent(call.subagent)); } catch (err) {
      state.textContent = '⚠ ' + err.message;
      return;
    }
    box.className = 'subagent-card ' + s.state;
    state.textContent = s.state + (s.state === 'running' && s.step ? ' · ' + s.step + (s.iteration ? ' · iteration ' + s.iteration : '') : '');
    if (s.label) head.firstChild.textContent = 'subagent ' + s.label;
    result.textContent = s.result || '';
    result.hidden = !s.result;
    if (s.inspect && !box.querySelector('a.inspect')) {
      const a = el('a', 'inspect', 'inspect in Temporal');
      a.href = s.inspect; a.target = '_blank'; a.rel = 'noopener';
      box.appendChild(a);
    }
    if (s.state === 'running' && box.isConnected) setTimeout(follow, subagentPoll);
  };
  follow();
  return box;
}

// diffView draws a unified diff line by line, added and removed lines marked.
function diffView(diff) {
  const pre = el('pre', 'diff');
  for (const line of diff.replace(/\n$/, '').split('\n')) {
    let cls = '';
    if (line.startsWith('+++') || line.startsWith('---') || line.startsWith('diff ')) cls = 'file';
    else if (line.startsWith('@@')) cls = 'hunk';
    else if (line.startsWith('+')) cls = 'add';
    else if (line.startsWith('-')) cls = 'del';
    pre.appendChild(el('span', cls, line + '\n'));
  }
  return pre;
}
