// nanobot web chat: the sidebar as a drawer on a narrow screen, and the
// keyboard shortcuts of a desktop (listed at the foot of the sidebar).
'use strict';

function drawer(open) { document.body.classList.toggle('drawer', open); }

$('menu').addEventListener('click', () => drawer(!document.body.classList.contains('drawer')));
$('scrim').addEventListener('click', () => drawer(false));
$('sessions').addEventListener('click', (e) => { if (e.target.closest('li')) drawer(false); });
$('new').addEventListener('click', () => drawer(false));

// switchChat opens the chat step places from the open one in the sidebar.
function switchChat(step) {
  const items = [...document.querySelectorAll('#sessions li')];
  const next = items[items.findIndex((li) => li.dataset.key === state.session) + step]; // not .current: the list may be redrawing
  if (next) next.click();
}

function typing() {
  const a = document.activeElement;
  return a && (/^(INPUT|TEXTAREA|SELECT)$/.test(a.tagName) || a.isContentEditable);
}

// Ctrl/⌘+K searches the chats; Alt+N starts a session; Alt+↑/↓ opens the
// previous/next chat; "/" goes to the message box; Escape closes the drawer or leaves the search.
document.addEventListener('keydown', (e) => {
  if ((e.ctrlKey || e.metaKey) && e.code === 'KeyK') { e.preventDefault(); drawer(true); $('search').focus(); $('search').select(); return; }
  if (!e.altKey || e.ctrlKey || e.metaKey) {
    if (e.key === 'Escape') { drawer(false); if (document.activeElement === $('search')) $('text').focus(); }
    if (e.key === '/' && !typing()) { e.preventDefault(); $('text').focus(); }
    return;
  }
  const act = { KeyN: () => { $('new').click(); $('text').focus(); }, ArrowUp: () => switchChat(-1), ArrowDown: () => switchChat(1) }[e.code];
  if (act) { e.preventDefault(); act(); }
});
