// The schedules page: the agent's Temporal Schedules (cron jobs, the
// heartbeat, Dream, idle compaction, disk gc) with their runs and actions.
"use strict";
(() => {
  const list = document.getElementById("schedules");
  const status = document.getElementById("status");

  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const when = (t) => (t ? new Date(t).toLocaleString() : "—");

  async function act(id, action) {
    if (action === "delete" && !confirm("Delete the cron job " + id + "?")) return;
    status.textContent = action + " " + id + "…";
    const res = await fetch("api/schedule", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ id, action }),
    });
    const body = await res.json().catch(() => ({}));
    status.textContent = res.ok ? action + " " + id + ": done" : (body.error || res.statusText);
    await load();
  }

  function card(s) {
    const c = el("article", "schedule" + (s.paused ? " paused" : ""));
    c.dataset.id = s.id;
    const head = el("h3", "", s.name || s.id);
    head.append(" ", el("span", "kind", s.kind), " ", el("span", "state", s.paused ? "paused" : "active"));
    c.append(head);
    const last = s.runs[0];
    c.append(el("p", "times", "next: " + (s.paused ? "paused" : when(s.next)) +
      " · last: " + (last ? when(last.at) + " (" + (last.result || "?") + ")" : "never")));
    const buttons = el("div", "actions");
    const add = (action, label) => {
      const b = el("button", "act-" + action, label);
      b.type = "button";
      b.addEventListener("click", () => act(s.id, action));
      buttons.append(b);
    };
    add(s.paused ? "resume" : "pause", s.paused ? "Resume" : "Pause");
    add("run", "Run now");
    if (s.deletable) add("delete", "Delete");
    c.append(buttons);
    if (s.runs.length) {
      const runs = el("ul", "runs");
      for (const r of s.runs) {
        const li = el("li", "run");
        li.append(when(r.at) + " · " + (r.result || "?") + " · ");
        if (r.inspect) {
          const a = el("a", "", r.workflow_id);
          a.href = r.inspect; a.target = "_blank"; a.rel = "noopener";
          li.append(a);
        } else {
          li.append(r.workflow_id || "");
        }
        runs.append(li);
      }
      c.append(runs);
    }
    return c;
  }

  async function load() {
    const res = await fetch("api/schedules");
    const body = await res.json().catch(() => ({}));
    if (!res.ok) {
      list.replaceChildren(el("p", "error", body.error || res.statusText));
      return;
    }
    list.replaceChildren(...(body.schedules.length ? body.schedules.map(card) : [el("p", "", "No schedules.")]));
  }

  load();
  setInterval(load, 5000);
})();
