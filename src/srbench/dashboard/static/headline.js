// sr-bench Dashboard — "Does routing pay?", the run page's headline: each router (MoM) of the run
// against the strongest single model of the same run, or of a chosen baseline run when the run holds
// no single model. It renders the service's paired comparison's `routing_facts` (stages/compare/headline.py, the
// facts `sr-bench report` and `sr-bench compare RUN` print, so nothing is computed twice): Δ macro
// quality with its paired interval and the claim word, savings in three scopes (or why unknown), the
// model mix, per-benchmark rows with intervals, principal vs judge/simulator cost. Every figure names
// its unit and whether it is micro (cases pooled) or macro (weighted mean of benchmarks).
"use strict";

const COMPARABLE = ["completed", "failed", "stopped_early"];     // what compare takes as a candidate
const FINISHING = ["queued", "running"];
// The router's headline facts are the service's (the comparison answer's `routing_facts`, the same
// facts `sr-bench report` prints): this panel renders them and computes no figure of its own.
function claimWord(f) {
  return h("strong", { class: "claim claim-" + f.claim }, f.claim + (f.non_inferior_margin !== null && f.non_inferior_margin !== undefined
    ? " · non-inferior (margin " + f.non_inferior_margin + ")" : ""));
}

async function routingPays(box, run, q, isCurrent) {
  const hasMom = run.targets.some((t) => t.kind === "mom");
  const hasSingle = run.targets.some((t) => t.kind === "single");
  const head = h("h2", { id: "routing-pays" }, "Does routing pay?");
  if (run.mode !== "live") { put(box); return; }
  if (!hasMom) {
    const cq = new URLSearchParams({ baseline: run.id });
    put(box, h("section", { class: "headline", "aria-labelledby": "routing-pays" }, head,
      h("p", {}, "This run holds no router (MoM) target, so there is nothing to weigh here. ",
        link(["compare"], cq, "Compare router runs against it"), ".")));
    return;
  }
  if (FINISHING.includes(run.status)) {
    put(box, h("section", { class: "headline", "aria-labelledby": "routing-pays" }, head,
      h("p", { class: "muted" }, "The answer appears when the run has finished (" + run.status + ": " + run.progress.completed +
        " of " + run.progress.total + " cells completed). Until then the report below holds the figures so far.")));
    return;
  }
  if (!COMPARABLE.includes(run.status) || (run.status === "failed" && run.progress.completed < run.progress.total)) {
    const report = await Api.report(run.id);       // a run that ended without every answer: it will not finish
    if (!isCurrent()) return;
    if (report.partial || !COMPARABLE.includes(run.status)) { put(box, partialView(head, run, report)); return; }
  }
  put(box, h("section", { class: "headline" }, head, h("p", { class: "muted" }, "comparing…")));
  // the service says which runs can answer the question and why the others cannot: only those are compared,
  // so no choice in the menu sends a comparison the service would refuse
  const opts = await Api.baselines(run.id);
  const byId = Object.fromEntries(opts.options.map((o) => [o.run_id, o]));
  const asked = q.get("baseline");
  let base = asked || opts.chosen, why = null, cmp = null;
  if (asked && asked !== run.id && !(byId[asked] && byId[asked].usable)) {
    why = "run " + asked + " cannot be the baseline: " + (byId[asked] ? byId[asked].left_out : "it is not a run you can see");
    base = null;
  }
  if (base) { try { cmp = await Api.compare(base, run.id); } catch (e) { why = e.message; } }
  if (!isCurrent()) return;
  const picker = baselinePicker(run, q, opts, cmp ? cmp.baseline_run.run_id : base, asked);
  if (!cmp) {
    put(box, h("section", { class: "headline", "aria-labelledby": "routing-pays" }, head, picker, h("p", {}, "No baseline to weigh the router against: " +
      (why || "no run you can see is a finished live run with a single model on the same cases and protocol, priced like this one") + "."),
    leftOutList(opts)));
    return;
  }
  const moms = new Set(cmp.candidates.filter((c) => c.kind === "mom").map((c) => c.target_id));
  const facts = (cmp.routing_facts || []).filter((f) => moms.has(f.router));
  const report = await Api.report(run.id);
  const baseReport = cmp.baseline_run.run_id === run.id ? report : await Api.report(cmp.baseline_run.run_id);
  if (!isCurrent()) return;
  const others = cmp.candidates.filter((c) => c.kind !== "mom");
  put(box, h("section", { class: "headline", "aria-labelledby": "routing-pays" }, head, picker,
    facts.map((f) => routerBlock(cmp, f, report, baseReport)), leftOutList(opts),
    others.length ? section("Other single models against " + cmp.baseline.target_id + " (" + others.length + ")",
      table(["target", "macro quality", "Δ macro quality [95%]", "claim"], others.map((c) => h("tr", {}, h("td", {}, c.target_id),
        h("td", {}, fmt.num(c.quality)), h("td", {}, fmt.signed(c.delta) + " " + fmt.ci(c.interval.ci)), h("td", {}, c.claim))),
      { label: "other single models" }), false) : null,
    section("What this comparison does not cover (" + cmp.limitations.length + ")", h("ul", {}, cmp.limitations.map((l) => h("li", {}, l))), false)));
}

// The Baseline menu: this run's own strongest single (when it has one), the runs that can answer the
// question (complete first, partial ones with their reason), and the others disabled with why they are left out.
function baselinePicker(run, q, opts, current, asked) {
  const usable = opts.options.filter((o) => o.usable), out = opts.options.filter((o) => !o.usable);
  if (!opts.own_single && !usable.length && !out.length) return null;
  const label = (o) => o.name + " · " + o.run_id + (o.partial ? " — " + o.partial : "");
  const choose = h("select", { id: "baseline-run", on: { change: (e) => { q.set("baseline", e.target.value); go(["run", run.id], q); } } },
    current ? null : h("option", { value: "" }, "— choose a baseline run —"),
    opts.own_single ? h("option", { value: run.id, selected: current === run.id }, "the strongest single model of this run") : null,
    usable.length ? h("optgroup", { label: "Runs that can answer it" }, usable.map((o) =>
      h("option", { value: o.run_id, selected: current === o.run_id }, label(o)))) : null,
    out.length ? h("optgroup", { label: "Left out" }, out.slice(0, 50).map((o) =>
      h("option", { value: o.run_id, disabled: true }, o.name + " · " + o.run_id + " — " + o.left_out))) : null);
  const chosen = current ? opts.options.find((o) => o.run_id === current) : null;
  const note = current && !asked && !opts.own_single ? " (chosen: the newest finished run with a single model on the same cases and protocol" +
    (chosen && chosen.partial ? "; none answered every cell" : "") + ")" : "";
  return h("div", { class: "picker" }, h("p", {}, h("label", { for: "baseline-run" }, "Baseline: "), choose,
    note ? h("span", { class: "muted" }, note) : null),
  chosen && chosen.partial ? h("p", { class: "partial-baseline" }, "Baseline " + chosen.name + " is " + chosen.partial + ".") : null);
}

function leftOutList(opts) {
  const out = opts.options.filter((o) => !o.usable);
  if (!out.length) return null;
  return section("Runs left out as a baseline (" + out.length + ")", h("ul", { class: "left-out" }, out.slice(0, 50).map((o) =>
    h("li", {}, o.name + " · " + o.run_id + ": " + o.left_out))), false);
}

function routerBlock(cmp, f, report, baseReport) {
  const where = f.same_run ? "the strongest single model of this run" : "the strongest single model of run " + f.baseline_run;
  const lat = (p) => ({ latency_p50_s: p[0], latency_p95_s: p[1] });
  return h("article", { class: "router" },
    h("h3", {}, f.router + " vs " + f.baseline + " — ", claimWord(f)),
    h("p", { class: "big" }, "Δ macro quality ", h("strong", {}, fmt.signed(f.delta)), " " + fmt.ci(f.ci),
      h("span", { class: "muted" }, " 95% paired " + f.rule + " interval" + (f.selection ? ", " + f.selection : "") + " · " + f.n +
        " paired cases · baseline: " + where)),
    h("p", {}, "The router is " + f.verdict + ". Macro quality " + fmt.num(f.quality) + " (router) vs " + fmt.num(f.baseline_quality) +
      " (" + f.baseline + "); micro Δ (every case weighted equally) " + fmt.signed(f.micro_delta) + "; " + f.wins + " cases only the router got right, " +
      f.losses + " only " + f.baseline + ", " + f.ties + " ties."),
    cmp.early_stop ? h("p", { class: "partial" }, "partial: " + cmp.cases + " of " + cmp.planned_cases + " planned cases compared — " +
      "a run stopped early by its plan's rule, compared on its measured prefix with the anytime-valid betting interval") : null,
    h("p", { class: "standing" }, "Standing: " + f.evidence + " — " + (f.standing_reason || "profile " + (f.profile || "?") +
      (f.formal ? "" : "; a dev result is never a formal conclusion"))),
    savingsTable(f),
    latencyTable(f.router, f.baseline, lat(f.router_latency_s), lat(f.baseline_latency_s)),
    mixView(f),
    costSplit(f, report, baseReport),
    perBenchmark(f),
    f.config_unconfirmed !== null && f.config_unconfirmed !== undefined ? h("p", { class: "error" }, "Config hash not confirmed: " + f.config_unconfirmed) : null);
}

// the saving right after the scope, so that a phone (390 px) shows it without scrolling
function savingsTable(f) {
  const baseId = f.baseline;
  const labels = { principal: "principal (the model calls)", total: "total (with judge/simulator calls)", cache_neutral: "cache-neutral (every input token uncached)" };
  return table(["cost scope", "saving", "router, USD", baseId + ", USD"], ["principal", "total", "cache_neutral"].map((k) => {
    const s = f.savings.find((x) => x.scope === k);
    return h("tr", {}, h("th", { scope: "row" }, labels[k]),
      h("td", { class: "saving" }, s.saving_pct === null || s.saving_pct === undefined ? "unknown: " + s.reason : fmt.pct(s.saving_pct) + " (" + fmt.usd(s.saving_usd) + ")"),
      h("td", {}, fmt.usd(s.candidate_usd)), h("td", {}, fmt.usd(s.baseline_usd)));
  }), { caption: "Savings against " + baseId + " on the same cases (token-equivalent estimates at the frozen prices, not a bill)" });
}

// p50 / p95 latency per side, over the compared cells that have an answer
function latencyTable(candId, baseId, cand, base) {
  const row = (id, o) => h("tr", {}, h("th", { scope: "row" }, id), h("td", {}, fmt.s((o || {}).latency_p50_s)),
    h("td", {}, fmt.s((o || {}).latency_p95_s)));
  return table(["target", "latency p50", "latency p95"], [row(candId, cand), row(baseId, base)],
    { caption: "Latency per call or conversation (answered cells of the compared cases)" });
}

// A run that ended without an answer in every cell: what it answered, both denominators, and the
// paired figure on the cases both sides answered (the report's partial section) — never a claim.
function partialView(head, run, report) {
  const p = report.partial || { label: run.status + ": " + run.progress.completed + " of " + run.progress.total + " cells answered" };
  const paired = report.paired && report.paired.partial ? report.paired : null;
  const accuracies = (report.summary.targets || []).map((t) => h("li", {}, t.target_id + ": " + fmt.num(t.accuracy) + " over all " +
    t.total + " planned cells (" + t.correct + " / " + t.total + "; unanswered count as not correct) · " + fmt.num(t.accuracy_answered) +
    " over the " + t.completed + " answered cells (" + t.correct + " / " + t.completed + ")"));
  return h("section", { class: "headline partial", "aria-labelledby": "routing-pays" }, head,
    h("p", {}, h("strong", {}, p.label), ". This run will not finish, so there is no final answer: the figures below are partial and make no claim."),
    h("ul", { class: "accuracies" }, accuracies),
    paired ? paired.candidates.map((c) => partialRouter(c, paired)) : h("p", {}, "No paired figure: this run holds no single model to pair its " +
      "router with, and Compare takes only runs that answered every cell. ", link(["compare"], null, "Compare"), " other runs instead."));
}

function partialRouter(c, paired) {
  // without a pair (no case answered by both) there is no baseline to name: never "vs — —"
  const title = h("h3", {}, c.target_id + (c.baseline_target_id ? " vs " + c.baseline_target_id : "") + " — ",
    h("strong", { class: "claim" }, c.label));
  if (!c.n) return h("article", { class: "router" }, title, h("p", {}, c.reason));
  const ops = c.operations;
  return h("article", { class: "router" }, title,
    h("p", { class: "big" }, "Δ macro quality ", h("strong", {}, fmt.signed(c.delta)), " " + fmt.ci(c.interval.ci),
      h("span", { class: "muted" }, " descriptive Hoeffding interval · " + c.n + " of " + c.planned_cases + " cases answered by both")),
    h("p", { class: "standing" }, "Standing: " + paired.evidence.label + ". " + c.claim_note + "."),
    h("p", {}, "Macro quality " + fmt.num(c.quality) + " (router) vs " + fmt.num(c.baseline_quality) + " (" + c.baseline_target_id +
      ") on those cases; " + c.wins + " only the router got right, " + c.losses + " only " + c.baseline_target_id + ", " + c.ties + " ties."),
    table(["cost scope", "saving", "router, USD", c.baseline_target_id + ", USD"], [h("tr", {}, h("th", { scope: "row" }, "principal"),
      h("td", { class: "saving" }, c.saving_pct === null ? "unknown: a cost on these cases is unknown" : fmt.pct(c.saving_pct) + " (partial)"),
      h("td", {}, fmt.usd(ops.candidate.cost_usd)), h("td", {}, fmt.usd(ops.baseline.cost_usd)))],
    { caption: "Principal cost on the " + c.n + " cases answered by both (partial, not a bill)" }),
    latencyTable(c.target_id, c.baseline_target_id, ops.candidate, ops.baseline));
}

function mixView(r) {
  const mix = Object.entries(r.model_mix || {});
  const n = mix.reduce((a, [, k]) => a + k, 0);
  return h("div", {}, h("h4", {}, "Model mix the router chose"),
    n ? h("ul", { class: "mix" }, mix.map(([m, k]) => h("li", {}, m + ": " + k + " calls (" + fmt.pct(100 * k / n, 0) + ")")),
      r.unattributed_calls ? h("li", {}, "unattributed: " + r.unattributed_calls + " calls (no served model named; cost unknown)") : null)
      : h("p", { class: "muted" }, "no answered call names a served model"),
    r.retries || r.fallbacks ? h("p", { class: "muted" }, "retries " + fmt.auto(r.retries) + ", fallbacks " + fmt.auto(r.fallbacks)) : null);
}

function costSplit(f, report, baseReport) {
  const summaries = [...(report.summary.targets || []).filter((t) => t.target_id === f.router).map((t) => [t, report]),
    ...(baseReport.summary.targets || []).filter((t) => t.target_id === f.baseline).map((t) => [t, baseReport])];
  const roles = [...new Set(summaries.flatMap(([t, rep]) => Costs.roles(t, rep).map((x) => x.role)))];
  if (!roles.length) roles.push("judge");
  return table(["target", "principal, USD", ...roles.map((r) => r + ", USD"), "total, USD"], summaries.map(([t, rep]) => {
    const got = Object.fromEntries(Costs.roles(t, rep).map((x) => [x.role, x.usd]));
    const none = (r) => (r === "judge" && !Costs.judged(rep) ? "—" : "not metered");     // no judge: no judge cost
    return h("tr", {}, h("th", { scope: "row" }, t.target_id), h("td", {}, fmt.usd(Costs.principal(t))),
      roles.map((r) => h("td", {}, r in got ? fmt.usd(got[r]) : none(r))), h("td", {}, fmt.usd(Costs.total(t))));
  }), { caption: "Principal cost apart from judge/simulator cost (whole run, every planned cell)" });
}

function perBenchmark(f) {
  const baseId = f.baseline;
  const rows = f.benchmarks.map((b) => h("tr", {}, h("th", { scope: "row" }, b.benchmark), h("td", {}, b.n),
    h("td", {}, fmt.num(b.candidate_accuracy) + " " + fmt.ci01(b.candidate_ci)),
    h("td", {}, fmt.num(b.baseline_accuracy) + " " + fmt.ci01(b.baseline_ci)),
    h("td", {}, fmt.signed(b.delta) + " " + fmt.ci(b.delta_ci)), h("td", {}, b.wins + "/" + b.losses + "/" + b.ties)));
  const chart = intervalChart({
    title: "Δ accuracy by benchmark, " + f.router + " − " + baseId, xTitle: "benchmark", yTitle: "Δ accuracy (95% interval)",
    groups: f.benchmarks.map((b) => ({ label: b.benchmark })), series: [{ name: f.router + " − " + baseId + " (this run)" }],
    points: f.benchmarks.map((b, i) => ({ group: i, series: 0, y: b.delta, lo: b.delta_ci ? b.delta_ci[0] : null,
      hi: b.delta_ci ? b.delta_ci[1] : null, title: b.benchmark + ": " + fmt.signed(b.delta) + " " + fmt.ci(b.delta_ci) })),
    yRange: [-1, 1], note: "the same figures as the table" });
  return h("div", { class: "per-benchmark" }, table(["benchmark", "cases", "router accuracy [95% Wilson]", baseId + " accuracy [95% Wilson]",
    "Δ accuracy [95% Hoeffding, this benchmark]", "W/L/T"], rows,
  { caption: "Per benchmark (accuracy = correct / cases of the benchmark; the Δ interval is descriptive, the claim is the weighted one above)" }),
  h("div", { class: "charts" }, chart));
}
