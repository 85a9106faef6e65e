// nanobot web chat: attachments — images and files by the picker, paste or
// drag-and-drop, checked against the channel's limits (GET /api/info), sent
// with the next message and drawn inline in the transcript.
'use strict';

const attach = { files: [], maxFile: 20 << 20, maxFiles: 8 };
const sentImages = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];

function attachError(text) { add('msg assistant error', '').textContent = '⚠ ' + text; }

// addFiles keeps what fits the limits for the next message, and says what does not.
function addFiles(list) {
  for (const f of list) {
    if (attach.files.length >= attach.maxFiles) { attachError('at most ' + attach.maxFiles + ' files per message'); break; }
    if (!f.size) { attachError(f.name + ' is empty'); continue; }
    if (f.size > attach.maxFile) { attachError(f.name + ' is larger than ' + (attach.maxFile >> 20) + ' MB'); continue; }
    if (f.type.startsWith('image/') && !sentImages.includes(f.type)) { attachError(f.name + ': an image must be JPEG, PNG, GIF or WebP'); continue; }
    attach.files.push(f);
  }
  drawPending();
}

// takeFiles hands the files over to a message being sent.
function takeFiles() {
  const files = attach.files;
  attach.files = [];
  drawPending();
  return files;
}

function drawPending() {
  const box = $('pending');
  box.textContent = '';
  box.hidden = !attach.files.length;
  attach.files.forEach((f, i) => {
    const chip = el('span', 'chip');
    if (sentImages.includes(f.type)) {
      const img = el('img');
      img.src = URL.createObjectURL(f);
      img.alt = f.name;
      chip.appendChild(img);
    }
    chip.appendChild(el('span', 'name', f.name + ' · ' + size(f.size)));
    const x = el('button', 'remove', '×');
    x.type = 'button';
    x.title = 'Remove ' + f.name;
    x.onclick = () => { attach.files.splice(i, 1); drawPending(); };
    chip.appendChild(x);
    box.appendChild(chip);
  });
}

function size(n) { return n < 1024 ? n + ' B' : n < 1 << 20 ? Math.round(n / 1024) + ' KB' : (n / (1 << 20)).toFixed(1) + ' MB'; }

// drawMedia puts a message's files in its bubble: images inline, the rest as links.
// Each is {kind, name} from the journal (served by api/media) or {file} being sent.
function drawMedia(bubble, list) {
  if (!list || !list.length) return;
  const box = el('div', 'media');
  for (const m of list) {
    const url = m.file ? URL.createObjectURL(m.file) : 'api/media?name=' + encodeURIComponent(m.name);
    const name = m.file ? m.file.name : m.name.replace(/^web-[0-9a-f]+-\d+-/, ''); // the name it was sent with
    if (m.file ? sentImages.includes(m.file.type) : m.kind === 'image') {
      const img = el('img');
      img.src = url;
      img.alt = name;
      box.appendChild(img);
      continue;
    }
    const a = el('a', 'file', (m.kind === 'voice' ? '🎙 ' : '📎 ') + name);
    a.href = url;
    a.download = name;
    box.appendChild(a);
  }
  bubble.appendChild(box);
}

$('files').addEventListener('change', () => { addFiles($('files').files); $('files').value = ''; });
$('attach-file').addEventListener('click', () => $('files').click());
$('text').addEventListener('paste', (e) => {
  if (e.clipboardData && e.clipboardData.files.length) { e.preventDefault(); addFiles(e.clipboardData.files); }
});
document.querySelector('main').addEventListener('dragover', (e) => { e.preventDefault(); document.body.classList.add('dropping'); });
document.querySelector('main').addEventListener('dragleave', () => document.body.classList.remove('dropping'));
document.querySelector('main').addEventListener('drop', (e) => {
  e.preventDefault();
  document.body.classList.remove('dropping');
  if (e.dataTransfer && e.dataTransfer.files.length) addFiles(e.dataTransfer.files);
});
api('api/info').then((info) => { attach.maxFile = info.max_file || attach.maxFile; attach.maxFiles = info.max_files || attach.maxFiles; }).catch(() => {});
