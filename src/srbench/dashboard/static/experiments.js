// sr-bench Dashboard — Experiments: the iterations of one routing change (the service's experiments:
// runs in roles — smoke, baseline, initial, preview, candidate, validation (the holdout acceptance),
// estimate, recovery). An experiment's page lists its runs by role with the headline figures of each
// (a baseline's strongest single model; a router run's Δ macro quality with its interval, claim and
// saving against the baseline) and starts Compare from them. Read-only: nothing here starts a run.
"use strict";

const ROLE_ORDER = ["smoke", "baseline", "initial", "preview", "candidate", "validation", "estimate", "recovery"];
const ROLE_TEXT = { smoke: "smoke check", baseline: "baseline", initial: "initial router", preview: "route preview",
  candidate: "dev candidate", validation: "holdout acceptance", estimate: "offline estimate (replay)", recovery: "recovery" };

async function experimentsView(q) {
  const alive = stopPolling();
  const list = await Api.experiments();
  if (!alive()) return;
  show(h("h1", {}, "Experiments"),
    h("p", { class: "muted" }, "An experiment groups the iterations of one routing change: its baseline, dev candidates and the holdout " +
      "acceptance. Runs join one through their manifest's experiment block or the API."),
    table(["experiment", "owner", "runs", "active", "created"], list.map((e) => h("tr", { class: "link",
      on: { click: (ev) => { if (ev.target.tagName !== "A") go(["experiment", e.id]); } } },
    h("td", {}, link(["experiment", e.id], null, e.name)), h("td", {}, e.owner), h("td", {}, e.run_count ?? "?"),
    h("td", {}, e.active_run_count ?? "?"), h("td", {}, fmt.time(e.created_at)))), { empty: "No experiment yet.", label: "experiments" }));
}

async function experimentView(id, q) {
  const alive = stopPolling();
  const { experiment, members } = await Api.experimentRuns(id);
  const runs = Object.fromEntries((await Api.runs()).map((r) => [r.id, r]));
  const out = h("div");
  if (!alive()) return;
  show(h("p", {}, h("a", { href: "#/experiments" }, "← Experiments")), h("h1", {}, experiment.name),
    h("p", { class: "muted" }, h("code", {}, experiment.id), " · owner " + experiment.owner + " · created " + fmt.time(experiment.created_at)), out);
  const byRole = ROLE_ORDER.map((role) => [role, members.filter((m) => m.role === role)]).filter(([, ms]) => ms.length);
  const baselines = members.filter((m) => m.role === "baseline").map((m) => runs[m.run_id]).filter(Boolean)
    .sort((a, b) => b.created_at - a.created_at);
  const base = baselines.find((r) => COMPARABLE.includes(r.status)) || null;
  const rows = [];
  for (const [role, ms] of byRole) {
    for (const m of ms) {
      const run = runs[m.run_id];
      rows.push(h("tr", {}, h("td", {}, ROLE_TEXT[role] || role), h("td", {}, run ? link(["run", run.id], null, run.name) : m.run_id),
        h("td", {}, run ? run.status : "not visible"), h("td", {}, run ? run.profile : ""), h("td", {}, m.hypothesis || "—"),
        h("td", {}, await iterationFigures(run, base))));
    }
  }
  const routerRuns = members.filter((m) => ["initial", "candidate", "validation"].includes(m.role)).map((m) => runs[m.run_id])
    .filter((r) => r && COMPARABLE.includes(r.status) && r.mode === "live");
  if (!alive()) return;
  const cq = base ? new URLSearchParams({ baseline: base.id, candidates: routerRuns.filter((r) => r.profile === base.profile).map((r) => r.id).join(",") }) : null;
  put(out, h("h2", {}, "Iterations (" + members.length + " runs)"),
    table(["role", "run", "status", "profile", "hypothesis", "headline"], rows, { empty: "No run has joined this experiment yet.", label: "iterations" }),
    h("p", { class: "muted" }, "Headline: a baseline's strongest single model by macro quality; a router run's Δ macro quality with its " +
      "95% paired interval and claim against the strongest single model of its own run, else of the experiment's latest finished baseline " +
      "run. Dev candidates are never a formal conclusion; the holdout acceptance is compared on its own cases."),
    cq && cq.get("candidates") ? h("p", {}, link(["compare"], cq, "Compare these iterations", { class: "button" })) :
      h("p", { class: "muted" }, "Compare needs a finished baseline run and router runs of the same profile in this experiment."));
}

// The headline of one iteration, in a line.
async function iterationFigures(run, base) {
  if (!run) return "—";
  if (run.mode !== "live") return run.mode + " run: no quality figure";
  if (!COMPARABLE.includes(run.status)) {        // a cancelled or interrupted run will not finish: say so, claim nothing
    return TERMINAL.includes(run.status) ? "partial: " + run.progress.completed + " of " + run.progress.total + " cells answered (" +
      run.status + ", it will not finish): no claim" : "not finished";
  }
  const hasMom = run.targets.some((t) => t.kind === "mom"), hasSingle = run.targets.some((t) => t.kind === "single");
  try {
    if (!hasMom) {
      const rep = await Api.report(run.id);
      const best = rep.summary.targets.filter((t) => t.kind === "single").sort((a, b) => (b.macro_accuracy ?? -1) - (a.macro_accuracy ?? -1))[0];
      return best ? "strongest single: " + best.target_id + ", macro quality " + fmt.num(best.macro_accuracy) + ", principal " + fmt.usd(Costs.principal(best)) : "—";
    }
    const cmp = await Api.compare(hasSingle || !base ? run.id : base.id, run.id);
    return cmp.candidates.filter((c) => c.kind === "mom").map((c) => c.target_id + " vs " + cmp.baseline.target_id + ": Δ " +
      fmt.signed(c.delta) + " " + fmt.ci(c.interval.ci) + " → " + c.claim + "; saving " +
      (c.savings.principal.saving_pct === null ? "unknown" : fmt.pct(c.savings.principal.saving_pct))).join("; ");
  } catch (e) { return "no comparison: " + e.message; }
}
