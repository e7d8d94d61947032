"""Compare: a pure function from two runs (report, result rows, frozen plan) to a paired comparison.

IT-5, REP-3, REP-5, REP-6, REP-7. The lead wraps it in a memoised rule; it reads nothing else.

Eligibility (each refusal raises `NotComparable`, code `not_comparable`, with a stable `reason`):
- `plan_mismatch`: the report was not made from the plan given.
- `run_not_finished` (queued, running) / `run_not_comparable` (cancelled, interrupted): only
  `completed` and `failed` runs compare. A failed run has outcomes for its cells (failures count as
  incorrect); a cancelled or interrupted one was stopped from outside, so its plan was not carried
  out as frozen and an interrupted one may hold billed calls of unknown outcome.
- `not_live`: both runs are live (preview and replay measure no capability).
- `case_set_mismatch`: equal `case_sha256`, and every target of both runs planned exactly once on
  the same non-empty case set E.
- `protocol_mismatch`: equal profile, sampling, per-call limits (timeouts, output caps, repetition
  guard), benchmark weights, grader and adapter versions, and equal prices for every model priced by
  both runs. The run-level limits (`OPERATIONAL_LIMITS`: concurrency, the run time limit, the budget)
  decide how fast and how far a run goes, not how one question is asked or graded: they may differ
  (every cell must still be terminal), and a limitation names each difference because latency and
  wall time then were measured under different load.
- `no_single_baseline`: the baseline run has at least one single target.
- `cell_pending` / `cell_not_graded`: every cell has exactly one terminal outcome — `completed`
  with a bool `correct`, or `failed`, `cancelled` or `ambiguous`, which count as incorrect (the
  report's denominator rule: the plan's every cell). A pending or dispatching cell blocks — except
  in a run that `stopped_early` by its plan's rule: such a run is compared on its measured prefix
  (`stopping.measured_prefix` of the `benchmark-interleave-v1` order), and both runs on the shorter
  prefix. `nothing_measured`: that prefix is empty. `early_stop_needs_betting`: a run stopped early
  and the candidate's claim rule is `hoeffding`, which is not valid at a size the data chose.

Claims (`claims.assess`): the candidate plan's `statistics.claim_rule` (`hoeffding`, REP-6, when a
stored plan does not say; every new plan records it, `betting` unless its manifest chose) makes the
claim and the non-inferiority verdict; the other rule's interval is shown beside it. A plan with
`baseline_selection: adjusted` (new plans) claims against the strongest of the baseline run's K single
targets with `stages/selection`'s adjustment; the comparison's `selection` names K and the adjustment. The
margin is the one the candidate plan declared (`statistics.margin`); one given to compare must equal
it (`margin_conflict`) — REP-7 wants it declared in advance.

Baseline (REP-5): the single target of the baseline run with the highest exact weighted quality
Q = Σ W_b·k_b/n_b / Σ W_b on the cases that run measured (all of them unless it stopped early); ties
go to a complete principal cost, then the lowest, then target id. All tied strongest are listed;
if one of them has an incomplete principal cost, savings are unknown. Qualities, differences and
costs of the comparison itself are on the compared cases.

Per benchmark (REP-1), each candidate row gives both accuracies with their Wilson 95% intervals and
the paired difference with its own Hoeffding 95% interval on that benchmark's cases alone (one
stratum: r = √(2·ln(2/α)/n_b)); these are descriptive, the claim is the weighted one above. Each
candidate also carries its `costs` on the compared cases (principal, auxiliary = judge + simulator,
total, cache-neutral), so principal and auxiliary cost can be read apart.

Savings, per scope s ∈ {principal (subject `cost_usd`), total (principal + `judge_cost_usd` +
`simulator_cost_usd`), cache_neutral (`cache_neutral_cost_usd`, REP-3)}:
pct = 100·(1 − cand_s/base_s), saving = base_s − cand_s, only when both runs are `require_priced`,
every tied strongest baseline has a complete principal cost, base_s and cand_s are known (every
cell's cost known) and base_s > 0; otherwise null with a reason. base_s is the lowest s-cost among
the tied strongest (for principal that is the chosen baseline), so a tie never inflates a saving.
An auxiliary cost field absent from every row of both runs means these reports meter no judge or
simulator calls: it counts as 0 and a limitation says so; present in any row, a row without it (or
with null) makes that target's total unknown — one run's metered judges are never set against
another's unmetered ones.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from fractions import Fraction

from pydantic import TypeAdapter

from srbench import VERSION
from srbench.schemas.comparison import (
    BaselineChoice,
    BenchmarkDelta,
    Candidate,
    Comparison,
    Costs,
    DeltaInterval,
    Operations,
    OperationsPair,
    Savings,
    ScopeSaving,
    TiedBaseline,
    Tokens,
)
from srbench.schemas.comparison_claims import EarlyStopShortening
from srbench.schemas.comparison_inputs import ComparedReport, ComparedRow
from srbench.schemas.intervals import StatisticsBlock
from srbench.schemas.plan import Plan
from srbench.schemas.report_sections import RoutingFigures
from srbench.schemas.target import Target
from srbench.stages.compare.checks import (
    STOPPED,
    ByTarget,
    Cells,
    NotComparable,
    operational_limitations,
    pair_checks,
    run_checks,
    run_info,
)
from srbench.stages.compare.claims import assess, declared_margin, statistics_limitations
from srbench.stages.compare.limitations import (
    AUX_COST_FIELDS,
    CUSTOM,
    DEV,
    FORMAL,
    comparison_limitations,
    evidence_of,
)
from srbench.stages.compare.selection import limitation as selection_limitation
from srbench.stages.compare.selection import paired_diffs
from srbench.stages.compare.selection import summary as selection_summary
from srbench.stages.report.routing import routed_calls, routing_summary
from srbench.stages.stats.basic import percentile, wilson
from srbench.stages.stats.betting import ORDER, Design, make_design
from srbench.stages.stats.paired import exact_weighted_quality, stratified_bootstrap, weighted_hoeffding
from srbench.stages.stats.stopping import analysis_order, measured_prefix, statistics_of
from srbench.targets.routers import DEFAULT_ROUTER

COMPARE_VERSION = "sr-bench-compare-v6"    # v4: a row without an auxiliary field adds 0 of that role;
# v5: limitations name a dataset's evaluation role and named-history exclusion; v6: formal only on the
# pinned, checked sources (evidence.standing and its reason: limitations.evidence_of)
_ROWS = TypeAdapter(list[ComparedRow])
NO_MARGIN = "no pre-declared margin"

__all__ = ["AUX_COST_FIELDS", "COMPARE_VERSION", "CUSTOM", "DEV", "FORMAL", "NO_MARGIN", "STOPPED", "NotComparable",
           "choose_baseline", "compare_reports"]


def _quality(cells: Cells, weights: dict[str, float]) -> Fraction:
    counts: dict[str, list[int]] = {}
    for r in cells.values():
        kn = counts.setdefault(r.benchmark, [0, 0])
        kn[0] += r.ok()
        kn[1] += 1
    return exact_weighted_quality({b: (k, n) for b, (k, n) in counts.items()}, weights)


def _sum(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return None if len(known) < len(values) else float(sum(known))


SCOPES = ("principal", "total", "cache_neutral")


def _costs(cells: Cells, aux_absent: set[str]) -> Costs:
    """Every row of a report carries `judge_cost_usd` (0 when not judged): a row without it comes from a
    report that did not meter judges, so the total is unknown unless no row has it. Only conversation rows
    carry the simulator and scaffolding fields (always, null when unknown): a single call's row without
    them made no such call, 0."""
    rows = list(cells.values())
    principal = _sum([r.cost_usd for r in rows])
    aux = [_sum([0.0 if "judge_cost_usd" in aux_absent else r.judge_cost_usd for r in rows]),
           _sum([r.simulator_cost_usd for r in rows]), _sum([r.scaffolding_cost_usd for r in rows])]
    return Costs(principal=principal, total=_sum([principal, *aux]), auxiliary=_sum(aux),
                 cache_neutral=_sum([r.cache_neutral_cost_usd for r in rows]))


def _operations(cells: Cells) -> Operations:
    rows = list(cells.values())
    done = [r for r in rows if r.state == "completed"]
    lat = [r.latency_s for r in done if r.latency_s is not None]
    ttft = [r.ttft_s for r in done if r.ttft_s is not None]
    usages = [r.usage for r in rows if r.usage is not None]
    tokens = None
    if len(usages) == len(rows):
        tokens = Tokens(input=sum(u.input for u in usages), cached_input=sum(u.cached_input for u in usages),
                        cache_write=sum(u.cache_write for u in usages), output=sum(u.output for u in usages))
    return Operations(latency_p50_s=percentile(lat, 0.5), latency_p95_s=percentile(lat, 0.95),
                      ttft_p50_s=percentile(ttft, 0.5), tokens=tokens,
                      incorrect_by_state=dict(sorted(Counter(r.state for r in rows
                                                             if r.state != "completed").items())))


def _choose_baseline(bplan: Plan, by_target: ByTarget,
                     weights: dict[str, float], aux_absent: set[str]) -> tuple[str, list[TiedBaseline]]:
    singles = [pt.target.id for pt in bplan.targets if pt.target.kind == "single"]
    if not singles:
        raise NotComparable("no_single_baseline", "the baseline run has no single-model target")
    scored = {t: (_quality(by_target[t], weights), _costs(by_target[t], aux_absent)) for t in singles}
    best_q = max(q for q, _ in scored.values())
    tied = sorted((t for t, (q, _) in scored.items() if q == best_q),
                  key=lambda t: (scored[t][1].principal is None, scored[t][1].principal or 0.0, t))
    listed = [TiedBaseline(target_id=t, quality=float(best_q), quality_exact=str(best_q), costs=scored[t][1],
                           cost_complete=scored[t][1].principal is not None) for t in tied]
    return tied[0], listed


def _savings(scope: str, tied: list[TiedBaseline], cand: float | None, blocked: str | None) -> ScopeSaving:
    costs = [(getattr(t.costs, scope), t.target_id) for t in tied]
    known = [(c, t) for c, t in costs if c is not None]
    base, base_id = min(known) if len(known) == len(tied) else (None, None)
    reason, saving, pct = blocked, None, None
    if blocked is None:
        if base is None:
            reason = f"a tied strongest baseline has an unknown {scope} cost"
        elif cand is None:
            reason = f"the candidate's {scope} cost is incomplete (some cell's cost is unknown)"
        elif base <= 0:
            reason = f"the baseline's {scope} cost is 0: no percentage"
        else:
            saving, pct = base - cand, 100.0 * (1.0 - cand / base)
    return ScopeSaving(baseline_target_id=base_id, baseline_usd=base, candidate_usd=cand, saving_usd=saving,
                  saving_pct=pct, reason=reason)


def _candidate(tid: str, kind: str, model: str, cells: Cells,
               best: Cells, weights: dict[str, float], *, order: list[tuple[str, str]],
               design: Design, stats: StatisticsBlock, margin: float | None, formal: bool, label: str,
               stopped: bool, tied: list[TiedBaseline], blocked: str | None, aux_absent: set[str],
               singles: ByTarget | None = None, routing: RoutingFigures | None = None
               ) -> Candidate:
    """One candidate target against the baseline on the compared cases `order` (analysis order);
    `singles`: every single of the baseline run, when the plan adjusts for choosing among them; `routing`: a
    router's figures (None: not a router)."""
    diffs: dict[str, list[int]] = {}
    ordered = []
    for case_id, bench in order:
        d = cells[case_id].ok() - best[case_id].ok()
        diffs.setdefault(bench, []).append(d)
        ordered.append(d)
    q_c, q_b = _quality(cells, weights), _quality(best, weights)
    both = Counter((cells[i].ok(), best[i].ok()) for i in cells)
    per_bench = [_benchmark_delta(b, g, cells, best, weights[b]) for b, g in sorted(diffs.items())]
    per_single = None if singles is None else {t: paired_diffs(cells, s, order) for t, s in singles.items()}
    verdicts = assess(diffs, ordered, design, weights, rule=stats.claim_rule, margin=margin, formal=formal,
                      label=label, stopped=stopped, planning=stats.planning, primary=stats.primary_benchmarks,
                      singles=per_single)
    costs = _costs(cells, aux_absent)
    return Candidate(
        target_id=tid, kind=kind, model=model, n=len(ordered), quality=float(q_c), quality_exact=str(q_c),
        baseline_quality=float(q_b), delta=float(q_c - q_b), delta_exact=str(q_c - q_b),
        micro_delta=sum(ordered) / len(ordered), wins=ordered.count(1), losses=ordered.count(-1),
        ties=ordered.count(0), both_correct=both[(1, 1)], both_wrong=both[(0, 0)], benchmarks=per_bench,
        bootstrap=stratified_bootstrap(diffs, weights), claim_label=label,
        savings=Savings(principal=_savings("principal", tied, costs.principal, blocked),
                        total=_savings("total", tied, costs.total, blocked),
                        cache_neutral=_savings("cache_neutral", tied, costs.cache_neutral, blocked)),
        costs=costs, operations=OperationsPair(baseline=_operations(best), candidate=_operations(cells)),
        routing=routing, **verdicts.fields())     # Verdicts' fields are Candidate's (validated here)


def _benchmark_delta(b: str, g: list[int], cells: Cells, best: Cells,
                     weight: float) -> BenchmarkDelta:
    """The candidate against the baseline on one benchmark's compared cases (REP-1), with its own interval."""
    alone = weighted_hoeffding({b: g}, {b: 1.0})
    ids = [i for i in cells if cells[i].benchmark == b]
    kc, kb = sum(cells[i].ok() for i in ids), sum(best[i].ok() for i in ids)
    return BenchmarkDelta(
        benchmark=b, n=len(g), weight=weight, candidate_correct=kc, baseline_correct=kb,
        candidate_accuracy=kc / len(g), baseline_accuracy=kb / len(g), delta=(kc - kb) / len(g),
        candidate_accuracy_ci95=wilson(kc, len(g)), baseline_accuracy_ci95=wilson(kb, len(g)),
        delta_interval=DeltaInterval(method=alone.method, ci=alone.ci,
                                     scope="this benchmark's cases alone (descriptive, not the claim)"),
        wins=g.count(1), losses=g.count(-1), ties=g.count(0))


def _aux_absent(rows: list[ComparedRow]) -> set[str]:
    return {f for f in AUX_COST_FIELDS if not any(r.has(f) for r in rows)}


def _restrict(by_target: ByTarget, keep: set[str]) -> ByTarget:
    return {t: {c: r for c, r in cells.items() if c in keep} for t, cells in by_target.items()}


def _prefixes(order: list[tuple[str, str]], bby: ByTarget,
              cby: ByTarget, b_stop: bool, c_stop: bool, rule: str) -> tuple[int, int]:
    """(cases the baseline measured, cases compared) in analysis order: all of them unless a run stopped early."""
    if (b_stop or c_stop) and rule != "betting":
        raise NotComparable("early_stop_needs_betting", "a run stopped early; only the anytime-valid betting rule "
                            "makes claims after an early stop, and the candidate plan declares hoeffding")
    b_pre = measured_prefix(order, bby) if b_stop else len(order)
    n_cmp = min(b_pre, measured_prefix(order, cby) if c_stop else len(order))
    if n_cmp == 0:
        raise NotComparable("nothing_measured", "a run stopped early before any case had an outcome for every target")
    return b_pre, n_cmp


def _savings_blocked(baseline_plan: Plan, candidate_plan: Plan, tied: list[TiedBaseline]) -> str | None:
    """Why no saving is claimed at all (None: savings are computed per scope)."""
    if any(p.cost_policy != "require_priced" for p in (baseline_plan, candidate_plan)):
        return "cost_policy capability_only (RUN-6): capability is compared, savings are never claimed"
    if not all(t.cost_complete for t in tied):
        unknown = [t.target_id for t in tied if not t.cost_complete]
        return f"tied strongest baseline target(s) {', '.join(unknown)} have an incomplete principal cost (REP-5)"
    return None


def _routing(t: Target, cells: Cells) -> RoutingFigures | None:
    """A router's model mix, retries and fallbacks (REP-1); None for a target that is not a router."""
    if t.kind != "mom":
        return None
    return routing_summary(t.router or DEFAULT_ROUTER, routed_calls(list(cells.values())), t.max_inference_calls)


def _baseline(plan: Plan, best_id: str, tied: list[TiedBaseline], chosen_on: int) -> BaselineChoice:
    """The comparison's `baseline`: the chosen single target and every one tied with it (REP-5)."""
    model = next(pt.target.model for pt in plan.targets if pt.target.id == best_id)
    return BaselineChoice(target_id=best_id, model=model, quality=tied[0].quality,
                          quality_exact=tied[0].quality_exact, tied_strongest=tied, chosen_on_cases=chosen_on,
                          rule="strongest single target by exact weighted quality; ties: complete and lowest "
                               "principal cost, then target id (REP-5)")


def _stop_info(baseline: ComparedReport, candidate: ComparedReport, compared: int,
               planned: int) -> EarlyStopShortening:
    """How an early stop shortened the compared cases."""
    return EarlyStopShortening(baseline=baseline.early_stop, candidate=candidate.early_stop,
                               compared_cases=compared, planned_cases=planned, order=ORDER)


def compare_reports(baseline_json: Mapping[str, object], baseline_stored: Sequence[Mapping[str, object]],
                    baseline_plan: Plan, candidate_json: Mapping[str, object],
                    candidate_stored: Sequence[Mapping[str, object]], candidate_plan: Plan,
                    *, margin: float | None = None) -> Comparison:
    """Paired live comparison of every target of `candidate` against the strongest single of `baseline`
    (the model; the compare rule adds its notes and stores its dump, validated again). The reports and
    their result rows are the stored JSON; compare reads them through `ComparedReport` and `ComparedRow`."""
    baseline, candidate = ComparedReport.model_validate(baseline_json), ComparedReport.model_validate(candidate_json)
    baseline_rows, candidate_rows = _ROWS.validate_python(baseline_stored), _ROWS.validate_python(candidate_stored)
    stats = statistics_of(candidate_plan)
    margin = declared_margin(margin, stats)
    bcases, bby = run_checks("baseline", baseline, baseline_rows, baseline_plan)
    ccases, cby = run_checks("candidate", candidate, candidate_rows, candidate_plan)
    pair_checks(baseline_plan, candidate_plan, bcases, ccases)
    weights: dict[str, float] = dict(baseline_plan.benchmark_weights)
    order = analysis_order(candidate_rows)
    design = make_design([b for _, b in order], weights)
    b_stop, c_stop = baseline.status == STOPPED, candidate.status == STOPPED
    b_pre, n_cmp = _prefixes(order, bby, cby, b_stop, c_stop, stats.claim_rule)
    compared = order[:n_cmp]
    keep = {c for c, _ in compared}
    aux_absent = _aux_absent(baseline_rows) & _aux_absent(candidate_rows)
    best_id, tied = _choose_baseline(baseline_plan, _restrict(bby, {c for c, _ in order[:b_pre]}), weights, aux_absent)
    bby, cby = _restrict(bby, keep), _restrict(cby, keep)
    if n_cmp < b_pre:           # chosen on all it measured; costs for savings on the compared cases only
        costs = {t.target_id: _costs(bby[t.target_id], aux_absent) for t in tied}
        tied = [t.model_copy(update={"costs": costs[t.target_id],
                                     "cost_complete": costs[t.target_id].principal is not None}) for t in tied]
    evidence = evidence_of(baseline_plan, candidate_plan)
    formal, label = evidence.formal, evidence.label
    blocked = _savings_blocked(baseline_plan, candidate_plan, tied)
    models = {pt.target.id: pt.target for pt in candidate_plan.targets}
    singles = None
    if stats.baseline_selection == "adjusted":      # the K singles the baseline is chosen among
        singles = {pt.target.id: bby[pt.target.id] for pt in baseline_plan.targets if pt.target.kind == "single"}
    candidates = [_candidate(t, models[t].kind, models[t].model, cby[t], bby[best_id], weights, order=compared,
                             design=design, stats=stats, margin=margin, formal=formal, label=label,
                             stopped=b_stop or c_stop, tied=tied, blocked=blocked, aux_absent=aux_absent,
                             singles=singles, routing=_routing(models[t], cby[t]))
                  for t in models]
    stop_info = _stop_info(baseline, candidate, n_cmp, len(order)) if b_stop or c_stop else None
    limitations = (comparison_limitations(str(baseline.status), str(candidate.status), baseline_plan, evidence, tied,
                                          candidates, aux_absent)
                   + operational_limitations(baseline_plan, candidate_plan)
                   + statistics_limitations(stats, statistics_of(baseline_plan), stop_info))
    selection = None
    if singles is not None:
        selection = selection_summary(len(singles), list(singles), stats.claim_rule)
        limitations[0] = selection_limitation(len(singles))
    out = Comparison(
        kind="comparison", schema_=1, version=VERSION, compare_version=COMPARE_VERSION,
        baseline_run=run_info(baseline, baseline_plan), candidate_run=run_info(candidate, candidate_plan),
        case_sha256=baseline_plan.case_sha256, cases=n_cmp, planned_cases=len(order),
        benchmarks=sorted({r.benchmark for r in bby[best_id].values()}), benchmark_weights=weights,
        evidence=evidence,
        margin=margin, claim_rule=stats.claim_rule, statistics=StatisticsBlock.model_validate(stats.dump()),
        early_stop=stop_info, baseline=_baseline(baseline_plan, best_id, tied, b_pre), savings_blocked=blocked,
        candidates=candidates, limitations=limitations)
    return out if selection is None else out.model_copy(update={"selection": selection})


# Public name for the service's early-stop monitor, which chooses a run's baseline the same way.
choose_baseline = _choose_baseline
