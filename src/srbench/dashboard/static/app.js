// sr-bench Dashboard: one page, hash routes, read-only views over the service (through /api).
// Every value is put into the page as text (never as HTML). Polling is read-only and resumes by
// itself after a network loss; nothing here starts, restarts or changes a run.
"use strict";

const POLL_MS = 3000;
const TERMINAL = ["completed", "failed", "cancelled", "interrupted"];
let timer = null;

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "on") { for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn); }
    else if (v !== null && v !== undefined && v !== false) el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c !== null && c !== undefined) el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

const fmt = {
  num: (v, d = 3) => (v === null || v === undefined ? "unknown" : Number(v).toFixed(d)),
  pct: (v) => (v === null || v === undefined ? "unknown" : Number(v).toFixed(1) + "%"),
  usd: (v) => (v === null || v === undefined ? "unknown" : Number(v).toFixed(5)),
  time: (t) => (t ? new Date(t * 1000).toLocaleString() : ""),
  ci: (c) => (c ? "[" + fmt.num(c[0]) + ", " + fmt.num(c[1]) + "]" : "unknown"),
  tokens: (t) => (t ? [t.input, t.cached_input, t.cache_write, t.output].join("/") : "unknown"),
};

async function api(path, options) {
  const init = Object.assign({ credentials: "same-origin" }, options || {});
  if (init.method === "POST") {
    init.headers = { "Content-Type": "application/json", "X-SR-Bench-Dashboard": "1" };
  }
  let resp;
  try {
    resp = await fetch("/api" + path, init);
  } catch (e) {
    connection(false);
    throw new Error("the Dashboard cannot be reached (retrying)");
  }
  connection(true);
  if (resp.status === 401) { location.href = "/login"; throw new Error("signed out"); }
  const data = await resp.json().catch(() => null);
  if (!resp.ok) {
    const err = new Error((data && data.error && data.error.message) || "HTTP " + resp.status);
    err.status = resp.status;
    throw err;
  }
  return data;
}

function connection(ok) {
  const el = document.getElementById("conn");
  el.textContent = ok ? "updated " + new Date().toLocaleTimeString() : "connection lost — retrying";
  el.className = ok ? "conn" : "conn lost";
}

function route() {
  const [path, query] = location.hash.replace(/^#/, "").split("?");
  return { parts: path.split("/").filter(Boolean), q: new URLSearchParams(query || "") };
}

function go(parts, q) {
  const qs = q && q.toString();
  location.hash = "#/" + parts.map(encodeURIComponent).join("/") + (qs ? "?" + qs : "");
}

function poll(fn) {
  clearTimeout(timer);
  const tick = async () => {
    try { await fn(); } catch (e) { /* shown by api(); the next tick retries */ }
    timer = setTimeout(tick, POLL_MS);
  };
  tick();
}

function put(el, ...nodes) {
  el.replaceChildren(...nodes.flat().filter((n) => n !== null && n !== undefined));
}

function show(...nodes) {
  const view = document.getElementById("view");
  put(view, ...nodes);
  return view;
}

function table(head, rows) {
  return h("table", {}, h("thead", {}, h("tr", {}, head.map((c) => h("th", {}, c)))), h("tbody", {}, rows));
}

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
  const tabs = h("div", { class: "tabs" }, ["results", "calls", "events"].map((t) =>
    h("button", { class: t === tab ? "active" : null, on: { click: () => { q.set("tab", t); q.delete("offset"); go(["run", id], q); } } }, t)));
  const recovery = h("div", { id: "recovery" });
  show(h("p", {}, h("a", { href: "#/runs" }, "← Runs")), head, summary, recovery, tabs, content,
    h("p", { class: "muted" }, "Questions, Evidence and Recipe tabs are not built yet."));
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
  else eventsView(content, id).catch((e) => put(content, h("p", { class: "error" }, e.message)));
}

// -- Recovery (UI-8, REC-1..4) --------------------------------------------------------------------
// The pending request is kept in this tab (sessionStorage) before it is sent, so that a lost response
// is re-sent with the same idempotency key and binds the same child run, never a second one.
const pendingKey = (runId) => "srbench.recovery." + runId;

function recoveryView(box, run) {
  const mode = h("select", {}, h("option", { value: "undispatched" }, "undispatched — cells that never sent a call"),
    h("option", { value: "failed" }, "failed — new attempts of known-failed cells (extra cost)"));
  const review = h("div");
  put(box, h("h3", {}, "Recovery"), h("p", {}, mode, " ",
    h("button", { on: { click: () => reviewRecovery(review, run, mode.value) } }, "Review recovery plan")), review);
  const pending = sessionStorage.getItem(pendingKey(run.id));
  if (pending) showPending(review, run, JSON.parse(pending), "A recovery request from this tab may not have been answered.");
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
    sessionStorage.setItem(pendingKey(run.id), JSON.stringify(request));
    sendRecovery(box, run, request);
  } } }, "Start recovery run");
  put(box, h("p", {}, plan.note), h("p", {}, plan.eligible.length + " eligible cell(s); excluded: " +
      (Object.entries(plan.excluded_counts).map(([r, n]) => r + " " + n).join(", ") || "none") +
      "; the parent's known cost so far " + fmt.usd(plan.parent_snapshot.known_cost_usd) + " USD"),
    plan.eligible.length ? table(["", "cell", "case", "target", "state"], plan.eligible.map((c, i) =>
      h("tr", {}, h("td", {}, checks[i]), h("td", {}, c.cell_id), h("td", {}, c.case_id), h("td", {}, c.target_id), h("td", {}, c.state)))) : null,
    plan.requires_acknowledgement ? h("p", {}, ack, h("label", { for: "ack" }, " I acknowledge new attempts of these cells (extra cost)")) : null,
    start);
}

async function sendRecovery(box, run, request) {
  await sendKept(box, pendingKey(run.id), "/runs/" + encodeURIComponent(run.id) + "/recover", request, "recovery");
}

function showPending(box, run, request, why) {
  showKept(box, pendingKey(run.id), "/runs/" + encodeURIComponent(run.id) + "/recover", request, why, "recovery");
}

// A request that starts paid work: kept in the tab (sessionStorage) before it is sent; an answer
// that never arrived is re-sent with the same idempotency key, which binds the same run.
async function sendKept(box, storageKey, path, request, what) {
  try {
    const out = await api(path, { method: "POST", body: JSON.stringify(request) });
    sessionStorage.removeItem(storageKey);
    go(["run", out.run.id]);
  } catch (e) {
    if (e.status && e.status < 500) {          // answered and refused: re-sending would not change that
      sessionStorage.removeItem(storageKey);
      put(box, h("p", { class: "error" }, "The service refused the " + what + ": " + e.message));
    } else {
      showKept(box, storageKey, path, request, "The " + what + " request got no clear answer: " + e.message, what);
    }
  }
}

function showKept(box, storageKey, path, request, why, what) {
  put(box, h("p", { class: "error" }, why), h("p", {}, "Re-sending repeats the same request with the idempotency key " +
      request.idempotency_key + ": it binds the same run, never a second one."),
    h("button", { on: { click: () => sendKept(box, storageKey, path, request, what) } }, "Re-send the same request"),
    h("button", { on: { click: () => { sessionStorage.removeItem(storageKey); put(box); } } }, "Forget it"));
}

// -- Create evaluation (UI-2) ----------------------------------------------------------------------
const LIMIT_FIELDS = [["concurrency", "concurrency per target", 4], ["total_timeout_s", "call timeout s", 180],
  ["idle_timeout_s", "stream idle timeout s", 30], ["case_timeout_s", "task time limit s", 600],
  ["max_run_seconds", "run time limit s", 1800], ["max_output_tokens", "output token cap", 4096],
  ["max_cost_usd", "budget USD (reservation, not a provider cap; empty: none)", 5]];

async function createView(q) {
  clearTimeout(timer);
  const [dsets, regs] = await Promise.all([api("/datasets?limit=100"), api("/targets")]);
  const profile = q.get("profile") || "quick";
  const datasets = dsets.datasets.filter((d) => d.profile === profile);
  const preset = q.get("dataset");
  const dsChecks = datasets.map((d) => h("input", { type: "checkbox", value: d.id, checked: d.id === preset }));
  const all = h("input", { type: "checkbox", on: { change: (e) => dsChecks.forEach((c, i) => {
    c.checked = e.target.checked && datasets[i].benchmarks.length === 1; }) } });
  const tChecks = regs.targets.map((t) => h("input", { type: "checkbox", value: t.id }));
  const name = h("input", { value: "dashboard-" + profile });
  const mode = h("select", {}, h("option", { value: "live" }, "live"), h("option", { value: "preview" }, "preview (route only, no score)"));
  const session = h("input", { placeholder: "optional" });
  const conversation = h("input", { placeholder: "optional" });
  const policy = h("select", {}, h("option", { value: "require_priced" }, "require_priced"),
    h("option", { value: "capability_only" }, "capability_only (never claims savings)"));
  const temperature = h("input", { type: "number", step: "0.1", min: "0", value: "0" });
  const maxTokens = h("input", { type: "number", min: "1", placeholder: "model default" });
  const limits = LIMIT_FIELDS.map(([k, label, v]) => [k, h("label", {}, label, h("input", { type: "number", min: "0", step: "any", value: v }))]);
  const review = h("div", { id: "review" });
  const profiles = ["smoke", "quick", "standard"].map((p) => h("label", {}, h("input", { type: "radio", name: "profile", checked: p === profile,
    on: { change: () => { q.set("profile", p); q.delete("dataset"); go(["create"], q); } } }), " " + p + (p === "standard" ? " (holdout)" : p === "quick" ? " (dev)" : "")));
  show(h("h2", {}, "Create evaluation"), h("div", { class: "filters" }, profiles),
    h("h3", {}, "Prepared benchmarks (" + profile + ")"),
    datasets.length ? h("p", {}, h("label", {}, all, " Select all benchmarks")) : h("p", { class: "muted" }, "No dataset of this profile is prepared: use `sr-bench dataset prepare`."),
    table(["", "dataset", "benchmarks", "tasks", "seed", "split"], datasets.map((d, i) => h("tr", {}, h("td", {}, dsChecks[i]),
      h("td", {}, d.name), h("td", {}, d.benchmarks.join(", ")), h("td", {}, d.case_count), h("td", {}, d.seed), h("td", {}, d.split)))),
    h("h3", {}, "Targets"),
    table(["", "target", "kind", "model", "pinned request parameters (override the defaults)"], regs.targets.map((t, i) => h("tr", {},
      h("td", {}, tChecks[i]), h("td", {}, t.id), h("td", {}, t.kind), h("td", {}, t.model), h("td", {}, JSON.stringify(t.request_params || {}))))),
    h("h3", {}, "Run"),
    h("div", { class: "filters" }, h("label", {}, "name", name), h("label", {}, "mode", mode), h("label", {}, "cost policy", policy),
      h("label", {}, "preview session id", session), h("label", {}, "preview conversation id", conversation)),
    h("div", { class: "filters" }, h("label", {}, "temperature", temperature), h("label", {}, "max output tokens", maxTokens), limits.map(([, el]) => el)),
    h("button", { on: { click: () => reviewPlan() } }, "Review plan"), review);

  async function reviewPlan() {
    const chosen = datasets.filter((d, i) => dsChecks[i].checked);
    const ids = tChecks.filter((c) => c.checked).map((c) => ({ id: c.value }));
    if (!chosen.length || !ids.length) { put(review, h("p", { class: "error" }, "Choose at least one benchmark and one target.")); return; }
    try {
      const dataset = chosen.length === 1 ? chosen[0]       // one source used whole keeps its identity
        : await api("/datasets/combine", { method: "POST", body: JSON.stringify({ manifests: chosen }) });
      const sampling = { temperature: Number(temperature.value) };
      if (maxTokens.value) sampling.max_tokens = Number(maxTokens.value);
      const lim = {};
      for (const [k, el] of limits) {
        const v = el.querySelector("input").value;
        if (v !== "") lim[k] = Number(v); else if (k === "max_cost_usd") lim[k] = null;
      }
      const manifest = { version: "sr-bench-1.0", name: name.value, mode: mode.value, profile, seed: dataset.seed,
        cost_policy: policy.value, dataset: { path: dataset.path, sha256: dataset.sha256 }, targets: ids, sampling, limits: lim };
      if (mode.value === "preview" && (session.value || conversation.value)) {
        manifest.preview_context = { session_id: session.value || null, conversation_id: conversation.value || null };
      }
      const out = await api("/plans", { method: "POST", body: JSON.stringify({ manifest }) });
      showPlan(review, out.plan);
    } catch (e) { put(review, h("p", { class: "error" }, e.message)); }
  }
}

function showPlan(box, plan) {
  const storageKey = "srbench.launch." + plan.plan_sha256;
  const launch = h("button", { on: { click: () => {
    const request = { plan, idempotency_key: "dashboard-" + crypto.randomUUID() };
    sessionStorage.setItem(storageKey, JSON.stringify(request));
    sendKept(box, storageKey, "/runs", request, "launch");
  } } }, "Launch run (" + plan.total + " model calls planned)");
  put(box, h("h3", {}, "Frozen plan " + plan.plan_sha256.slice(0, 16) + "…"),
    h("p", {}, plan.mode + " · " + plan.profile + " · dataset " + plan.dataset.id + " (" + plan.dataset.case_count + " tasks, " +
      plan.dataset.split + ") · " + plan.total + " cells · cost policy " + plan.cost_policy),
    table(["target", "kind", "model", "effective request parameters"], plan.targets.map((pt) => h("tr", {}, h("td", {}, pt.target.id),
      h("td", {}, pt.target.kind), h("td", {}, pt.target.model), h("td", {}, JSON.stringify(pt.effective_params))))),
    h("p", {}, "limits: " + JSON.stringify(plan.limits)),
    (plan.notices || []).length ? h("ul", {}, plan.notices.map((n) => h("li", {}, n))) : null,
    h("p", { class: "muted" }, "Nothing has been sent to a model yet. Launching starts paid calls."), launch);
  const kept = sessionStorage.getItem(storageKey);
  if (kept) showKept(box, storageKey, "/runs", JSON.parse(kept), "A launch of this plan from this tab may not have been answered.", "launch");
}

function reportView(rep) {
  const rows = rep.summary.targets.map((t) => h("tr", {},
    h("td", {}, t.target_id + " (" + t.kind + ")"), h("td", {}, (t.correct ?? "?") + " / " + t.total),
    h("td", {}, fmt.num(t.accuracy) + " " + fmt.ci(t.accuracy_ci95)), h("td", {}, fmt.usd(t.cost_usd)),
    h("td", {}, fmt.tokens(t.tokens)), h("td", {}, fmt.num(t.latency_p50_s) + " / " + fmt.num(t.latency_p95_s)),
    h("td", {}, fmt.num(t.ttft_p50_s))));
  return h("div", {},
    h("p", {}, "Report (all " + rep.summary.planned_cells + " planned cells, whatever the pages below show) · wall time " +
      fmt.num(rep.summary.wall_time_s, 1) + " s · total spend " + fmt.usd(rep.summary.total_spend_usd) + " USD"),
    table(["target", "correct / planned", "accuracy [95% CI]", "cost USD", "tokens in/cached/write/out", "latency p50/p95 s", "TTFT p50 s"], rows),
    h("details", {}, h("summary", {}, "Limitations and provenance"),
      h("ul", {}, (rep.limitations || []).map((l) => h("li", {}, l))), h("pre", {}, JSON.stringify(rep.provenance, null, 2))));
}

async function pagedView(box, id, q, what, head, cells, onOpen) {
  const offset = Number(q.get("offset") || 0);
  let data;
  try { data = await api("/runs/" + encodeURIComponent(id) + "/" + what + "?offset=" + offset + "&limit=100"); }
  catch (e) { put(box, h("p", { class: "error" }, e.message)); return; }
  const items = data[what];
  const rows = items.map((item) => {
    const row = h("tr", { class: onOpen ? "link" : null }, cells(item).map((v) => h("td", {}, v)));
    if (onOpen) row.addEventListener("click", () => onOpen(item, row));
    return row;
  });
  const nav = (label, to) => h("button", { disabled: to < 0 || to >= data.total, on: { click: () => { q.set("offset", to); go(["run", id], q); } } }, label);
  put(box, h("p", { class: "muted" }, (data.total ? offset + 1 : 0) + "–" + (offset + items.length) + " of " + data.total),
    nav("← previous 100", offset - 100), nav("next 100 →", offset + 100), table(head, rows));
}

async function callDetail(id, call, row) {
  const next = row.nextElementSibling;
  if (next && next.classList.contains("detail")) { next.remove(); return; }
  const cell = h("td", { colspan: 8 }, "loading…");
  row.after(h("tr", { class: "detail" }, cell));
  try {
    const full = await api("/runs/" + encodeURIComponent(id) + "/calls/" + encodeURIComponent(call.cell_id));
    put(cell, h("pre", {}, JSON.stringify(full, null, 2)));
  } catch (e) { put(cell, h("span", { class: "error" }, e.message)); }
}

async function eventsView(box, id) {
  const all = [];
  let after = 0;
  for (let i = 0; i < 200; i++) {
    const page = (await api("/runs/" + encodeURIComponent(id) + "/events?after=" + after)).events;
    all.push(...page);
    if (page.length < 100) break;
    after = page[page.length - 1].seq;
  }
  let shown = 100;
  const render = () => {
    const slice = all.slice(Math.max(0, all.length - shown)).reverse();
    put(box, h("p", { class: "muted" }, "latest " + slice.length + " of " + all.length + " events"),
      shown < all.length ? h("button", { on: { click: () => { shown += 100; render(); } } }, "load older") : null,
      table(["#", "time", "type", "data"], slice.map((e) => h("tr", {}, h("td", {}, e.seq), h("td", {}, fmt.time(e.ts)),
        h("td", {}, e.type), h("td", {}, JSON.stringify(e.data))))));
  };
  render();
}

// -- Compare iterations (UI-6) -------------------------------------------------------------------
async function compareView(q) {
  clearTimeout(timer);
  const runs = (await api("/runs")).runs.filter((r) => r.mode === "live" && ["completed", "failed"].includes(r.status))
    .sort((a, b) => a.created_at - b.created_at);
  const baseline = q.get("baseline") || "";
  const chosen = new Set((q.get("candidates") || "").split(",").filter(Boolean));
  const pick = h("select", { on: { change: (e) => { q.set("baseline", e.target.value); go(["compare"], q); } } },
    h("option", { value: "" }, "— baseline run (with a single model) —"),
    runs.filter((r) => r.target_info.some((t) => t.kind === "single")).map((r) =>
      h("option", { value: r.id, selected: r.id === baseline }, r.name + " · " + r.id)));
  const boxes = runs.filter((r) => r.id !== baseline).map((r) => h("label", { class: "muted" },
    h("input", { type: "checkbox", checked: chosen.has(r.id), on: { change: (e) => {
      if (e.target.checked) chosen.add(r.id); else chosen.delete(r.id);
      q.set("candidates", [...chosen].join(",")); go(["compare"], q);
    } } }), " " + r.name + " · " + r.id + " · " + fmt.time(r.created_at), h("br")));
  const out = h("div");
  show(h("h2", {}, "Compare iterations"), h("p", {}, pick), h("div", {}, boxes), out);
  if (!baseline || !chosen.size) { out.append(h("p", { class: "muted" }, "Pick a baseline and one or more candidates.")); return; }
  const lines = [];
  const rows = [];
  for (const cid of runs.map((r) => r.id).filter((r) => chosen.has(r))) {
    let cmp;
    try {
      cmp = (await api("/comparisons", { method: "POST", body: JSON.stringify({ baseline_run_id: baseline, candidate_run_id: cid }) })).comparison;
    } catch (e) { rows.push(h("tr", {}, h("td", {}, cid), h("td", { colspan: 9, class: "error" }, e.message))); continue; }
    for (const c of cmp.candidates) {
      const s = c.savings;
      const line = { candidate_run: cid, target: c.target_id, kind: c.kind, quality: c.quality, baseline: cmp.baseline.target_id,
        delta: c.delta, ci_low: c.interval.ci[0], ci_high: c.interval.ci[1], claim: c.claim, label: cmp.evidence.label,
        saving_principal_pct: s.principal.saving_pct, saving_total_pct: s.total.saving_pct,
        saving_cache_neutral_pct: s.cache_neutral.saving_pct, latency_p50_s: c.operations.candidate.latency_p50_s };
      lines.push(line);
      rows.push(h("tr", {}, h("td", {}, cid), h("td", {}, c.target_id + " (" + c.kind + ")"), h("td", {}, fmt.num(c.quality)),
        h("td", {}, (c.delta >= 0 ? "+" : "") + fmt.num(c.delta) + " " + fmt.ci(c.interval.ci)),
        h("td", { class: "claim-" + c.claim }, c.claim), h("td", {}, c.wins + "/" + c.losses + "/" + c.ties),
        h("td", {}, fmt.pct(s.principal.saving_pct)), h("td", {}, fmt.pct(s.total.saving_pct)),
        h("td", {}, fmt.pct(s.cache_neutral.saving_pct)), h("td", {}, fmt.num(c.operations.candidate.latency_p50_s))));
    }
  }
  const download = (name, type, text) => {
    const a = h("a", { href: URL.createObjectURL(new Blob([text], { type })), download: name });
    document.body.append(a); a.click(); a.remove();
  };
  const csv = () => {
    const keys = Object.keys(lines[0] || {});
    const cell = (v) => (v === null || v === undefined ? "" : /[",\n]/.test(String(v)) ? '"' + String(v).replace(/"/g, '""') + '"' : String(v));
    return [keys.join(","), ...lines.map((l) => keys.map((k) => cell(l[k])).join(","))].join("\n") + "\n";
  };
  out.append(table(["candidate run", "target", "quality", "Δ [95% Hoeffding]", "claim", "W/L/T", "saving", "saving total",
    "saving cache-neutral", "latency p50 s"], rows),
    h("p", { class: "muted" }, "\"improvement\" only when the whole interval is above zero; savings need complete metering. " +
      "Compared on the same cases against the strongest single model of the baseline run."),
    h("button", { disabled: !lines.length, on: { click: () => download("comparison.csv", "text/csv", csv()) } }, "Export CSV"),
    h("button", { disabled: !lines.length, on: { click: () => download("comparison.json", "application/json", JSON.stringify(lines, null, 2)) } }, "Export JSON"));
}

// -- Datasets (UI-3, UI-4) -----------------------------------------------------------------------
async function datasetsView(q) {
  clearTimeout(timer);
  const all = (await api("/datasets?limit=100")).datasets;
  const text = (q.get("q") || "").toLowerCase();
  const list = all.filter((d) => (!q.get("profile") || d.profile === q.get("profile")) &&
    (!text || JSON.stringify([d.name, d.id, d.benchmarks]).toLowerCase().includes(text)));
  const search = h("input", { type: "search", value: q.get("q") || "", on: { change: (e) => { q.set("q", e.target.value); go(["datasets"], q); } } });
  const profile = h("select", { on: { change: (e) => { q.set("profile", e.target.value); go(["datasets"], q); } } },
    ["", "smoke", "quick", "standard"].map((p) => h("option", { value: p, selected: p === (q.get("profile") || "") }, p || "any profile")));
  const totals = {};
  for (const d of all) totals[d.profile] = (totals[d.profile] || 0) + d.case_count;
  show(h("h2", {}, "Datasets"), h("div", { class: "filters" }, h("label", {}, "search", search), h("label", {}, "profile", profile)),
    h("p", { class: "muted" }, "Tasks prepared per profile (a sum over prepared sets that may overlap: not a distinct count " +
      "and not a run's denominator): " + Object.entries(totals).map(([p, n]) => p + " " + n).join(", ")),
    table(["name", "profile", "split", "benchmarks", "tasks"], list.map((d) => h("tr", { class: "link", on: { click: () => go(["dataset", d.id]) } },
      h("td", {}, d.name), h("td", {}, d.profile), h("td", {}, d.split), h("td", {}, (d.benchmarks || []).join(", ")), h("td", {}, d.case_count)))));
}

async function datasetView(id, q) {
  clearTimeout(timer);
  const d = await api("/datasets/" + encodeURIComponent(id));
  const offset = Number(q.get("offset") || 0);
  const params = new URLSearchParams({ offset, limit: 25 });
  if (q.get("benchmark")) params.set("benchmark", q.get("benchmark"));
  if (q.get("q")) params.set("q", q.get("q"));
  const page = await api("/datasets/" + encodeURIComponent(id) + "/cases?" + params);
  const set = (k, v) => { q.set(k, v); q.delete("offset"); go(["dataset", id], q); };
  show(h("p", {}, h("a", { href: "#/datasets" }, "← Datasets")), h("h2", {}, d.name + " (" + d.profile + ", " + d.split + ")"),
    h("p", { class: "muted" }, "Public questions may have been seen by a model; standard (holdout) tasks must not be used for tuning."),
    h("details", {}, h("summary", {}, "Provenance and hashes"), h("pre", {}, JSON.stringify(d, null, 2))),
    h("p", {}, h("button", { on: { click: () => go(["create"], new URLSearchParams({ profile: d.profile, dataset: d.id })) } }, "Evaluate dataset")),
    h("div", { class: "filters" },
      h("label", {}, "benchmark", h("select", { on: { change: (e) => set("benchmark", e.target.value) } },
        ["", ...(d.benchmarks || [])].map((b) => h("option", { value: b, selected: b === (q.get("benchmark") || "") }, b || "all")))),
      h("label", {}, "text", h("input", { type: "search", value: q.get("q") || "", on: { change: (e) => set("q", e.target.value) } }))),
    h("p", { class: "muted" }, (page.total ? offset + 1 : 0) + "–" + (offset + page.cases.length) + " of " + page.total + " tasks"),
    h("button", { disabled: offset === 0, on: { click: () => { q.set("offset", Math.max(0, offset - 25)); go(["dataset", id], q); } } }, "← previous 25"),
    h("button", { disabled: offset + 25 >= page.total, on: { click: () => { q.set("offset", offset + 25); go(["dataset", id], q); } } }, "next 25 →"),
    table(["task", "benchmark", "subject", "instructions"], page.cases.map((c) => h("tr", {}, h("td", {}, c.id), h("td", {}, c.benchmark),
      h("td", {}, c.metadata.stratum), h("td", {}, h("pre", {}, c.messages.map((m) => m.role + ": " + m.content).join("\n\n")))))));
}

// -- router ----------------------------------------------------------------------------------------
async function render() {
  const { parts, q } = route();
  const page = parts[0] || "runs";
  document.querySelectorAll("[data-nav]").forEach((a) => a.classList.toggle("active", a.dataset.nav === page ||
    (a.dataset.nav === "runs" && page === "run") || (a.dataset.nav === "datasets" && page === "dataset")));
  try {
    if (page === "run" && parts[1]) runView(parts[1], q);
    else if (page === "compare") await compareView(q);
    else if (page === "create") await createView(q);
    else if (page === "datasets") await datasetsView(q);
    else if (page === "dataset" && parts[1]) await datasetView(parts[1], q);
    else runsView(q);
  } catch (e) {
    show(h("p", { class: "error" }, e.message), h("button", { on: { click: render } }, "retry"));
  }
}

window.addEventListener("hashchange", render);
render();
