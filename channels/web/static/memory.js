// The memory page: MEMORY.md, USER.md and SOUL.md read-only, and what the
// last Dream changed as a diff (what /dream-log shows); el and diffView are turn.js's.
"use strict";
(() => {
  async function load() {
    const res = await fetch("api/memory");
    const body = await res.json().catch(() => ({}));
    if (!res.ok) { document.getElementById("status").textContent = body.error || res.statusText; return; }
    const dream = document.getElementById("dream");
    dream.textContent = "";
    if (!body.dream) dream.appendChild(el("p", "none", "Dream has not changed the memory yet (it runs on its schedule, or /dream)."));
    else {
      const d = body.dream;
      dream.appendChild(el("p", "dream-head", d.commit + " · " + d.when + " · " + (d.files || []).join(", ")));
      dream.appendChild(diffView(d.diff));
    }
    const files = document.getElementById("files");
    files.textContent = "";
    for (const f of body.files) {
      const d = el("details", "memory-file");
      d.dataset.name = f.name;
      d.open = f.name === "MEMORY.md";
      d.appendChild(el("summary", "", f.name + (f.missing ? " (not written yet)" : "")));
      d.appendChild(el("pre", "", f.text));
      files.appendChild(d);
    }
  }
  load();
})();
