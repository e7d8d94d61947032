"""Routing diagnostics (issue 43): a pure function from two stored runs — the singles of a baseline run, the
routers of a candidate run, on the same frozen cases — to a `Diagnosis`. No model is called; the diagnose rule
(stages/derived/diagnose_rule.py) memoises it like compare. Every figure is defined in docs/statistics.md.

The two runs must be comparable as compare says (`run_checks`, `pair_checks`: same cases, same protocol). A run
that stopped early is diagnosed on the cases where every target of both runs has a terminal outcome.

Outcome matrix: per case i, y_s,i = 1 when single s completed with a correct answer (else 0), c_s,i its principal
cost; the router's y_r,i, c_r,i and the model it says served the case (a single's when that model is one of the
baseline run's singles' models, else "elsewhere").
Oracle ceiling o_i = max_s y_s,i. Cheapest-correct oracle: case i goes to the cheapest s with y_s,i = 1 (ties:
target id), or to the cheapest single when none is correct; its accuracy is the ceiling's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from pydantic import TypeAdapter

from srbench import VERSION
from srbench.errors import InvalidInput
from srbench.schemas.comparison_inputs import ComparedReport
from srbench.schemas.diagnosis import (
    CaseOutcome,
    DiagnosedRow,
    Diagnosis,
    Difference,
    Headroom,
    OracleFigures,
    RouterDiagnosis,
    SingleCell,
    SingleFigures,
)
from srbench.schemas.plan import Plan
from srbench.stages.compare.build import choose_baseline
from srbench.stages.compare.checks import ByTarget, pair_checks, run_checks
from srbench.stages.compare.losses import confusion, losses, optimality, overhead, regret
from srbench.stages.stats.paired import exact_weighted_quality, weighted_hoeffding, weighted_mean_hoeffding
from srbench.stages.stats.stopping import TERMINAL_CELL

# v2: a benchmark of one subject has no subject rows; v3: ceiling_cost_usd; v4: optimal cost is RouterArena's mean of
# per-case ratios (it was the ratio of the two sums), with cost_ratio_cases
DIAGNOSE_VERSION = "sr-bench-diagnose-v4"
ALPHA = 0.05
_ROWS = TypeAdapter(list[DiagnosedRow])
Rows = dict[str, DiagnosedRow]
"""One target's rows by case id."""
HeadersOf = Callable[[str], Mapping[str, str]]
"""A call record's digest → its response headers."""
STATISTICS = [
    "oracle ceiling: weighted quality of o_i = max_s y_s,i with the weighted Hoeffding interval for a mean of 0/1 "
    "outcomes at alpha 0.05 (stages/stats/paired.py weighted_mean_hoeffding)",
    "headroom: oracle - best single and router - best single, each a paired difference with REP-6's weighted "
    "Hoeffding interval at alpha/2; the share captured takes its interval from both (joint 95 % by Bonferroni); "
    "the gap to the oracle at alpha",
    "optimal selection rate: a proportion of cases with its Wilson 95 % interval; optimal cost is the mean of the "
    "per-case cost ratios and optimal accuracy the ratio of two accuracies, as RouterArena (arXiv 2510.00202) "
    "defines them (descriptive, no interval)",
    "regret, confusion, losses and overhead describe the measured cases (no interval); overhead percentiles are "
    "numpy's linear percentiles of the paired differences",
    "costs are the principal costs of these cases as priced by the runs (their sums, no interval)",
]


def _sum(values: Sequence[float | None]) -> float | None:
    return None if any(v is None for v in values) else float(sum(v for v in values if v is not None))


def weighted_quality(outcomes: Mapping[str, int], bench: Mapping[str, str], weights: Mapping[str, float]) -> float:
    """Q = Σ_b W_b·k_b/n_b / Σ_b W_b of 0/1 outcomes by case."""
    counts: dict[str, tuple[int, int]] = {}
    for case, y in outcomes.items():
        k, n = counts.get(bench[case], (0, 0))
        counts[bench[case]] = (k + y, n + 1)
    return float(exact_weighted_quality(counts, weights))


def _by_bench(values: Mapping[str, int], bench: Mapping[str, str]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for case in sorted(values):
        out.setdefault(bench[case], []).append(values[case])
    return out


def _diff(a: Mapping[str, int], b: Mapping[str, int], bench: Mapping[str, str], weights: Mapping[str, float],
          alpha: float) -> Difference:
    h = weighted_hoeffding(_by_bench({c: a[c] - b[c] for c in a}, bench), weights, alpha)
    return Difference(estimate=h.estimate, ci=list(h.ci), alpha=alpha)


def headroom(oracle: Mapping[str, int], best: Mapping[str, int], router: Mapping[str, int],
             bench: Mapping[str, str], weights: Mapping[str, float]) -> Headroom:
    """The router's place between the best single and the oracle: available = Q_o − Q_best, gained = Q_r − Q_best
    (each at α/2), captured = gained / available with the corner bounds of the two intervals when the available
    headroom's lower bound is above 0."""
    avail = _diff(oracle, best, bench, weights, ALPHA / 2)
    gained = _diff(router, best, bench, weights, ALPHA / 2)
    gap = _diff(oracle, router, bench, weights, ALPHA)
    pct, ci, reason = None, None, None
    if avail.estimate <= 0:
        reason = "no headroom: no single answers a case the best single misses"
    else:
        pct = 100.0 * gained.estimate / avail.estimate
        (a, b), (c, d) = gained.ci, avail.ci
        if c <= 0:
            reason = "the available headroom's interval reaches 0: the share captured is unbounded at this size"
        else:
            ci = [100.0 * min(a / c, a / d), 100.0 * max(b / c, b / d)]
    return Headroom(available=avail, gained=gained, gap_to_oracle=gap, captured_pct=pct, captured_ci_pct=ci,
                    reason=reason)


def _cheapest(cells: list[SingleCell]) -> str | None:
    """The cheapest correct single (ties: target id), the cheapest of all when none is correct; None when a
    cost that choice needs is unknown."""
    pool = [c for c in cells if c.correct] or cells
    if any(c.cost_usd is None for c in pool):
        return None
    return min(pool, key=lambda c: (c.cost_usd or 0.0, c.target_id)).target_id


def _case(case: str, singles: dict[str, Rows], router: DiagnosedRow, model_of: Mapping[str, str]) -> CaseOutcome:
    cells = [SingleCell(target_id=t, correct=bool(rows[case].ok()), cost_usd=_num(rows[case].cost_usd))
             for t, rows in singles.items()]
    served = router.served()
    served_single = next((t for t in singles if model_of[t] == served), None) if served else None
    correct = [c for c in cells if c.correct]
    optimal = None
    if correct and served_single is not None:
        known = [c.cost_usd for c in correct if c.cost_usd is not None]
        mine = next(c for c in cells if c.target_id == served_single)
        optimal = mine.correct and mine.cost_usd is not None and len(known) == len(correct) and mine.cost_usd <= min(known)
    first = next(iter(singles.values()))[case]
    return CaseOutcome(case_id=case, benchmark=first.benchmark, stratum=first.stratum, singles=cells,
                       oracle_correct=bool(correct), cheapest_correct=_cheapest(cells),
                       router_correct=bool(router.ok()), router_cost_usd=_num(router.cost_usd), served_model=served,
                       served_single=served_single, optimal=optimal)


def _num(v: float | int | None) -> float | None:
    return None if v is None else float(v)


def _stays(c: CaseOutcome, best: str) -> bool:
    """The best single keeps the case: it answered it correctly, or no single did."""
    return not c.oracle_correct or any(s.correct for s in c.singles if s.target_id == best)


def _oracle(matrix: list[CaseOutcome], singles: dict[str, Rows], best: str, weights: Mapping[str, float],
            bench: Mapping[str, str]) -> OracleFigures:
    cost = {(c.case_id, s.target_id): s.cost_usd for c in matrix for s in c.singles}
    picks: dict[str, int] = {}
    for c in matrix:
        if c.cheapest_correct is not None:
            picks[c.cheapest_correct] = picks.get(c.cheapest_correct, 0) + 1
    unknown = [c.case_id for c in matrix if c.cheapest_correct is None]
    cheapest = None if unknown else _sum([cost[(c.case_id, c.cheapest_correct or "")] for c in matrix])
    reason = f"{len(unknown)} case(s) need a single's unknown cost (first: {unknown[0]})" if unknown else None
    oracle = {c.case_id: int(c.oracle_correct) for c in matrix}
    stay = [cost[(c.case_id, best)] if c.cheapest_correct is not None and _stays(c, best)
            else cost.get((c.case_id, c.cheapest_correct or "")) for c in matrix]
    return OracleFigures(
        quality=weighted_mean_hoeffding(_by_bench(oracle, bench), weights, ALPHA),
        cases_no_single_correct=sum(1 for c in matrix if not c.oracle_correct),
        cheapest_cost_usd=cheapest, cheapest_cost_reason=reason, ceiling_cost_usd=_sum(stay), cheapest_picks=dict(sorted(picks.items())),
        best_single=best, best_single_quality=weighted_quality({c: singles[best][c].ok() for c in oracle}, bench, weights),
        best_single_cost_usd=_sum([_num(r.cost_usd) for r in singles[best].values()]))


def _compared(bby: dict[str, Rows], cby: dict[str, Rows]) -> list[str]:
    """The cases every target of both runs has a terminal outcome for."""
    cases = set(next(iter(bby.values())))
    done = [c for c in sorted(cases) if all(rows[c].state in TERMINAL_CELL for rows in (*bby.values(), *cby.values()))]
    if not done:
        raise InvalidInput("nothing to diagnose: no case has an outcome for every target of both runs",
                           code="nothing_measured")
    return done


def _rows_by_target(side: str, report: ComparedReport, stored: Sequence[Mapping[str, object]],
                    plan: Plan) -> tuple[set[str], dict[str, Rows]]:
    rows = _ROWS.validate_python(stored)
    cases, _ = run_checks(side, report, list(rows), plan)
    out: dict[str, Rows] = {pt.target.id: {} for pt in plan.targets}
    for r in rows:
        out[r.target_id][r.case_id] = r
    return cases, out


def diagnose(baseline_json: Mapping[str, object], baseline_stored: Sequence[Mapping[str, object]],
             baseline_plan: Plan, candidate_json: Mapping[str, object],
             candidate_stored: Sequence[Mapping[str, object]], candidate_plan: Plan,
             headers_of: HeadersOf | None = None) -> Diagnosis:
    """The routing diagnosis of every router (kind mom) of the candidate run against the singles of the baseline
    run; `headers_of` reads a loss's router call headers (None: not read)."""
    breport, creport = ComparedReport.model_validate(baseline_json), ComparedReport.model_validate(candidate_json)
    bcases, bby = _rows_by_target("baseline", breport, baseline_stored, baseline_plan)
    ccases, cby = _rows_by_target("candidate", creport, candidate_stored, candidate_plan)
    pair_checks(baseline_plan, candidate_plan, bcases, ccases)
    single_ids = [pt.target.id for pt in baseline_plan.targets if pt.target.kind == "single"]
    routers = [pt.target.id for pt in candidate_plan.targets if pt.target.kind == "mom"]
    if not single_ids:
        raise InvalidInput("nothing to diagnose: the baseline run has no single-model target", code="no_single_baseline")
    if not routers:
        raise InvalidInput("nothing to diagnose: the candidate run has no router target (kind mom); give the run "
                           "that measured the router as the candidate", code="no_router")
    keep = _compared({t: bby[t] for t in single_ids}, {t: cby[t] for t in routers})
    singles = {t: {c: bby[t][c] for c in keep} for t in single_ids}
    weights = {b: float(w) for b, w in baseline_plan.benchmark_weights.items()}
    by_target: ByTarget = {t: dict(rows) for t, rows in singles.items()}
    best, _ = choose_baseline(baseline_plan, by_target, weights, set())
    model_of = {pt.target.id: pt.target.model for pt in baseline_plan.targets}
    bench = {c: singles[best][c].benchmark for c in keep}
    first = _case_table(keep, singles, cby[routers[0]], model_of)
    out = [_router(t, keep, singles, cby[t], model_of, best, weights, bench, breport.run_id, creport.run_id,
                   headers_of) for t in routers]
    return Diagnosis(
        version=VERSION, diagnose_version=DIAGNOSE_VERSION, baseline_run=breport.run_id, candidate_run=creport.run_id,
        cases=len(keep), benchmark_weights={b: float(w) for b, w in weights.items()},
        singles=[SingleFigures(target_id=t, model=model_of[t],
                               quality=weighted_quality({c: r.ok() for c, r in singles[t].items()}, bench, weights),
                               cost_usd=_sum([_num(r.cost_usd) for r in singles[t].values()])) for t in single_ids],
        oracle=_oracle(first, singles, best, weights, bench), routers=out, statistics=STATISTICS)


def _case_table(keep: list[str], singles: dict[str, Rows], router: Rows,
                model_of: Mapping[str, str]) -> list[CaseOutcome]:
    return [_case(c, singles, router[c], model_of) for c in keep]


def _router(tid: str, keep: list[str], singles: dict[str, Rows], rows: Rows, model_of: Mapping[str, str],
            best: str, weights: Mapping[str, float], bench: Mapping[str, str], brun: str | None, crun: str | None,
            headers_of: HeadersOf | None) -> RouterDiagnosis:
    matrix = _case_table(keep, singles, rows, model_of)
    oracle = {c.case_id: int(c.oracle_correct) for c in matrix}
    mine = {c.case_id: int(c.router_correct) for c in matrix}
    best_y = {c: singles[best][c].ok() for c in keep}
    found, unknown = losses(matrix, singles, rows, model_of, brun, crun, headers_of)
    return RouterDiagnosis(
        target_id=tid, quality=weighted_quality(mine, bench, weights),
        cost_usd=_sum([c.router_cost_usd for c in matrix]), headroom=headroom(oracle, best_y, mine, bench, weights),
        optimality=optimality(matrix), regret=regret(matrix), confusion=confusion(matrix, model_of),
        losses=found, losses_cost_unknown=unknown, ttft=overhead(matrix, singles, rows, "ttft_s"),
        latency=overhead(matrix, singles, rows, "latency_s"), cases=matrix)


__all__ = ["DIAGNOSE_VERSION", "diagnose", "headroom", "weighted_quality"]
