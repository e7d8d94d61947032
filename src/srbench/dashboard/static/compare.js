// sr-bench Dashboard — Compare iterations (UI-6): one verdict sentence per candidate first, then a
// baseline run and checked candidate runs (kept in the URL), a quality/cost chart and an iteration
// chart (one colour per run, the same data as the table), savings, tokens, latency, wall time,
// CSV/JSON export, and the router recipe's changes.
"use strict";

async function compareView(q) {
  const alive = stopPolling();
  const runs = (await Api.runs()).filter((r) => r.mode === "live" && ["completed", "failed", "stopped_early"].includes(r.status))
    .sort((a, b) => a.created_at - b.created_at);
  const baseline = q.get("baseline") || "";
  const chosen = new Set((q.get("candidates") || "").split(",").filter(Boolean));
  const pick = h("select", { id: "baseline", on: { change: (e) => { q.set("baseline", e.target.value); go(["compare"], q); } } },
    h("option", { value: "" }, "— baseline run (with a single model) —"),
    runs.filter((r) => r.targets.some((t) => t.kind === "single")).map((r) =>
      h("option", { value: r.id, selected: r.id === baseline }, r.name + " · " + r.id)));
  const boxes = runs.filter((r) => r.id !== baseline).map((r) => h("li", {}, h("label", {},
    h("input", { type: "checkbox", checked: chosen.has(r.id), on: { change: (e) => {
      if (e.target.checked) chosen.add(r.id); else chosen.delete(r.id);
      q.set("candidates", [...chosen].join(",")); go(["compare"], q);
    } } }), " " + r.name + " · " + r.id + " · " + fmt.time(r.created_at))));
  const out = h("div");
  // the verdicts come first, right under the title (on a phone too): one sentence per candidate
  const verdicts = h("ul", { class: "verdicts" });
  const verdictBox = h("section", { id: "verdicts", class: "headline", "aria-labelledby": "verdicts-title", "aria-live": "polite" },
    h("h2", { id: "verdicts-title" }, "Verdict"), verdicts);
  if (!alive()) return;
  show(h("h1", {}, "Compare iterations"), verdictBox, h("p", {}, h("label", { for: "baseline" }, "Baseline run: "), pick),
    h("fieldset", {}, h("legend", {}, "Candidate runs (in creation order)"), boxes.length ? h("ul", { class: "plain" }, boxes) : h("p", { class: "muted" }, "No other finished live run.")),
    out);
  if (!baseline || !chosen.size) { verdicts.replaceWith(h("p", { class: "muted" }, "Pick a baseline and one or more candidates below.")); return; }
  const names = Object.fromEntries(runs.map((r) => [r.id, r.name]));
  const lines = [], rows = [], notes = [];
  const order = runs.map((r) => r.id).filter((r) => chosen.has(r));
  for (const cid of order) {
    if (!alive()) return;                  // another page was opened meanwhile
    let cmp;
    // the service says first whether this baseline can answer for the candidate: a pair it would refuse is
    // never sent (no 400 in the console), its reason is shown instead
    try {
      const opt = (await Api.baselines(cid)).options.find((o) => o.run_id === baseline);
      if (opt && !opt.usable) throw new Error("not comparable with the baseline run: " + opt.left_out);
      cmp = await Api.compare(baseline, cid);
    }
    catch (e) {
      rows.push(h("tr", {}, h("td", {}, cid), h("td", { colspan: 12, class: "error" }, e.message)));
      verdicts.append(h("li", { class: "error" }, (names[cid] || cid) + ": no verdict — " + e.message));
      continue;
    }
    const wall = (await Api.report(cid)).summary.wall_time_s;
    for (const c of cmp.candidates) {
      const s = c.savings;
      const line = { candidate_run: cid, target: c.target_id, kind: c.kind, quality: c.quality, baseline: cmp.baseline.target_id,
        delta: c.delta, ci_low: c.interval.ci[0], ci_high: c.interval.ci[1], claim: c.claim, claim_rule: c.claim_rule,
        other_ci: c.intervals ? JSON.stringify(c.intervals[c.claim_rule === "betting" ? "hoeffding" : "betting"].ci) : null,
        cases: cmp.cases, label: cmp.evidence.label,
        saving_principal_pct: s.principal.saving_pct, saving_total_pct: s.total.saving_pct,
        saving_cache_neutral_pct: s.cache_neutral.saving_pct, latency_p50_s: c.operations.candidate.latency_p50_s,
        principal_cost_usd: s.principal.candidate_usd, baseline_quality: c.baseline_quality,
        baseline_cost_usd: s.principal.baseline_usd, tokens: fmt.tokens(c.operations.candidate.tokens), wall_time_s: wall };
      lines.push(line);
      verdicts.append(verdictLine(c, cmp, names[cid] || cid));
      notes.push(plannedLine(c));
      rows.push(h("tr", {}, h("td", {}, link(["run", cid], null, names[cid] || cid)), h("td", {}, c.target_id + " (" + c.kind + ")"), h("td", {}, fmt.num(c.quality)),
        ...claimCells(c), h("td", {}, c.wins + "/" + c.losses + "/" + c.ties),
        h("td", {}, fmt.pct(s.principal.saving_pct)), h("td", {}, fmt.pct(s.total.saving_pct)),
        h("td", {}, fmt.pct(s.cache_neutral.saving_pct)), h("td", {}, line.tokens),
        h("td", {}, fmt.num(c.operations.candidate.latency_p50_s, 2)), h("td", {}, fmt.num(wall, 1))));
    }
  }
  const csv = () => {
    const keys = Object.keys(lines[0] || {});
    const cell = (v) => (v === null || v === undefined ? "" : /[",\n]/.test(String(v)) ? '"' + String(v).replace(/"/g, '""') + '"' : String(v));
    return [keys.join(","), ...lines.map((l) => keys.map((k) => cell(l[k])).join(","))].join("\n") + "\n";
  };
  if (lines.length) out.append(h("div", { class: "charts" }, qualityCostChart(lines, names, baseline), iterationChart(lines, names, order)));
  out.append(table(["candidate run", "target", "macro quality", "Δ macro quality [95%] (claim rule)", "other rule", "claim", "W/L/T",
    "saving (principal)", "saving (total)", "saving (cache-neutral)", "tokens in / cached / write / out", "latency p50, s", "run wall time, s"], rows, { label: "comparison" }),
  ...notes.filter(Boolean),
  h("p", { class: "muted" }, "\"improvement\" only when the whole interval is above zero; savings need complete metering. " +
      "Compared on the same cases against the strongest single model of the baseline run; quality is macro (weighted mean of " +
      "per-benchmark accuracies), costs are USD at the frozen prices."),
  h("button", { type: "button", disabled: !lines.length, on: { click: () => download("comparison.csv", "text/csv", csv()) } }, "Export CSV"),
  h("button", { type: "button", disabled: !lines.length, on: { click: () => download("comparison.json", "application/json", JSON.stringify(lines, null, 2)) } }, "Export JSON"));
  const recipeBox = h("div");
  out.append(recipeBox);
  recipeDiffView([baseline, ...order], names).then((n) => put(recipeBox, n)).catch((e) => put(recipeBox, h("p", { class: "error" }, e.message)));
}

// One candidate's verdict in a sentence: the claim, its interval, the saving and the standing (formal, dev or
// custom source, with the service's reason: the comparison's `evidence`, never re-derived here).
function verdictLine(c, cmp, runName) {
  const s = c.savings.principal;
  const saving = s.saving_pct === null || s.saving_pct === undefined ? "saving unknown (" + s.reason + ")"
    : (s.saving_pct >= 0 ? "saves " + fmt.pct(s.saving_pct) : "costs " + fmt.pct(-s.saving_pct) + " more") + " of the principal cost (" +
      fmt.usd(s.candidate_usd) + " vs " + fmt.usd(s.baseline_usd) + ")";
  const ev = cmp.evidence;
  return h("li", { class: "verdict" }, h("strong", {}, c.target_id), " (" + runName + ") is ",
    h("strong", { class: "claim-" + c.claim }, c.claim), " against " + cmp.baseline.target_id + ": Δ macro quality " + fmt.signed(c.delta) +
    " " + fmt.ci(c.interval.ci) + " (95% " + c.claim_rule + (c.selection && c.selection.adjusted ? ", adjusted for the strongest of K = " +
      c.selection.k : "") + ", " + c.n + " paired cases); " + saving + "; ",
    h("span", { class: "standing" }, ev.label + (ev.reason ? " — " + ev.reason : "")), ".");
}

// The claim columns of one paired candidate: Δ with the claim rule's interval, the other rule's beside it.
function claimCells(c) {
  const other = c.claim_rule === "betting" ? "hoeffding" : "betting";
  const oi = (c.intervals || {})[other];
  const adjusted = c.selection && c.selection.adjusted ? ", adjusted for the strongest of K = " + c.selection.k : "";
  return [h("td", {}, fmt.signed(c.delta) + " " + fmt.ci(c.interval.ci) + " " + c.claim_rule + adjusted),
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
    fmt.num(100 * at.effect, 1) + " pts needs " + neededText(at) + ".");
}

// The cases the effect needs: per-benchmark sizes when the planning has them (a new plan), else one scale.
function neededText(at) {
  const s = at.sized_for_effect;
  if (!s) return at.needed_for_effect ? at.needed_for_effect.total + " cases" : "more than 10⁴× the cases";
  const per = Object.entries(s.per_benchmark).map(([b, k]) => b + " " + k + (s.at_available.includes(b) ? "*" : "")).join(", ");
  return s.reached ? s.total + " cases, each benchmark sized for its weight (" + per + "; * = all its source holds)"
    : "more cases than the pinned sources hold (all " + s.total + " give " + fmt.num(100 * s.power, 0) + "% power; " + per + ")";
}

const runLabel = (names, id) => (names[id] || id) + " · " + id.slice(-6);

function qualityCostChart(lines, names, baselineRun) {
  const runsIn = [...new Set(lines.map((l) => l.candidate_run))];
  const series = runsIn.map((rid) => ({ name: runLabel(names, rid), points: lines.filter((l) => l.candidate_run === rid).map((l) => ({
    x: l.principal_cost_usd, y: l.quality, label: l.target, title: l.target + " (" + runLabel(names, rid) + "): quality " + fmt.num(l.quality) + ", " + fmt.usd(l.principal_cost_usd) })) }));
  const b = lines.find((l) => l.baseline_cost_usd !== null && l.baseline_cost_usd !== undefined);
  if (b) series.push({ name: "baseline " + b.baseline + " (" + runLabel(names, baselineRun) + ")", shape: "square", colour: "#4a4a4a",
    points: [{ x: b.baseline_cost_usd, y: b.baseline_quality, label: "baseline " + b.baseline, title: "baseline " + b.baseline + ": quality " + fmt.num(b.baseline_quality) + ", " + fmt.usd(b.baseline_cost_usd) }] });
  return scatterChart({ title: "Macro quality vs principal cost", xTitle: "principal cost, USD (same cases)", yTitle: "macro quality (0–1)",
    series, yRange: [0, 1], xFmt: (v, step) => "$" + tickText(v, step) });
}

function iterationChart(lines, names, order) {
  const runsIn = order.filter((r) => lines.some((l) => l.candidate_run === r));
  const targets = [...new Set(lines.map((l) => l.target))];
  return intervalChart({
    title: "Δ macro quality vs the baseline, by iteration (95% claim-rule interval)", xTitle: "iteration (candidate run, oldest first)",
    yTitle: "Δ macro quality", groups: runsIn.map((r) => ({ label: runLabel(names, r) })),
    series: runsIn.map((r) => ({ name: runLabel(names, r) })),
    points: lines.map((l) => ({ group: runsIn.indexOf(l.candidate_run), series: runsIn.indexOf(l.candidate_run), y: l.delta, lo: l.ci_low, hi: l.ci_high,
      shape: SHAPES[targets.indexOf(l.target) % SHAPES.length], title: l.target + " in " + runLabel(names, l.candidate_run) + ": " + fmt.signed(l.delta) + " " + fmt.ci([l.ci_low, l.ci_high]) + " → " + l.claim })),
    yRange: [-1, 1], note: "one colour per run; shapes by target (" + targets.map((t, i) => SHAPES[i % SHAPES.length] + " " + t).join(", ") + ")" });
}
