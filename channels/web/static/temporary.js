// A temporary chat (nanobot's Temporary Chat): kept out of the sidebar,
// search and memory, and deleted when it is left — another chat opened, the
// page closed or reloaded — or discarded. Only /model and /stop work in it.
function isTemporary(chat) { return (chat || '').startsWith('tmp-'); }

// leaveChat discards the chat being left when it is a temporary one (a
// keepalive request, so it is sent while the page goes away too).
function leaveChat(chat) {
  if (!isTemporary(chat)) return;
  fetch('api/discard', {
    method: 'POST', keepalive: true, credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ chat }),
  }).catch(() => {});
}

// markTemporary shows whether the open chat is temporary.
function markTemporary(chat) {
  const t = isTemporary(chat);
  $('temp-badge').hidden = $('discard').hidden = !t;
  $('rename').hidden = $('archive').hidden = t;
}

$('temporary').addEventListener('click', () => open('tmp-' + newChat()));
$('discard').addEventListener('click', () => open(localStorage.getItem('nanobot-chat') || newChat()));
window.addEventListener('pagehide', () => leaveChat(state.chat));
