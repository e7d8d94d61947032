// sr-bench Dashboard — Diagnose routing (issue 43): for a baseline run (its singles) and a candidate run (its
// routers), the service's stored diagnosis (GET /runs/{candidate}/diagnose?baseline=…, no model called): the
// quality–cost plane with the singles, each router, the oracle ceiling and the cheapest-correct oracle, the
// headline figures, the loss table (regret per benchmark and subject), the routing confusion table and the
// cases the router lost with both answers (opened in place). Export: CSV (the outcome matrix) and JSON.
"use strict";

async function diagnoseView(q) {
  const alive = stopPolling();
  const runs = (await Api.runs()).filter((r) => r.mode === "live" && ["completed", "failed", "stopped_early"].includes(r.status))
    .sort((a, b) => a.created_at - b.created_at);
  const baseline = q.get("baseline") || "", candidate = q.get("candidate") || "";
  const select = (id, label, key, list) => h("p", {}, h("label", { for: id }, label),
    h("select", { id, on: { change: (e) => { q.set(key, e.target.value); go(["diagnose"], q); } } },
      h("option", { value: "" }, "— choose —"),
      list.map((r) => h("option", { value: r.id, selected: r.id === q.get(key) }, r.name + " · " + r.id))));
  const out = h("div", { "aria-live": "polite" });
  if (!alive()) return;
  show(h("h1", {}, "Diagnose routing"),
    h("p", { class: "muted" }, "How much more routing could pay on these questions, and which decisions cost you: from the " +
      "stored runs only (no model is called). Definitions: docs/statistics.md, “Routing diagnostics”."),
    select("diag-baseline", "Baseline run (its single models): ", "baseline", runs.filter((r) => r.targets.some((t) => t.kind === "single"))),
    select("diag-candidate", "Candidate run (its routers): ", "candidate", runs.filter((r) => r.targets.some((t) => t.kind === "mom"))),
    out);
  if (!baseline || !candidate) { put(out, h("p", { class: "muted" }, "Pick a baseline run and a candidate run.")); return; }
  put(out, h("p", { class: "muted" }, "loading…"));
  let d;
  try { d = await Api.diagnose(candidate, baseline); }
  catch (e) { put(out, h("p", { class: "error", role: "alert" }, e.message)); return; }
  if (!alive()) return;
  put(out, diagnoseHeadline(d), planeChart(d), ...d.routers.flatMap((r) => routerSections(d, r)),
    h("button", { type: "button", on: { click: () => download("diagnosis.csv", "text/csv", matrixCsv(d)) } }, "Export CSV (outcome matrix)"),
    h("button", { type: "button", on: { click: () => download("diagnosis.json", "application/json", JSON.stringify(d, null, 2)) } }, "Export JSON"));
}

function diagnoseHeadline(d) {
  const o = d.oracle;
  const items = [h("li", {}, "Oracle ceiling (each case to a single that got it right): ", h("strong", {}, fmt.num(o.quality.estimate)),
    " " + fmt.ci01(o.quality.ci) + " (95% Hoeffding); " + o.cases_no_single_correct + " of " + d.cases + " cases no single gets. " +
    "Cheapest-correct oracle: the same quality for " + fmt.usd(o.cheapest_cost_usd) + (o.cheapest_cost_reason ? " (" + o.cheapest_cost_reason + ")" : "") +
    ". Best single " + o.best_single + ": " + fmt.num(o.best_single_quality) + " for " + fmt.usd(o.best_single_cost_usd) + ".")];
  for (const r of d.routers) {
    const hr = r.headroom, op = r.optimality;
    const away = Object.entries(op.elsewhere_models).map(([m, n]) => m + " ×" + n).join(", ") || "none";
    items.push(h("li", {}, h("strong", {}, r.target_id), ": " + fmt.num(r.quality) + " for " + fmt.usd(r.cost_usd) + "; captures ",
      h("strong", {}, fmt.pct(hr.captured_pct)), (hr.captured_ci_pct ? " [" + fmt.pct(hr.captured_ci_pct[0]) + ", " + fmt.pct(hr.captured_ci_pct[1]) + "]" : "") +
      " of the available headroom (" + fmt.signed(hr.available.estimate) + " " + fmt.ci(hr.available.ci) + ")" + (hr.reason ? " — " + hr.reason : "") +
      "; gap to the oracle " + fmt.num(hr.gap_to_oracle.estimate) + " " + fmt.ci(hr.gap_to_oracle.ci) + ". Optimality (RouterArena) on " +
      op.cases_in_pool + " in-pool cases (elsewhere: " + away + "): optimal selection " + fmt.pct(op.selection_rate === null ? null : 100 * op.selection_rate) +
      ", optimal cost " + fmt.pct(op.cost_ratio_pct) + ", optimal accuracy " + fmt.pct(op.accuracy_ratio_pct) + ". Overhead against the same model called " +
      "directly: TTFT p50 " + fmt.s(r.ttft.p50_s, 3) + ", p95 " + fmt.s(r.ttft.p95_s, 3) + "; latency p50 " + fmt.s(r.latency.p50_s, 3) + ", p95 " +
      fmt.s(r.latency.p95_s, 3) + " (" + r.latency.pairs + " pairs)."));
  }
  return h("section", { class: "headline", "aria-labelledby": "diag-title" }, h("h2", { id: "diag-title" }, "Diagnosis"), h("ul", {}, items));
}

function planeChart(d) {
  const o = d.oracle, pt = (x, y, label, what) => ({ x, y, label, title: label + ": quality " + fmt.num(y) + ", " + fmt.usd(x) + (what ? " — " + what : "") });
  const series = [
    { name: "single models", points: d.singles.map((s) => pt(s.cost_usd, s.quality, s.target_id)) },
    { name: "routers", shape: "triangle", points: d.routers.map((r) => pt(r.cost_usd, r.quality, r.target_id)) },
    { name: "oracle ceiling", shape: "diamond", colour: "#4a4a4a",
      points: [pt(o.ceiling_cost_usd, o.quality.estimate, "oracle", "the best single unless another single was needed")] },
    { name: "cheapest-correct oracle", shape: "square", colour: "#2e7d32",
      points: [pt(o.cheapest_cost_usd, o.quality.estimate, "cheapest correct", "each case to the cheapest single that got it right")] },
  ];
  return h("div", { class: "charts" }, scatterChart({ title: "Quality vs principal cost: singles, routers and the oracles", series, yRange: [0, 1],
    xTitle: "principal cost, USD (same cases)", yTitle: "macro quality (0–1)", xFmt: (v, step) => "$" + tickText(v, step) }));
}

function routerSections(d, r) {
  const regret = table(["benchmark", "subject", "cases", "router", "oracle", "regret, points", "regret, USD"], r.regret.map((g) => h("tr", {},
    h("td", {}, g.benchmark), h("td", {}, g.stratum || "(all)"), h("td", {}, String(g.n)), h("td", {}, fmt.num(g.router_accuracy)),
    h("td", {}, fmt.num(g.oracle_accuracy)), h("td", {}, fmt.num(g.quality_points, 1)), h("td", {}, fmt.usd(g.dollars)))),
  { label: r.target_id + " regret per benchmark and subject" });
  const cols = [...new Set(r.confusion.map((c) => c.cheapest_correct))].sort();
  const served = [...new Set(r.confusion.map((c) => c.served))].sort();
  const count = (s, c) => (r.confusion.find((x) => x.served === s && x.cheapest_correct === c) || { cases: 0 }).cases;
  const confusion = table(["served ↓ / cheapest correct →", ...cols], served.map((s) => h("tr", {}, h("th", { scope: "row" }, s),
    cols.map((c) => h("td", {}, String(count(s, c)))))), { label: r.target_id + " routing confusion" });
  const lossRows = r.losses.map((x) => {
    const row = h("tr", {}, h("td", {}, x.case_id), h("td", {}, x.benchmark + (x.stratum ? " · " + x.stratum : "")),
      h("td", {}, (x.router.model || "?") + " " + fmt.usd(x.router.cost_usd)), h("td", {}, x.decision || "—"),
      h("td", {}, x.single.target_id + " " + fmt.usd(x.single.cost_usd)),
      h("td", {}, h("button", { type: "button", on: { click: () => toggleDetail(row, 6, () => lossEvidence(x)) } }, "both answers")));
    return row;
  });
  return [h("h2", {}, "Where " + r.target_id + " loses"), regret, h("h3", {}, "Model served × cheapest correct model"), confusion,
    h("h3", {}, "Cases the served model failed and a cheaper or equally priced single got right"),
    table(["case", "benchmark · subject", "served (cost)", "decision", "single that got it (cost)", "evidence"], lossRows,
      { label: r.target_id + " losses", empty: "None" + (r.losses_cost_unknown ? " (" + r.losses_cost_unknown + " with a cost unknown)" : "") + "." })];
}

async function lossEvidence(x) {
  const [mine, theirs] = await Promise.all([Api.call(x.router.run_id, x.router.cell_id), Api.call(x.single.run_id, x.single.cell_id)]);
  return h("div", {}, h("h4", {}, "Router · " + x.router.run_id + " / " + x.router.cell_id),
    fields(Object.assign({ decision: x.decision }, x.headers)), callView(mine),
    h("h4", {}, x.single.target_id + " · " + x.single.run_id + " / " + x.single.cell_id), callView(theirs));
}

function matrixCsv(d) {
  const cell = (v) => (v === null || v === undefined ? "" : /[",\n]/.test(String(v)) ? '"' + String(v).replace(/"/g, '""') + '"' : String(v));
  const rows = d.routers.flatMap((r) => {
    const lost = Object.fromEntries(r.losses.map((x) => [x.case_id, x.single.target_id]));
    return r.cases.map((c) => Object.assign({ router: r.target_id, case_id: c.case_id, benchmark: c.benchmark, stratum: c.stratum,
      served_model: c.served_model, served_single: c.served_single, router_correct: c.router_correct, router_cost_usd: c.router_cost_usd,
      oracle_correct: c.oracle_correct, cheapest_correct: c.cheapest_correct, optimal: c.optimal, loss_single: lost[c.case_id] },
    ...c.singles.map((s) => ({ [s.target_id + "_correct"]: s.correct, [s.target_id + "_cost_usd"]: s.cost_usd }))));
  });
  const keys = Object.keys(rows[0] || { router: 0, case_id: 0 });
  return [keys.join(","), ...rows.map((l) => keys.map((k) => cell(l[k])).join(","))].join("\n") + "\n";
}
