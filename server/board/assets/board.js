// The planning board: one script for both hosts. Text from plans is only ever set with
// textContent (never parsed as HTML): subjects and descriptions come from agents.
"use strict";
(function () {
  const cfg = JSON.parse(document.getElementById("config").textContent);
  const $ = (id) => document.getElementById(id);
  const state = { data: null, plan: null, open: new Set() };
  let transport = null;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function setStatus(text, ok) {
    const s = $("status");
    s.textContent = text;
    s.className = ok ? "" : "off";
  }

  function notice(text, kind) {
    const n = $("notice");
    n.textContent = text || "";
    n.className = "banner " + (kind || "");
  }

  // -- rendering ----------------------------------------------------------------------

  function render(data) {
    state.data = data;
    const plan = data.plan;
    state.plan = plan ? plan.name : state.plan;
    document.body.dataset.plan = plan ? plan.name : "";
    $("error").textContent = data.error || "";
    renderPlans(data.plans || [], plan ? plan.name : null);
    renderBoard(data.columns || cfg.columns, plan);
    renderTimeline(plan ? plan.timeline || [] : []);
    const withActions = Boolean(data.actions && plan && !plan.archived);
    $("who").hidden = !withActions;
    $("mode").hidden = Boolean(data.actions) || !plan;
  }

  function renderPlans(plans, current) {
    const ul = $("plans");
    ul.replaceChildren();
    if (!plans.length) ul.append(el("li", "empty", "No active plans."));
    for (const p of plans) {
      const li = el("li");
      const b = el("button");
      b.type = "button";
      b.dataset.plan = p.name;
      b.setAttribute("aria-current", String(p.name === current));
      b.append(el("span", "", p.title || p.name));
      const pr = p.progress || {};
      let line = `${pr.completed || 0}/${pr.total || 0} done`;
      if (p.unreadable) line += ` · ${p.unreadable} unreadable`;
      if (p.current) line += ` · now: ${p.current}`;
      b.append(el("small", "", p.name), el("small", "", line));
      b.addEventListener("click", () => choose(p.name));
      li.append(b);
      ul.append(li);
    }
  }

  function renderTimeline(events) {
    const ol = $("timeline");
    ol.replaceChildren();
    if (!events.length) ol.append(el("li", "empty", "No changes recorded yet."));
    for (const e of events) ol.append(el("li", "", e.text));
  }

  function renderBoard(columns, plan) {
    const board = $("board");
    board.replaceChildren();
    const unreadable = $("unreadable");
    unreadable.replaceChildren();
    if (!plan) {
      $("title").textContent = "Planning board";
      $("progress").textContent = "";
      $("bar").style.width = "0";
      board.append(el("p", "empty", "No plan to show."));
      return;
    }
    $("title").textContent = plan.title + (plan.archived ? " (archived)" : "");
    document.title = `${plan.title} · planning board`;
    const pr = plan.progress;
    const pct = pr.total ? Math.round((100 * pr.completed) / pr.total) : 0;
    $("progress").textContent = `${pr.completed}/${pr.total} done`;
    $("bar").style.width = pct + "%";
    const cols = {};
    for (const c of columns) {
      const sec = el("div", "col");
      sec.dataset.col = c.key;
      const h = el("h2", "", c.title);
      const n = el("span", "n");
      h.append(n);
      sec.append(h);
      cols[c.key] = { sec, n, count: 0 };
      board.append(sec);
    }
    for (const t of plan.tasks) {
      const col = cols[t.column];
      if (!col) continue;
      col.sec.append(card(t, plan));
      col.count += 1;
    }
    // An unreadable task file is a card of its own (its status cannot be known) and a banner.
    const files = plan.unreadableFiles || [];
    for (const bad of files) {
      const c = el("article", "card unreadable");
      c.dataset.task = String(bad.taskId);
      const top = el("div", "top");
      top.append(el("span", "id", "#" + bad.taskId), el("span", "subject", "unreadable task file"));
      c.append(top, el("div", "meta", `${bad.path || bad.file}: ${bad.reason}`));
      (cols.blocked || cols[columns[0].key]).sec.append(c);
      (cols.blocked || cols[columns[0].key]).count += 1;
    }
    if (files.length) {
      unreadable.textContent =
        `${files.length} task file${files.length > 1 ? "s" : ""} cannot be read: ` +
        files.map((f) => `${f.path || f.file} (${f.reason})`).join("; ") +
        ". Fix or move it by hand; nothing overwrites it.";
    }
    for (const k in cols) {
      cols[k].n.textContent = `(${cols[k].count})`;
      if (!cols[k].count) cols[k].sec.append(el("p", "empty", "—"));
    }
  }

  function card(t, plan) {
    const c = el("article", "card " + t.column);
    c.dataset.task = String(t.id);
    c.dataset.status = t.status;
    const top = el("div", "top");
    top.title = "show or hide the description";
    top.append(el("span", "id", "#" + t.id), el("span", "subject", t.subject));
    c.append(top);
    const meta = el("div", "meta");
    if (t.owner) meta.append(el("span", "owner", t.owner), " ");
    // The same marks as a TaskList line: P<n> the priority, {a,b} the labels, ^#<id> the parent.
    if (t.priority !== null && t.priority !== undefined) meta.append(el("span", "priority", "P" + t.priority), " ");
    if (t.labels && t.labels.length) meta.append(el("span", "labels", "{" + t.labels.join(",") + "}"), " ");
    if (t.parent) meta.append(el("span", "parent", "^#" + t.parent), " ");
    // What a gated task waits for (a person, or a time), as TaskList marks it.
    if (t.gate && t.status !== "completed") {
      const until = t.gate.after ? "after " + t.gate.after : "a person";
      meta.append(el("span", "gate", "gate: " + until), " ");
    }
    if (t.status === "in_progress" && t.activeForm) meta.append(el("span", "active", t.activeForm), " ");
    // As a TaskList line says it: an unfinished task's checks running, failed or interrupted.
    const checks = t.verification && t.verification.state;
    if (t.status !== "completed" && ["running", "failed", "interrupted"].includes(checks)) {
      meta.append(el("span", "checks " + checks, "checks " + checks), " ");
    }
    const open = t.openBlockers || [];
    if (open.length) meta.append(el("span", "blockers", "blocked by " + open.map((b) => "#" + b).join(", ")));
    if (meta.childNodes.length) c.append(meta);
    const desc = el("div", "desc", t.description || "(no description)");
    // Its acceptance criteria under the description, shown and hidden with it.
    if (t.acceptance && t.acceptance.length) {
      const list = el("ul", "acceptance");
      for (const c of t.acceptance) list.append(el("li", "", c));
      desc.append(list);
    }
    // Its handoff notes, all of them, oldest first: who, when, what.
    if (t.notes && t.notes.length) {
      const notes = el("ul", "notes");
      for (const n of t.notes) notes.append(el("li", "", n.at + " " + n.by + ": " + n.text));
      desc.append(notes);
    }
    desc.hidden = !state.open.has(t.id);
    c.append(desc);
    // A button for the keyboard and screen readers too: Enter or Space shows the description.
    top.tabIndex = 0;
    top.setAttribute("role", "button");
    top.setAttribute("aria-expanded", String(!desc.hidden));
    const toggle = () => {
      desc.hidden = !desc.hidden;
      top.setAttribute("aria-expanded", String(!desc.hidden));
      if (desc.hidden) state.open.delete(t.id);
      else state.open.add(t.id);
    };
    top.addEventListener("click", toggle);
    top.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" || ev.key === " ") {
        ev.preventDefault();
        toggle();
      }
    });
    if (state.data && state.data.actions && !plan.archived) c.append(actionButtons(t, plan));
    return c;
  }

  // Which actions a card offers: the few a person takes on a board. The server (the same
  // TaskUpdate as the agent's) decides; a refusal is shown with its message.
  const OFFERED = { ready: ["start", "claim"], blocked: ["start", "claim"], in_progress: ["complete", "claim"], done: ["reopen"] };

  function actionButtons(t, plan) {
    const box = el("div", "acts");
    // A gated task (a person's sign-off, or a time) is not the agents' to start or complete:
    // on the web board a person approves it; elsewhere it offers nothing.
    const offered = t.gate && t.column !== "done" ? (cfg.approve ? [cfg.approve] : []) : OFFERED[t.column] || [];
    for (const name of offered) {
      const b = el("button", "", cfg.actionLabels[name] || name);
      b.type = "button";
      b.dataset.action = name;
      b.addEventListener("click", () => act(name, t, plan));
      box.append(b);
    }
    return box;
  }

  function ownerName() {
    return $("owner").value.trim();
  }

  async function act(name, t, plan) {
    const owner = ownerName();
    if (name === "claim" && !owner) {
      notice("Type your name (top right) to claim a task.", "refused");
      $("owner").focus();
      return;
    }
    notice(`${cfg.actionLabels[name]} #${t.id}…`, "");
    try {
      const r = await transport.act({ action: name, plan: plan.name, taskId: t.id, owner });
      if (r.refused) notice(r.message, "refused");
      else notice(r.message, "ok");
    } catch (e) {
      notice(String(e.message || e), "refused");
    }
    transport.refresh();
  }

  function choose(name) {
    state.plan = name;
    state.open.clear();
    transport.switchTo(name);
  }

  // -- the browser: JSON and server-sent events from this server -----------------------

  function webTransport() {
    let source = null;
    const query = (plan) => (plan ? "?plan=" + encodeURIComponent(plan) : "");
    function connect(plan) {
      if (source) source.close();
      source = new EventSource(cfg.base + "/events" + query(plan));
      source.addEventListener("board", (ev) => {
        setStatus("live", true);
        render(JSON.parse(ev.data));
      });
      source.onopen = () => setStatus("live", true);
      source.onerror = () => setStatus(source.readyState === 2 ? "disconnected (reload the page)" : "reconnecting…", false);
    }
    const plan = new URLSearchParams(location.search).get("plan");
    connect(plan);
    return {
      switchTo(name) {
        const url = new URL(location.href);
        url.searchParams.set("plan", name);
        history.replaceState(null, "", url);
        connect(name);
      },
      refresh() {},
      async act(body) {
        const r = await fetch(cfg.base + "/api/action", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
          credentials: "same-origin",
        });
        const out = await r.json().catch(() => ({ refused: true, message: `HTTP ${r.status}` }));
        return out;
      },
    };
  }

  // -- inside the chat: the MCP Apps host protocol (JSON-RPC over postMessage) ------------

  function appTransport() {
    document.body.classList.add("app");
    const pending = new Map();
    let nextId = 1;
    let timer = null;
    const host = window.parent;
    function send(msg) {
      host.postMessage(Object.assign({ jsonrpc: "2.0" }, msg), "*");
    }
    function request(method, params) {
      const id = nextId++;
      send({ id, method, params });
      return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
    }
    function resultText(result) {
      return (result.content || []).filter((b) => b.type === "text").map((b) => b.text).join("\n");
    }
    async function refresh() {
      try {
        const args = state.plan ? { plan: state.plan } : {};
        const result = await request("tools/call", { name: cfg.appTool, arguments: args });
        if (result.isError) {
          setStatus("refresh refused", false);
          notice(resultText(result), "refused");
          return;
        }
        render(result.structuredContent);
        setStatus("updated " + new Date().toLocaleTimeString(), true);
      } catch (e) {
        setStatus("cannot refresh: " + (e.message || e), false);
      }
    }
    // A tool result the host hands us: our own board, or PlanList / TaskList's data. The
    // latter carry the core's open blockers, so the first frame needs no call; the full
    // board (descriptions, the other plans) follows from the app-only tool.
    function fromToolResult(result) {
      const sc = (result && result.structuredContent) || {};
      if (sc.columns) return render(sc);
      if (sc.tasks && sc.plan) {
        const tasks = sc.tasks.map((t) => {
          const open = t.blockedBy || [];
          const column =
            t.status === "completed" ? "done" : t.status === "in_progress" ? "in_progress" : open.length ? "blocked" : "ready";
          // Every field of the row as sent (a field added to the row needs nothing here).
          return Object.assign({}, t, { owner: t.owner || "", openBlockers: open, column });
        });
        const unreadableFiles = (sc.unreadable || []).map((u) => ({ taskId: u.taskId, file: u.file, reason: u.reason }));
        render({ actions: false, plans: [sc.plan], plan: Object.assign({}, sc.plan, { tasks, unreadableFiles }) });
      } else if (sc.plans) {
        const first = sc.plans.find((p) => !p.archived);
        state.plan = first ? first.name : null;
        render({ actions: false, plans: sc.plans.filter((p) => !p.archived), plan: null });
      }
      refresh();
    }
    window.addEventListener("message", (ev) => {
      if (ev.source !== host) return;
      const m = ev.data;
      if (!m || m.jsonrpc !== "2.0") return;
      if (m.id !== undefined && !m.method) {
        const p = pending.get(m.id);
        if (!p) return;
        pending.delete(m.id);
        if (m.error) p.reject(new Error(m.error.message || "error"));
        else p.resolve(m.result);
        return;
      }
      if (m.method === "ui/notifications/tool-result") fromToolResult(m.params);
      else if (m.method === "ui/notifications/host-context-changed" && m.params && m.params.theme)
        document.documentElement.dataset.theme = m.params.theme;
      else if (m.method === "ui/resource-teardown") {
        clearInterval(timer);
        send({ id: m.id, result: {} });
      } else if (m.id !== undefined && m.method) send({ id: m.id, result: {} }); // ping and the like
    });
    $("refresh").hidden = false;
    $("refresh").addEventListener("click", refresh);
    request("ui/initialize", {
      protocolVersion: cfg.appsProtocol,
      appInfo: { name: "planning-board", version: cfg.version },
      appCapabilities: { availableDisplayModes: ["inline", "fullscreen"] },
    }).then((init) => {
      const theme = init && init.hostContext && init.hostContext.theme;
      if (theme) document.documentElement.dataset.theme = theme;
      send({ method: "ui/notifications/initialized", params: {} });
      // The host sizes its frame to the board (hosts start apps in a short frame otherwise).
      let last = "";
      new ResizeObserver(() => {
        const size = { width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight };
        const key = size.width + "x" + size.height;
        if (key !== last) send({ method: "ui/notifications/size-changed", params: size });
        last = key;
      }).observe(document.body);
      document.body.dataset.initialized = "true";
      setStatus("connected", true);
      // Live while shown: the board asks for itself every few seconds, never through the model.
      timer = setInterval(() => {
        if (!document.hidden && state.plan) refresh();
      }, cfg.appRefreshMs);
    });
    return {
      switchTo() {
        refresh();
      },
      refresh,
      async act(body) {
        const args = Object.assign({ taskId: body.taskId, plan: body.plan }, cfg.actions[body.action]);
        if ("owner" in args) args.owner = body.owner;
        if (body.action === "start" && body.owner) args.owner = body.owner;
        const result = await request("tools/call", { name: "TaskUpdate", arguments: args });
        return { refused: Boolean(result.isError), message: resultText(result) };
      },
    };
  }

  transport = cfg.mode === "app" ? appTransport() : webTransport();
  try {
    $("owner").value = localStorage.getItem("planning-board-owner") || "";
  } catch (e) {
    /* storage may be off in a sandboxed frame */
  }
  $("owner").addEventListener("change", () => {
    try {
      localStorage.setItem("planning-board-owner", ownerName());
    } catch (e) {
      /* see above */
    }
  });
})();
