// The schedules page: the agent's Temporal Schedules (cron jobs, the
// heartbeat, Dream, idle compaction, disk gc) with their runs and actions.
"use strict";
(() => {
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

  // A web chat's request is answered as its chat's button does: the command as that chat's message.
  async function answer(session, command) {
    const res = await fetch("api/send", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ chat: session.slice("web:".length), text: command }),
    });
    const body = await res.json().catch(() => ({}));
    status.textContent = res.ok ? command + ": sent" : (body.error || res.statusText);
    await loadApprovals();
  }

  function approval(a) {
    const c = el("article", "pending");
    c.dataset.session = a.session;
    c.dataset.id = a.request.id;
    c.append(el("h3", "", a.session), el("p", "call", a.request.call || a.request.text));
    if (a.answerable) {
      const buttons = el("div", "actions");
      for (const b of a.request.buttons || []) {
        const btn = el("button", b.verdict, b.label);
        btn.type = "button";
        btn.addEventListener("click", () => { btn.disabled = true; answer(a.session, b.command); });
        buttons.append(btn);
      }
      c.append(buttons);
    } else {
      c.append(el("p", "hint", "Answer it in its chat, or with the owner's CLI: nanobot agent -s " + a.session + ' -m "/approve ' + a.request.id + '"'));
    }
    return c;
  }

  // fill draws one section from its endpoint: a card per item, the "none" line, or the error.
  async function fill(id, what, card, none) {
    const box = document.getElementById(id);
    const res = await fetch("api/" + what);
    const body = await res.json().catch(() => ({}));
    if (!res.ok) {
      box.replaceChildren(el("p", "error", body.error || res.statusText));
      return;
    }
    const items = body[what] || [];
    box.replaceChildren(...(items.length ? items.map(card) : [el("p", "none", none)]));
  }

  const loadApprovals = () => fill("approvals", "approvals", approval, "Nothing waits for an answer.");

  // Subagents at work: each with what spawned it and where its loop is.
  function subagent(s) {
    const c = el("article", "subagent");
    c.dataset.id = s.id;
    c.append(el("h3", "", s.label || s.id), el("p", "times", "for " + s.origin + " · since " + when(s.started) +
      " · " + (s.state ? s.state + (s.iteration ? " · iteration " + s.iteration : "") : "starting")));
    return c;
  }

  // A session's page in the chat: a web chat by its id, another channel's read-only.
  const chatLink = (key) => (key.startsWith("web:") ? "/#" + encodeURIComponent(key.slice(4)) : "/#session=" + encodeURIComponent(key));

  // A session's sustained goal with its state, its chat and the run that last changed it.
  function goal(g) {
    const c = el("article", "goal " + g.status);
    c.dataset.session = g.session;
    const head = el("h3", "", g.ui_summary || g.objective);
    head.append(" ", el("span", "state", g.status));
    c.append(head, el("p", "objective", g.objective));
    if (g.reason) c.append(el("p", "reason", g.reason));
    const links = el("p", "times", (g.since ? "since " + when(g.since) + " · " : "") + "updated " + when(g.updated) + " · ");
    const chat = el("a", "session", g.session);
    chat.href = chatLink(g.session);
    links.append(chat);
    if (g.inspect) {
      const run = el("a", "inspect", "its run in Temporal");
      run.href = g.inspect; run.target = "_blank"; run.rel = "noopener";
      links.append(" · ", run);
    }
    c.append(links);
    return c;
  }

  const load = () => fill("schedules", "schedules", card, "No schedules.");
  const loadAll = () => {
    load();
    loadApprovals();
    fill("subagents", "subagents", subagent, "No subagent is at work.");
    fill("goals", "goals", goal, "No goal is set. /goal <task> in a chat sets one.");
  };

  loadAll();
  setInterval(loadAll, 5000);
})();
