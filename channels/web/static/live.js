// nanobot web chat: where the running turn is, as the gateway pushes it
// ("turn" on connect, "live" on every change): its step, what it waits for,
// a call Temporal is retrying, and the messages queued behind it (each cancellable).
'use strict';

const liveView = { now: null, retryAt: 0, timer: 0 };

// liveReason says why the turn is not moving on, in words ("" when it is working).
function liveReason(now) {
  if (now.waiting) {
    const since = now.waiting.asked_at ? new Date(now.waiting.asked_at).toLocaleTimeString() : 'now';
    return 'waiting for approval since ' + since + ': ' + now.waiting.call;
  }
  const r = now.retry;
  if (!r) return '';
  let s = 'retrying ' + r.what + ', attempt ' + r.attempt + (r.max ? ' of ' + r.max : '');
  const left = Math.ceil((liveView.retryAt - Date.now()) / 1000);
  s += left > 0 ? ', next in ' + left + ' s' : ', running now';
  return s + (r.last_error ? ' (last error: ' + r.last_error + ')' : '');
}

// showLive takes where the turn is now and redraws the live panel and the queued tags.
function showLive(now) {
  liveView.now = now;
  liveView.retryAt = now.retry && now.retry.next_in_ms ? Date.now() + now.retry.next_in_ms : 0;
  clearInterval(liveView.timer);
  if (liveView.retryAt) liveView.timer = setInterval(drawLive, 500); // the countdown
  drawLive();
}

function drawLive() {
  const now = liveView.now;
  const box = $('live');
  box.textContent = '';
  box.hidden = !now || !now.running;
  if (box.hidden) return;
  box.appendChild(el('span', 'live-state', (now.state || 'starting') + (now.iteration ? ' · iteration ' + now.iteration : '')));
  const reason = liveReason(now);
  if (reason) box.appendChild(el('div', 'live-reason', reason));
  if (now.details) box.appendChild(el('div', 'live-details', now.details));
  const queued = now.queued || [];
  for (const q of queued) {
    const m = q.id && document.querySelector('#log [data-id="' + CSS.escape(q.id) + '"]');
    const tag = m && m.querySelector('.tag:not(.injected)');
    if (tag) {
      tag.textContent = 'queued behind a turn of this session';
      if (!m.querySelector('.withdraw')) tag.after(withdrawButton(q.id));
      continue;
    }
    const line = el('div', 'live-queued', 'queued behind a turn of this session: ' + q.preview); // sent before a reload, or elsewhere
    line.appendChild(withdrawButton(q.id));
    box.appendChild(line);
  }
}

// withdrawButton takes a queued message back before the turn reads it; the
// turn says whether it could (an injected message will be answered).
function withdrawButton(id) {
  const b = el('button', 'withdraw', 'cancel');
  b.type = 'button';
  b.title = 'Withdraw this message: the agent will not read it';
  b.onclick = async () => {
    b.disabled = true;
    try {
      await api('api/withdraw', { chat: state.chat, id });
      withdrawn(id);
    } catch (err) {
      b.remove();
      add('msg assistant error', '').textContent = '⚠ ' + err.message;
    }
  };
  return b;
}

// withdrawn takes a message the turn gave back out of the transcript and the queue:
// it was never journaled, so a reload does not bring it back either.
function withdrawn(id) {
  const m = document.querySelector('#log [data-id="' + CSS.escape(id) + '"]');
  if (m) m.remove();
  if (!liveView.now) return;
  liveView.now.queued = (liveView.now.queued || []).filter((q) => q.id !== id);
  drawLive();
}
