// sr-bench Dashboard — a run's report summary and its tabs (UI-5): results, questions, calls,
// evidence, events. Full call content loads on demand; summary figures come from the full report.
// Every value is put into the page as text, never as HTML.
"use strict";

function reportView(rep) {
  const rows = rep.summary.targets.map((t) => h("tr", {},
    h("td", {}, t.target_id + " (" + t.kind + ")"), h("td", {}, (t.correct ?? "?") + " / " + t.total),
    h("td", {}, fmt.num(t.accuracy) + " " + fmt.ci(t.accuracy_ci95)), h("td", {}, fmt.num(t.macro_accuracy)),
    h("td", {}, fmt.usd(t.cost_usd)),
    h("td", {}, fmt.tokens(t.tokens)), h("td", {}, fmt.num(t.latency_p50_s) + " / " + fmt.num(t.latency_p95_s)),
    h("td", {}, fmt.num(t.ttft_p50_s))));
  const stop = rep.early_stop;
  const paired = rep.paired;
  return h("div", {},
    h("p", {}, "Report (all " + rep.summary.planned_cells + " planned cells, whatever the pages below show) · wall time " +
      fmt.num(rep.summary.wall_time_s, 1) + " s · total spend " + fmt.usd(rep.summary.total_spend_usd) + " USD"),
    stop ? h("p", { class: "early-stop" }, "Stopped early (" + stop.reason + ": " + stop.summary + ") after " + stop.decided_at_cases +
      " of " + stop.planned_cases + " cases: " + stop.cells_not_sent + " cells never sent, estimated " + fmt.usd(stop.estimated_saving_usd) +
      " USD not spent (an estimate, not a bill).") : null,
    table(["target", "correct / planned", "micro accuracy [95% CI]", "macro accuracy", "cost USD", "tokens in/cached/write/out", "latency p50/p95 s", "TTFT p50 s"], rows),
    h("p", { class: "muted" }, "micro = correct / all planned cells pooled; macro = weighted mean of the per-benchmark accuracies (REP-4 weights)."),
    benchmarkView(rep),
    paired ? pairedView(paired) : null,
    h("details", {}, h("summary", {}, "Limitations and provenance"),
      h("ul", {}, (rep.limitations || []).map((l) => h("li", {}, l))), h("pre", {}, JSON.stringify(rep.provenance, null, 2))));
}

// Per benchmark: sr-bench's own rule beside the benchmark's published rule on the same answers.
function benchmarkView(rep) {
  const rows = (rep.benchmarks || []).filter((b) => "accuracy" in b).map((b) => {
    const p = b.published || {};
    return h("tr", {}, h("td", {}, b.benchmark), h("td", {}, b.target_id),
      h("td", {}, fmt.num(b.accuracy) + " " + fmt.ci(b.accuracy_ci95)), h("td", {}, p.rule || "unavailable"),
      h("td", {}, p.score === null || p.score === undefined ? "n/a" : (p.metric || "accuracy") + " " + fmt.num(p.score)),
      h("td", {}, p.graded_differently === null || p.graded_differently === undefined ? "-" : p.graded_differently + " of " + p.n));
  });
  return table(["benchmark", "target", "sr-bench accuracy [95% CI]", "published rule", "published (diagnostic)", "graded differently"], rows);
}

// The claim columns of one paired candidate: Δ with the claim rule's interval, the other rule's beside it.
function claimCells(c) {
  const other = c.claim_rule === "betting" ? "hoeffding" : "betting";
  const oi = (c.intervals || {})[other];
  return [h("td", {}, (c.delta >= 0 ? "+" : "") + fmt.num(c.delta) + " " + fmt.ci(c.interval.ci) + " " + c.claim_rule),
    h("td", { class: "muted" }, oi ? fmt.ci(oi.ci) + " " + other + (oi.valid ? "" : " (not valid after the stop)") : "—"),
    h("td", { class: "claim-" + c.claim }, c.claim + " (" + c.claim_rule + ")")];
}

function plannedLine(c) {
  const p = c.planning;
  if (!p) return null;
  const at = p.at_observed_ties;
  const mde = at.detectable_effect === null ? "no effect up to 1 − tie rate" : fmt.num(100 * at.detectable_effect, 1) + " pts";
  return h("p", { class: "muted" }, c.target_id + ": inconclusive — at the observed tie rate " + fmt.num(100 * p.observed_tie_rate, 0) +
    "% the " + p.rule + " rule detects " + mde + " with " + fmt.num(100 * at.power, 0) + "% power at the planned sizes; +" +
    fmt.num(100 * at.effect, 1) + " pts needs " + (at.needed_for_effect ? at.needed_for_effect.total + " cases" : "more than 10⁴× the cases") + ".");
}

function pairedView(paired) {
  if (!paired.available) return h("p", { class: "muted" }, "Paired comparison within the run: not available (" + paired.reason + ").");
  return h("div", {}, h("h4", {}, "Router vs the strongest single model of this run (" + paired.baseline.target_id + ", " +
      paired.cases + " of " + paired.planned_cases + " cases; claims by " + paired.claim_rule + ")"),
    table(["candidate", "Δ [95%] (claim rule)", "other rule", "claim", "W/L/T"], paired.candidates.map((c) =>
      h("tr", {}, h("td", {}, c.target_id), ...claimCells(c), h("td", {}, c.wins + "/" + c.losses + "/" + c.ties)))),
    paired.candidates.map(plannedLine));
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
  put(box, pager(["run", id], q, offset, 100, items.length, data.total), table(head, rows));
}

// Questions: the cells of one page (100) grouped by task, every target side by side.
async function questionsView(box, id, q) {
  const offset = Number(q.get("offset") || 0);
  let data;
  try { data = await api("/runs/" + encodeURIComponent(id) + "/results?offset=" + offset + "&limit=100"); }
  catch (e) { put(box, h("p", { class: "error" }, e.message)); return; }
  const targets = [...new Set(data.results.map((r) => r.target_id))];
  const byCase = new Map();
  for (const r of data.results) {
    if (!byCase.has(r.case_id)) byCase.set(r.case_id, { benchmark: r.benchmark, stratum: r.stratum, cells: {} });
    byCase.get(r.case_id).cells[r.target_id] = r;
  }
  const mark = (r) => !r ? "" : r.state !== "completed" ? r.state : r.correct === true ? "✓ correct" : r.correct === false ? "✗ wrong" : "not graded";
  const rows = [...byCase.entries()].map(([caseId, c]) => {
    const row = h("tr", { class: "link" }, h("td", {}, caseId), h("td", {}, c.benchmark), h("td", {}, c.stratum || ""),
      targets.map((t) => h("td", {}, mark(c.cells[t]), c.cells[t] && c.cells[t].selected_model ? h("div", { class: "muted" }, "→ " + c.cells[t].selected_model) : null)));
    row.addEventListener("click", () => answersDetail(id, row, targets.map((t) => c.cells[t]).filter(Boolean), targets.length + 3));
    return row;
  });
  put(box, pager(["run", id], q, offset, 100, data.results.length, data.total, "cells, grouped by task; click a task for every target's visible answer"),
    table(["task", "benchmark", "subject", ...targets], rows));
}

async function answersDetail(id, row, cells, span) {
  const next = row.nextElementSibling;
  if (next && next.classList.contains("detail")) { next.remove(); return; }
  const cell = h("td", { colspan: span }, "loading…");
  row.after(h("tr", { class: "detail" }, cell));
  try {
    const calls = await Promise.all(cells.map((c) => api("/runs/" + encodeURIComponent(id) + "/calls/" + encodeURIComponent(c.cell_id))));
    put(cell, calls.map((c) => h("div", {}, h("strong", {}, c.target_id + " · " + c.state + (c.error_class ? " · " + c.error_class : "")),
      h("pre", {}, c.record ? (c.record.text ?? "(no visible answer)") : "(no call recorded)"))));
  } catch (e) { put(cell, h("span", { class: "error" }, e.message)); }
}

// Evidence: what the figures rest on — provenance, corrections, budget, lineage, config-hash checks.
async function evidenceView(box, id) {
  const run = await api("/runs/" + encodeURIComponent(id));
  const rep = (await api("/runs/" + encodeURIComponent(id) + "/report")).report;
  const checks = (await allEvents(id)).filter((e) => ["config_hash_checked", "dispatch_stopped", "budget_refused"].includes(e.type));
  const block = (title, value, open = true) => h("details", { open }, h("summary", {}, title),
    typeof value === "string" ? h("p", {}, value) : h("pre", {}, JSON.stringify(value, null, 2)));
  put(box, block("Provenance (plan, dataset, graders, hashes)", rep.provenance, false),
    block("Usage correction (reconcile-usage)", rep.accounting_correction || "none"),
    block("Price correction (reprice)", rep.price_correction || "none"),
    block("Budget (a reservation and actual-cost stop, not a provider cap)", run.budget || "no budget"),
    block("Lineage", run.lineage),
    block("Config-hash checks, dispatch stops and budget refusals (" + checks.length + ")", checks));
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
  const all = await allEvents(id);
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
