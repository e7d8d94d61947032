// sr-bench Dashboard — a run's report summary and its tabs (UI-5): results, questions, calls (100 a
// page, refreshed in place while the run is live: only rows that changed are replaced), evidence,
// recipe and events. Full call content loads on demand. Every value is put into the page as text.
"use strict";

function reportView(rep) {
  const rows = rep.summary.targets.map((t) => h("tr", {},
    h("th", { scope: "row" }, t.target_id + " (" + t.kind + ")"), h("td", {}, (t.correct ?? "?") + " / " + t.total),
    h("td", {}, fmt.num(t.accuracy) + " " + fmt.ci01(t.accuracy_ci95)),
    h("td", {}, fmt.num(t.accuracy_answered) + " (" + (t.correct ?? "?") + " / " + t.completed + ")"), h("td", {}, fmt.num(t.macro_accuracy)),
    h("td", {}, fmt.usd(Costs.principal(t))), h("td", {}, Costs.roles(t, rep).map((x) => x.role + " " + fmt.usd(x.usd)).join(", ") || "—"),
    h("td", {}, fmt.tokens(t.tokens)), h("td", {}, fmt.num(t.latency_p50_s, 2) + " / " + fmt.num(t.latency_p95_s, 2)),
    h("td", {}, fmt.num(t.ttft_p50_s, 2))));
  const stop = rep.early_stop;
  return h("section", { "aria-labelledby": "report-title" }, h("h2", { id: "report-title" }, "Report"),
    h("p", {}, "All " + rep.summary.planned_cells + " planned cells, whatever the pages below show · wall time " +
      fmt.s(rep.summary.wall_time_s, 1) + " · total spend " + fmt.usd(rep.summary.total_spend_usd) +
      " (principal " + fmt.usd(rep.summary.principal_cost_usd) + ", judge " + (Costs.judged(rep) ? fmt.usd(rep.summary.judge_cost_usd) : "—") + ")"),
    rep.partial ? h("p", { class: "partial" }, h("strong", {}, rep.partial.label), ": micro accuracy is " + rep.partial.accuracy +
      "; the next column is " + rep.partial.accuracy_answered + ".") : null,
    stop ? h("p", { class: "early-stop" }, "Stopped early (" + stop.reason + ": " + stop.summary + ") after " + stop.decided_at_cases +
      " of " + stop.planned_cases + " cases: " + stop.cells_not_sent + " cells never sent, estimated " + fmt.usd(stop.estimated_saving_usd) +
      " not spent (an estimate, not a bill).") : null,
    table(["target", "correct / planned", "micro accuracy [95% Wilson]", "accuracy over answered cells", "macro accuracy", "principal cost, USD",
      "judge / simulator cost, USD", "tokens in / cached / write / out", "latency p50 / p95, s", "TTFT p50, s"], rows, { label: "targets" }),
    h("p", { class: "muted" }, "micro accuracy = correct / all planned cells pooled; macro accuracy (\"quality\" on Compare and in the " +
      "headline) = weighted mean of the per-benchmark accuracies (REP-4 weights renormalised over the benchmarks present). " +
      "They differ when benchmarks differ in size."),
    section("Per benchmark: sr-bench's rule and the published rule", benchmarkView(rep), false),
    section("Limitations (" + (rep.limitations || []).length + ")", h("ul", {}, (rep.limitations || []).map((l) => h("li", {}, l))), false));
}

// A running run's figures so far (GET /runs/{id}/live): the service folds each finished cell's report row
// into per-target counters, so this reads in O(targets) however big the run; the full report follows at its end.
// `progress`: the run view's counts of the same poll (the title line and the routing panel say the same numbers).
function liveView(live, progress) {
  const p = progress || live.progress;
  const rows = live.targets.map((t) => h("tr", {}, h("th", { scope: "row" }, t.target_id + " (" + t.kind + ")"),
    h("td", {}, t.finished + " / " + t.planned), h("td", {}, t.correct + " / " + t.answered),
    h("td", {}, fmt.num(t.accuracy_answered)), h("td", {}, fmt.num(t.accuracy_planned)),
    h("td", {}, t.cost_usd === null ? "at least " + fmt.usd(t.known_cost_usd) + " (a cost is unknown)" : fmt.usd(t.cost_usd)),
    h("td", {}, live.judged ? fmt.usd(t.judge_cost_usd) : "—")));
  return h("section", { "aria-labelledby": "report-title" }, h("h2", { id: "report-title" }, "Figures so far"),
    h("p", {}, live.status + ": " + p.completed + " of " + p.total + " cells answered, " + p.failed + " failed; these figures hold " +
      live.folded + " finished cells (kept up as cells finish). The full report appears when the run has ended."),
    table(["target", "finished / planned", "correct / answered", "accuracy over answered cells", "accuracy over planned cells",
      "principal cost so far, USD", "judge cost so far, USD"], rows, { label: "figures so far" }));
}

// Per benchmark: sr-bench's own rule beside the benchmark's published rule on the same answers.
function benchmarkView(rep) {
  const rows = (rep.benchmarks || []).filter((b) => "accuracy" in b).map((b) => {
    const p = b.published || {};
    return h("tr", {}, h("td", {}, b.benchmark), h("td", {}, b.target_id),
      h("td", {}, fmt.num(b.accuracy) + " " + fmt.ci01(b.accuracy_ci95)), h("td", {}, p.rule || "unavailable"),
      h("td", {}, p.score === null || p.score === undefined ? "n/a" : (p.metric || "accuracy") + " " + fmt.num(p.score)),
      h("td", {}, p.graded_differently === null || p.graded_differently === undefined ? "-" : p.graded_differently + " of " + p.n));
  });
  return table(["benchmark", "target", "sr-bench accuracy [95% Wilson]", "published rule", "published (diagnostic)", "graded differently"],
    rows, { empty: "No benchmark rows (a preview or replay run measures no accuracy).", label: "benchmarks" });
}

// A page of items that refreshes in place: rows are keyed, only a row whose cells changed is replaced
// (an open detail row stays). `fetch(offset)` → {items, total}; `cells(item)` → text or nodes.
function livePage(box, id, q, fetch, head, cells, keyOf, onOpen, noun) {
  let offset = Number(q.get("offset") || 0);
  let rows = new Map();
  let tbody = null, pagerBox = null, built = -1;
  const sigOf = (item) => JSON.stringify(cells(item).map((c) => (c instanceof Node ? c.textContent : c)));
  const rowOf = (item) => {
    const tds = cells(item).map((v, i) => (i === 0 && onOpen ? h("td", {}, h("button", { type: "button", class: "open",
      "aria-expanded": "false", on: { click: (e) => { e.stopPropagation(); toggle(item, e.currentTarget); } } }, v)) : h("td", {}, v)));
    const tr = h("tr", { class: onOpen ? "link" : null }, tds);
    if (onOpen) tr.addEventListener("click", () => toggle(item, tr.querySelector("button.open")));
    return tr;
  };
  function toggle(item, button) {
    const tr = button.closest("tr");
    const open = button.getAttribute("aria-expanded") === "true";
    button.setAttribute("aria-expanded", String(!open));
    onOpen(item, tr, head.length);
  }
  async function refresh() {
    const page = await fetch(offset);
    if (built !== offset || !tbody) {
      built = offset;
      rows = new Map();
      const trs = page.items.map((item) => { const tr = rowOf(item); rows.set(keyOf(item), { tr, sig: sigOf(item) }); return tr; });
      pagerBox = h("div");
      put(pagerBox, pager(["run", id], q, offset, 100, page.items.length, page.total, noun, (to) => { offset = to; refresh(); }));
      const t = table(head, trs, { empty: "Nothing here yet.", label: noun || "rows" });
      tbody = t.querySelector("tbody");
      put(box, pagerBox, t);
      return;
    }
    put(pagerBox, pager(["run", id], q, offset, 100, page.items.length, page.total, noun, (to) => { offset = to; refresh(); }));
    for (const item of page.items) {
      const key = keyOf(item), sig = sigOf(item), was = rows.get(key);
      if (was && was.sig === sig) continue;
      const tr = rowOf(item);
      if (was) was.tr.replaceWith(tr); else tbody.append(tr);
      rows.set(key, { tr, sig });
    }
  }
  return { refresh };
}

function resultsTab(box, id, q) {
  return livePage(box, id, q, (o) => Api.results(id, o), ["case", "target", "benchmark", "state", "correct", "cost, USD", "latency, s"],
    (r) => [r.case_id, r.target_id, r.benchmark, r.state, r.correct === null || r.correct === undefined ? "—" : r.correct ? "correct" : "wrong",
      fmt.usd(r.cost_usd), fmt.num(r.latency_s, 2)], (r) => r.cell_id, null, "cells");
}

function callsTab(box, id, q) {
  return livePage(box, id, q, (o) => Api.calls(id, o), ["#", "case", "target", "role", "state", "error", "HTTP", "latency, s", "model"],
    (c) => [String(c.seq), c.case_id, c.target_id, c.role || "subject", c.state, c.error_class || "", c.http_status ? String(c.http_status) : "",
      fmt.num(c.latency_s, 2), c.selected_model || c.response_model || (c.calls ? c.calls.length + " calls" : "")], Api.callKey,
    (c, row, span) => toggleDetail(row, span, async () => callView(await Api.call(id, Api.callKey(c)))), "calls");
}

// Opens (or closes) the detail row under `row`, filled by `load()`.
async function toggleDetail(row, span, load) {
  const next = row.nextElementSibling;
  if (next && next.classList.contains("detail")) { next.remove(); return; }
  const cell = h("td", { colspan: span }, "loading…");
  row.after(h("tr", { class: "detail" }, cell));
  try { put(cell, await load()); } catch (e) { put(cell, h("span", { class: "error" }, e.message)); }
}

const REAL_RUN = {
  selection_not_resolved: "the router resolved no model", learning_dependent: "the selection depends on learning state",
  decision_plugins: "decision plugins ran", route_not_deterministic: "the route is not a static one",
};

// Questions: the cells of one page (100) grouped by task, every target side by side. A preview run
// shows per task the router's decision, model, reason and provenance, and which selections still
// need a real run (replay cannot reuse a saved answer for them).
function questionsTab(box, id, q, getRun) {
  const offset = () => Number(q.get("offset") || 0);
  async function refresh() {
    const page = await Api.results(id, offset());
    const preview = page.items.some((r) => r.routing);
    const targets = [...new Set(page.items.map((r) => r.target_id))];
    const byCase = new Map();
    for (const r of page.items) {
      if (!byCase.has(r.case_id)) byCase.set(r.case_id, { benchmark: r.benchmark, stratum: r.stratum, cells: {} });
      byCase.get(r.case_id).cells[r.target_id] = r;
    }
    const mark = (r) => !r ? "" : preview ? routeMark(r) : r.state !== "completed" ? r.state : r.correct === true ? "✓ correct" : r.correct === false ? "✗ wrong" : "not graded";
    const rows = [...byCase.entries()].map(([caseId, c]) => {
      const open = h("button", { type: "button", class: "open", "aria-expanded": "false" }, caseId);
      const row = h("tr", { class: "link" }, h("td", {}, open), h("td", {}, c.benchmark), h("td", {}, c.stratum || ""),
        targets.map((t) => h("td", {}, mark(c.cells[t]), !preview && c.cells[t] && c.cells[t].selected_model ? h("div", { class: "muted" }, "→ " + c.cells[t].selected_model) : null)));
      const go_ = (e) => { e.stopPropagation(); open.setAttribute("aria-expanded", String(open.getAttribute("aria-expanded") !== "true"));
        toggleDetail(row, targets.length + 3, () => preview ? routeDetail(targets.map((t) => c.cells[t]).filter(Boolean)) : answersDetail(id, targets.map((t) => c.cells[t]).filter(Boolean))); };
      open.addEventListener("click", go_);
      row.addEventListener("click", (e) => { if (e.target !== open) open.click(); });
      return row;
    });
    const needs = page.items.filter((r) => r.needs_real_run);
    put(box, preview ? h("p", {}, needs.length + " of " + page.items.length + " selections on this page would still need a real run" +
        (needs.length ? " (" + Object.entries(needs.reduce((a, r) => { a[r.needs_real_run] = (a[r.needs_real_run] || 0) + 1; return a; }, {}))
          .map(([k, n]) => (REAL_RUN[k] || k) + ": " + n).join("; ") + ")" : "") + "; the others can be replayed from saved single-model answers " +
        "when a baseline ran the chosen model.") : null,
      pager(["run", id], q, offset(), 100, page.items.length, page.total, "cells, grouped by task; open a task for " +
        (preview ? "the router's decision, reason and provenance" : "every target's visible answer"), () => refresh()),
      table(["task", "benchmark", "subject", ...targets], rows, { empty: "No cells yet.", label: "questions" }));
  }
  return { refresh };
}

function routeMark(r) {
  if (r.state !== "completed") return r.state;
  const x = r.routing || {};
  return h("span", {}, "→ " + (x.selected_model || "no model") + (x.decision ? " · " + x.decision : ""),
    r.needs_real_run ? h("div", { class: "warn" }, "needs a real run: " + (REAL_RUN[r.needs_real_run] || r.needs_real_run)) : null);
}

function routeDetail(cells) {
  return cells.map((r) => {
    const x = r.routing || {};
    return h("div", { class: "route" }, h("h3", {}, r.target_id + " · " + r.state),
      fields({ decision: x.decision, selected_model: x.selected_model, selection_status: x.selection_status,
        selection_reason: x.selection_reason, selection_method: x.selection_method, plugins: x.plugins,
        state_dependent: x.state_dependent, config_hash: x.config_hash,
        real_run: r.needs_real_run ? "needed: " + (REAL_RUN[r.needs_real_run] || r.needs_real_run) : "not needed: a saved answer of " + (x.selected_model || "?") + " can be replayed" }),
      h("h4", {}, "Selection provenance"), fields(x.selection_provenance || null), rawToggle(x, "Raw routing JSON"));
  });
}

async function answersDetail(id, cells) {
  const calls = await Promise.all(cells.map((c) => Api.call(id, c.cell_id)));
  return calls.map((c) => h("div", { class: "answer" }, h("h3", {}, c.target_id + " · " + c.state + (c.error_class ? " · " + c.error_class : "")),
    textBox(c.record ? (c.record.text ?? c.record.final_text ?? "(no visible answer)") : "(no call recorded)")));
}

function eventsTab(box, id) {
  let shown = 100;
  async function refresh() {
    const all = await Api.events(id);
    const render = () => {
      const slice = all.slice(Math.max(0, all.length - shown)).reverse();
      put(box, h("p", { class: "muted" }, "latest " + slice.length + " of " + all.length + " events"),
        shown < all.length ? h("button", { type: "button", on: { click: () => { shown += 100; render(); } } }, "load older") : null,
        table(["#", "time", "kind", "data"], slice.map((e) => h("tr", {}, h("td", {}, e.seq), h("td", {}, fmt.time(e.at)),
          h("td", {}, e.kind), h("td", {}, eventSummary(e.data)))), { label: "events" }));
    };
    render();
  }
  return { refresh };
}

function eventSummary(data) {
  return Object.entries(data || {}).map(([k, v]) => k.replace(/_/g, " ") + ": " +
    (v && typeof v === "object" ? JSON.stringify(v) : typeof v === "string" && v.startsWith("b3:") ? fmt.digest(v) : fmt.auto(v))).join(" · ");
}

const TABS = {
  results: resultsTab, calls: callsTab, questions: questionsTab, events: eventsTab,
  evidence: (box, id) => ({ refresh: () => evidenceView(box, id) }),
  recipe: (box, id, q, getRun) => ({ refresh: () => recipeView(box, id, getRun) }),
};
