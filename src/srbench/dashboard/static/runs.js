// sr-bench Dashboard — Runs (UI-1), a run's page and its tabs (UI-5), recovery (UI-8).
// Every value is put into the page as text, never as HTML.
"use strict";

// -- Runs (UI-1) ---------------------------------------------------------------------------------
function runsView(q) {
  const status = h("span", { class: "muted" });
  const body = h("tbody");
  const field = (name, label, el) => {
    el.value = q.get(name) || "";
    el.addEventListener("change", () => { q.set(name, el.value); if (!el.value) q.delete(name); go(["runs"], q); });
    return h("label", {}, label, el);
  };
  const select = (opts) => h("select", {}, h("option", { value: "" }, "any"), opts.map((o) => h("option", { value: o }, o)));
  show(h("h2", {}, "Runs"),
    h("div", { class: "filters" },
      field("name", "name", h("input", { type: "search" })), field("model", "model", h("input", { type: "search" })),
      field("status", "status", select(["queued", "running", ...TERMINAL])),
      field("mode", "mode", select(["live", "preview", "replay"]))),
    status,
    h("table", {}, h("thead", {}, h("tr", {}, ["name", "run", "mode", "status", "targets", "completed / planned",
      "failed", "ambiguous", "updated"].map((c) => h("th", {}, c)))), body));
  poll(async () => {
    const runs = (await api("/runs")).runs.filter((r) =>
      (!q.get("name") || r.name.toLowerCase().includes(q.get("name").toLowerCase())) &&
      (!q.get("model") || r.target_info.some((t) => (t.model || "").toLowerCase().includes(q.get("model").toLowerCase()))) &&
      (!q.get("status") || r.status === q.get("status")) && (!q.get("mode") || r.mode === q.get("mode")));
    put(body, ...runs.map((r) => h("tr", { class: "link", on: { click: () => go(["run", r.id]) } },
      h("td", {}, r.name), h("td", {}, r.id), h("td", {}, r.mode), h("td", {}, r.status),
      h("td", {}, r.target_info.map((t) => t.id + " (" + t.kind + ", " + t.model + ")").join(", ")),
      h("td", {}, r.progress.completed + " / " + r.progress.total), h("td", {}, r.progress.failed),
      h("td", {}, r.progress.ambiguous), h("td", {}, fmt.time(r.updated_at)))));
    status.textContent = runs.length + " run(s) shown; the list is read-only and refreshes every " + POLL_MS / 1000 + " s";
  });
}

// -- Run detail (UI-5) ---------------------------------------------------------------------------
function runView(id, q) {
  const tab = q.get("tab") || "results";
  const head = h("div");
  const summary = h("div");
  const content = h("div");
  const tabs = h("div", { class: "tabs" }, ["results", "questions", "calls", "evidence", "recipe", "events"].map((t) =>
    h("button", { class: t === tab ? "active" : null, on: { click: () => { q.set("tab", t); q.delete("offset"); go(["run", id], q); } } }, t)));
  const recovery = h("div", { id: "recovery" });
  show(h("p", {}, h("a", { href: "#/runs" }, "← Runs")), head, summary, recovery, tabs, content);
  let reported = null;
  let recoveryShown = false;
  poll(async () => {
    const run = await api("/runs/" + encodeURIComponent(id));
    const p = run.progress;
    put(head, h("h2", {}, run.name + " — " + run.status),
      h("p", {}, run.id + " · " + run.mode + " · profile " + (run.profile || "?") + " · " + p.completed + " / " +
        p.total + " completed, " + p.failed + " failed, " + p.ambiguous + " ambiguous, " + p.running + " running, " +
        p.pending + " pending"), run.error ? h("p", { class: "error" }, run.error) : null);
    const key = run.status + ":" + run.updated_at;
    if (key !== reported) {
      reported = key;
      put(summary, reportView((await api("/runs/" + encodeURIComponent(id) + "/report")).report));
    }
    if (TERMINAL.includes(run.status)) {
      clearTimeout(timer);
      if (!recoveryShown && run.mode === "live" && run.status !== "completed") { recoveryShown = true; recoveryView(recovery, run); }
    }
  });
  if (tab === "results") pagedView(content, id, q, "results", ["case", "target", "benchmark", "state", "correct", "cost USD", "latency s"],
    (r) => [r.case_id, r.target_id, r.benchmark, r.state, r.correct === null ? "—" : String(r.correct), fmt.usd(r.cost_usd), fmt.num(r.latency_s)]);
  else if (tab === "calls") pagedView(content, id, q, "calls", ["#", "case", "target", "state", "error", "HTTP", "latency s", "model"],
    (c) => [c.seq, c.case_id, c.target_id, c.state, c.error_class || "", c.http_status || "", fmt.num(c.latency_s), c.selected_model || c.response_model || ""],
    (c, row) => callDetail(id, c, row));
  else if (tab === "questions") questionsView(content, id, q);
  else if (tab === "evidence") evidenceView(content, id).catch((e) => put(content, h("p", { class: "error" }, e.message)));
  else if (tab === "recipe") put(content, h("p", {}, "Recipe: unavailable. This version of sr-bench does not capture " +
    "router recipes (UI-7), and a run never borrows a snapshot taken later. Live calls confirm the config hash " +
    "independently: see the Evidence tab."));
  else eventsView(content, id).catch((e) => put(content, h("p", { class: "error" }, e.message)));
}

// -- Recovery (UI-8, REC-1..4) --------------------------------------------------------------------
// The pending request is kept in this tab (sessionStorage) before it is sent, so that a lost response
// is re-sent with the same idempotency key and binds the same child run, never a second one.
const pendingKey = (runId) => "srbench.recovery." + runId;
const recoverPath = (runId) => "/runs/" + encodeURIComponent(runId) + "/recover";

function recoveryView(box, run) {
  const mode = h("select", {}, h("option", { value: "undispatched" }, "undispatched — cells that never sent a call"),
    h("option", { value: "failed" }, "failed — new attempts of known-failed cells (extra cost)"));
  const review = h("div");
  put(box, h("h3", {}, "Recovery"), h("p", {}, mode, " ",
    h("button", { on: { click: () => reviewRecovery(review, run, mode.value) } }, "Review recovery plan")), review);
  const pending = sessionStorage.getItem(pendingKey(run.id));
  if (pending) showKept(review, pendingKey(run.id), recoverPath(run.id), JSON.parse(pending),
    "A recovery request from this tab may not have been answered.", "recovery");
}

async function reviewRecovery(box, run, mode) {
  let plan;
  try {
    plan = await api("/runs/" + encodeURIComponent(run.id) + "/recover-plan", { method: "POST", body: JSON.stringify({ mode }) });
  } catch (e) { put(box, h("p", { class: "error" }, e.message)); return; }
  const checks = plan.eligible.map((c) => h("input", { type: "checkbox", checked: true, value: c.cell_id }));
  const ack = h("input", { type: "checkbox", id: "ack" });
  const start = h("button", { disabled: !plan.eligible.length, on: { click: () => {
    const cells = checks.filter((c) => c.checked).map((c) => c.value);
    if (!cells.length) { alert("Select at least one cell."); return; }
    if (plan.requires_acknowledgement && !ack.checked) { alert("Acknowledge the new attempts first."); return; }
    const request = { plan: Object.assign({}, plan, { selected_cells: cells }), acknowledge_new_attempt: ack.checked,
      idempotency_key: "dashboard-" + crypto.randomUUID() };
    sendKept(box, pendingKey(run.id), recoverPath(run.id), request, "recovery");
  } } }, "Start recovery run");
  put(box, h("p", {}, plan.note), h("p", {}, plan.eligible.length + " eligible cell(s); excluded: " +
      (Object.entries(plan.excluded_counts).map(([r, n]) => r + " " + n).join(", ") || "none") +
      "; the parent's known cost so far " + fmt.usd(plan.parent_snapshot.known_cost_usd) + " USD"),
    plan.eligible.length ? table(["", "cell", "case", "target", "state"], plan.eligible.map((c, i) =>
      h("tr", {}, h("td", {}, checks[i]), h("td", {}, c.cell_id), h("td", {}, c.case_id), h("td", {}, c.target_id), h("td", {}, c.state)))) : null,
    plan.requires_acknowledgement ? h("p", {}, ack, h("label", { for: "ack" }, " I acknowledge new attempts of these cells (extra cost)")) : null,
    start);
}
