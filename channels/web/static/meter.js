// nanobot web chat: the open session's context meter (GET /api/context):
// tokens used of the budget, and what compaction will do next.
'use strict';

async function loadMeter() {
  const session = state.session;
  let v;
  try {
    v = await api('api/context?session=' + encodeURIComponent(session));
  } catch (err) { $('meter').hidden = true; return; } // the chat itself still works
  if (session !== state.session) return;
  const m = $('meter');
  const pct = v.budget ? Math.min(100, Math.round((100 * v.used) / v.budget)) : 0;
  m.hidden = false;
  m.classList.toggle('full', v.used >= v.budget);
  m.querySelector('.bar span').style.width = pct + '%';
  m.querySelector('.used').textContent = 'context ' + v.used.toLocaleString() + ' / ' + v.budget.toLocaleString() + ' tokens (' + pct + '%)';
  const why = m.querySelector('.why');
  why.textContent = '';
  why.append(el('div', '', v.model + ' · window ' + v.window.toLocaleString() + ', ' + v.max_tokens.toLocaleString() + ' for the answer · ' + v.encoding));
  why.append(el('div', 'next', v.next));
  if (v.idle) why.append(el('div', 'idle', v.idle));
}
