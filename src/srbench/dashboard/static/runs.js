// sr-bench Dashboard — Runs (UI-1), a run's page with its headline and tabs (UI-5), recovery (UI-8).
// A run's page polls the run alone and, when it changed, refreshes the summary and the open tab's
// current page only; it stops polling once the run is terminal. Every value is put in as text.
"use strict";

// -- Runs (UI-1) ---------------------------------------------------------------------------------
function runsView(q) {
  const status = h("p", { class: "muted", "aria-live": "polite" });
  const list = h("div");
  const field = (name, label, el) => {
    el.value = q.get(name) || "";
    el.id = "filter-" + name;
    el.addEventListener("change", () => { q.set(name, el.value); if (!el.value) q.delete(name); go(["runs"], q); });
    return h("label", { for: el.id }, label, el);
  };
  const select = (opts) => h("select", {}, h("option", { value: "" }, "any"), opts.map((o) => h("option", { value: o }, o)));
  show(h("h1", {}, "Runs"),
    h("div", { class: "filters" },
      field("name", "name", h("input", { type: "search" })), field("model", "model", h("input", { type: "search" })),
      field("status", "status", select(["queued", "running", ...TERMINAL])),
      field("mode", "mode", select(["live", "preview", "replay"]))),
    status, list);
  let shown = "";
  poll(async () => {
    const runs = (await Api.runs()).filter((r) =>
      (!q.get("name") || r.name.toLowerCase().includes(q.get("name").toLowerCase())) &&
      (!q.get("model") || r.targets.some((t) => (t.model || "").toLowerCase().includes(q.get("model").toLowerCase()))) &&
      (!q.get("status") || r.status === q.get("status")) && (!q.get("mode") || r.mode === q.get("mode")));
    const sig = JSON.stringify(runs.map((r) => [r.id, r.status, r.updated_at, r.progress]));
    if (sig !== shown) {        // re-rendered only when a run changed (keeps focus and selection)
      shown = sig;
      // status and progress right after the name, so a phone (390 px) shows them without scrolling
      put(list, table(["name", "status", "completed / planned", "failed", "mode", "targets", "run", "ambiguous", "updated"],
        runs.map((r) => h("tr", { class: "link", on: { click: (e) => { if (e.target.tagName !== "A") go(["run", r.id]); } } },
          h("td", {}, link(["run", r.id], null, r.name)), h("td", { class: "status" }, r.status),
          h("td", { class: "progress" }, r.progress.completed + " / " + r.progress.total), h("td", {}, r.progress.failed),
          h("td", {}, r.mode), h("td", {}, r.targets.map((t) => t.id + " (" + t.kind + ", " + t.model + ")").join(", ")),
          h("td", {}, h("code", {}, r.id)), h("td", {}, r.progress.ambiguous), h("td", {}, fmt.time(r.updated_at)))),
        { empty: "No run matches.", label: "runs" }));
    }
    status.textContent = runs.length + " run(s) shown; the list is read-only and refreshes every " + POLL_MS / 1000 + " s";
  });
}

// -- Run detail (UI-5) ---------------------------------------------------------------------------
const TAB_NAMES = ["results", "questions", "calls", "evidence", "recipe", "events"];

function runView(id, q) {
  const tab0 = TAB_NAMES.includes(q.get("tab")) ? q.get("tab") : "results";
  const head = h("div");
  const headline = h("div", { id: "headline" });
  const summary = h("div", { id: "summary" });
  const recovery = h("div", { id: "recovery" });
  const panel = h("div", { role: "tabpanel", id: "run-panel", tabindex: "0" });
  const buttons = TAB_NAMES.map((t) => h("button", { type: "button", role: "tab", id: "tab-" + t, "aria-controls": "run-panel",
    on: { click: () => select(t) } }, t));
  const tablist = h("div", { class: "tabs", role: "tablist", "aria-label": "Run details" }, buttons);
  tablist.addEventListener("keydown", (e) => {         // arrow keys move between tabs (and open them)
    const i = TAB_NAMES.indexOf(q.get("tab") || tab0);
    const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: TAB_NAMES.length - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    const t = TAB_NAMES[(to + TAB_NAMES.length) % TAB_NAMES.length];
    select(t);
    buttons[TAB_NAMES.indexOf(t)].focus();
  });
  show(h("p", {}, h("a", { href: "#/runs" }, "← Runs")), head, headline, summary, recovery, tablist, panel);
  let current = null;          // the open tab: {refresh()} or null
  let run = null;
  let isCurrent = () => true;

  function select(t) {
    q.set("tab", t);
    q.delete("offset");
    replaceUrl(["run", id], q);
    open(t);
  }
  function open(t) {
    buttons.forEach((b, i) => { const on = TAB_NAMES[i] === t; b.setAttribute("aria-selected", String(on)); b.tabIndex = on ? 0 : -1; });
    panel.setAttribute("aria-labelledby", "tab-" + t);
    // each opening renders into a box of its own: a tab left before its page arrived fills its detached
    // box, never the panel of the tab opened after it (arrow keys move through tabs faster than pages load)
    const box = h("div", { class: "tab-body" });
    put(panel, box);
    current = TABS[t](box, id, q, () => run);
    if (current && current.refresh) current.refresh().catch((e) => put(box, h("p", { class: "error" }, e.message)));
  }
  open(tab0);
  let seen = null;
  let reportedTerminal = false;
  let recoveryShown = false;
  isCurrent = poll(async () => {
    run = await Api.run(id);
    const p = run.progress;
    put(head, h("h1", {}, run.name + " — " + run.status),
      h("p", {}, h("code", {}, run.id), " · " + run.mode + " · profile " + (run.profile || "?") + " · " + p.completed + " / " +
        p.total + " completed, " + p.failed + " failed, " + p.ambiguous + " ambiguous, " + p.running + " running, " +
        p.pending + " pending"), lineageLine(run), run.error ? h("p", { class: "error" }, run.error) : null);
    const key = JSON.stringify([run.status, run.updated_at, p]);
    const terminal = TERMINAL.includes(run.status);
    // while the run goes, the routing panel says the counts of the line above, from the same answer, every poll
    const going = FINISHING.includes(run.status);
    if (going) routingPays(headline, run, q, isCurrent).catch((e) => put(headline, h("p", { class: "error" }, e.message)));
    if (key !== seen) {          // something changed: the summary and the open tab's page, nothing else
      const first = seen === null;
      seen = key;
      // while the run goes: its figures so far, maintained by the service as cells finish (O(targets) to
      // read); the full report (rebuilt from every cell) once it has ended
      put(summary, going ? liveView(await Api.live(id), p) : reportView(await Api.report(id)));
      if (!first && current && current.refresh) await current.refresh();
      if (!going && (first || (terminal && !reportedTerminal))) {
        reportedTerminal = terminal;
        routingPays(headline, run, q, isCurrent).catch((e) => put(headline, h("p", { class: "error" }, e.message)));
      }
    }
    if (terminal) {
      if (!recoveryShown && run.mode === "live" && run.status !== "completed") { recoveryShown = true; recoveryView(recovery, run); }
      return false;              // a terminal run changes no more: polling stops
    }
    return true;
  });
}

function lineageLine(run) {
  const parts = [];
  if (run.parent) parts.push("recovery child of ", link(["run", run.parent], null, run.parent));
  if (run.children.length) {
    parts.push(parts.length ? "; " : "", "recovery children: ");
    run.children.forEach((c, i) => parts.push(i ? ", " : "", link(["run", c], null, c)));
  }
  return parts.length ? h("p", { class: "lineage" }, ...parts) : null;
}

// -- Recovery (UI-8, REC-1..4) --------------------------------------------------------------------
// The pending request is kept in this tab (sessionStorage) before it is sent, so that a lost response
// is re-sent with the same idempotency key and binds the same child run, never a second one.
const pendingKey = (runId) => "srbench.recovery." + runId;

function recoveryView(box, run) {
  const mode = h("select", { id: "recovery-mode" }, h("option", { value: "undispatched" }, "undispatched — cells that never sent a call"),
    h("option", { value: "failed" }, "failed — new attempts of known-failed cells (extra cost)"));
  const review = h("div");
  put(box, h("h2", {}, "Recovery"), h("p", {}, h("label", { for: "recovery-mode" }, "Cells to continue: "), mode, " ",
    h("button", { type: "button", on: { click: () => reviewRecovery(review, run, mode.value) } }, "Review recovery plan")), review);
  const pending = sessionStorage.getItem(pendingKey(run.id));
  if (pending) showKept(review, pendingKey(run.id), Api.recoverPath(run.id), JSON.parse(pending),
    "A recovery request from this tab may not have been answered.", "recovery");
}

async function reviewRecovery(box, run, mode) {
  let plan;
  try { plan = await Api.recoverPlan(run.id, mode); } catch (e) { put(box, h("p", { class: "error" }, e.message)); return; }
  const checks = plan.eligible.map((c) => h("input", { type: "checkbox", checked: true, value: c.cell_id, "aria-label": "recover cell " + c.cell_id }));
  const ack = h("input", { type: "checkbox", id: "ack" });
  const problem = h("p", { class: "error", role: "alert" });
  const start = h("button", { type: "button", disabled: !plan.eligible.length, on: { click: () => {
    const cells = checks.filter((c) => c.checked).map((c) => c.value);
    if (!cells.length) { problem.textContent = "Select at least one cell."; return; }
    if (plan.requires_acknowledgement && !ack.checked) { problem.textContent = "Acknowledge the new attempts first."; return; }
    const request = { plan: Object.assign({}, plan, { selected_cells: cells }), acknowledge_new_attempt: ack.checked,
      idempotency_key: "dashboard-" + crypto.randomUUID() };
    sendKept(box, pendingKey(run.id), Api.recoverPath(run.id), request, "recovery");
  } } }, "Start recovery run");
  put(box, h("p", {}, plan.note), h("p", {}, plan.eligible.length + " eligible cell(s); excluded: " +
      (Object.entries(plan.excluded_counts).map(([r, n]) => r + " " + n).join(", ") || "none") +
      "; the parent's known cost so far " + fmt.usd(plan.parent_snapshot.known_cost_usd)),
    table(["recover", "cell", "case", "target", "state"], plan.eligible.map((c, i) =>
      h("tr", {}, h("td", {}, checks[i]), h("td", {}, c.cell_id), h("td", {}, c.case_id), h("td", {}, c.target_id), h("td", {}, c.state))),
    { empty: "No cell is eligible.", label: "eligible cells" }),
    plan.requires_acknowledgement ? h("p", {}, ack, h("label", { for: "ack" }, " I acknowledge new attempts of these cells (extra cost)")) : null,
    problem, start);
}
