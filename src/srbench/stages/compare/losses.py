"""Routing diagnostics over an outcome matrix (stages/compare/diagnose.py, issue 43): RouterArena's optimality,
regret per benchmark and subject, the routing confusion table, the losses with their evidence and the routing
overhead. Pure functions of the matrix and the stored rows; definitions in docs/statistics.md."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from typing import Literal

from srbench.schemas.diagnosis import (
    COST_UNKNOWN,
    NONE_CORRECT,
    UNATTRIBUTED,
    AnswerEvidence,
    CaseOutcome,
    ConfusionCell,
    DiagnosedRow,
    Loss,
    Optimality,
    Overhead,
    Regret,
)
from srbench.stages.stats.basic import percentile, wilson

Rows = dict[str, DiagnosedRow]
HeadersOf = Callable[[str], Mapping[str, str]]


def _sum(values: list[float | None]) -> float | None:
    return None if any(v is None for v in values) else float(sum(v for v in values if v is not None))


def _cost(c: CaseOutcome, target: str | None) -> float | None:
    return next((s.cost_usd for s in c.singles if s.target_id == target), None)


def cost_ratio(solvable: list[CaseOutcome]) -> tuple[float | None, int | None]:
    """RouterArena's optimal cost (arXiv 2510.00202): the mean over the cases of cost_opt / cost_actual, as a
    percentage, and the cases it is over; (None, None) when a cost it needs is unknown. A router cost of 0 gives 1
    against a cheapest correct cost of 0 and no ratio otherwise (that case is left out, `cost_ratio_cases` says)."""
    ratios: list[float] = []
    for c in solvable:
        best = _cost(c, c.cheapest_correct) if c.cheapest_correct else None
        if best is None or c.router_cost_usd is None:
            return None, None
        if c.router_cost_usd > 0:
            ratios.append(best / c.router_cost_usd)
        elif best == 0:
            ratios.append(1.0)
    return (100.0 * sum(ratios) / len(ratios) if ratios else None), len(ratios)


def optimality(matrix: list[CaseOutcome]) -> Optimality:
    """RouterArena's three figures on the cases the router served with one of the singles (`served_single`);
    the others are counted and named. Selection and cost on the cases some single answered correctly."""
    pool = [c for c in matrix if c.served_single is not None]
    away = [c for c in matrix if c.served_single is None]
    solvable = [c for c in pool if c.oracle_correct]
    hits = sum(1 for c in solvable if c.optimal)
    router_cost = _sum([c.router_cost_usd for c in solvable])
    cheapest = _sum([_cost(c, c.cheapest_correct) if c.cheapest_correct else None for c in solvable])
    ratio, ratio_cases = cost_ratio(solvable)
    r_acc = sum(c.router_correct for c in pool) / len(pool) if pool else None
    o_acc = sum(c.oracle_correct for c in pool) / len(pool) if pool else None
    return Optimality(
        cases_in_pool=len(pool), cases_elsewhere=len(away),
        elsewhere_models=dict(sorted(Counter(c.served_model or UNATTRIBUTED for c in away).items())),
        elsewhere_cases=[c.case_id for c in away], cases_with_correct_single=len(solvable), optimal_selections=hits,
        selection_rate=hits / len(solvable) if solvable else None, selection_ci95=wilson(hits, len(solvable)),
        router_cost_usd=router_cost, cheapest_correct_cost_usd=cheapest,
        cost_ratio_pct=ratio, cost_ratio_cases=ratio_cases,
        router_accuracy=r_acc, oracle_accuracy=o_acc,
        accuracy_ratio_pct=100.0 * r_acc / o_acc if r_acc is not None and o_acc else None)


def _regret(benchmark: str, stratum: str | None, cases: list[CaseOutcome]) -> Regret:
    n = len(cases)
    r_acc, o_acc = sum(c.router_correct for c in cases) / n, sum(c.oracle_correct for c in cases) / n
    r_cost = _sum([c.router_cost_usd for c in cases])
    o_cost = _sum([_cost(c, c.cheapest_correct) if c.cheapest_correct else None for c in cases])
    return Regret(benchmark=benchmark, stratum=stratum, n=n, router_accuracy=r_acc, oracle_accuracy=o_acc,
                  quality_points=100.0 * (o_acc - r_acc), router_cost_usd=r_cost, cheapest_correct_cost_usd=o_cost,
                  dollars=None if r_cost is None or o_cost is None else r_cost - o_cost)


def regret(matrix: list[CaseOutcome]) -> list[Regret]:
    """Per benchmark (stratum None), then per subject of it, in name order (a benchmark whose cases are all one
    subject has only its own row)."""
    groups: dict[tuple[str, str | None], list[CaseOutcome]] = {}
    for c in matrix:
        groups.setdefault((c.benchmark, None), []).append(c)
        if c.stratum is not None:
            groups.setdefault((c.benchmark, c.stratum), []).append(c)
    for b, s in [k for k in groups if k[1] is not None]:
        if len(groups[(b, s)]) == len(groups[(b, None)]):       # one subject: the benchmark's own row says it
            del groups[(b, s)]
    return [_regret(b, s, cs) for (b, s), cs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] or ""))]


def _column(c: CaseOutcome, model_of: Mapping[str, str]) -> str:
    if not c.oracle_correct:
        return NONE_CORRECT
    return model_of[c.cheapest_correct] if c.cheapest_correct else COST_UNKNOWN


def confusion(matrix: list[CaseOutcome], model_of: Mapping[str, str]) -> list[ConfusionCell]:
    """Model served × the cheapest correct single's model (``(none correct)``: no single answered the case)."""
    counts = Counter((c.served_model or UNATTRIBUTED, _column(c, model_of)) for c in matrix)
    return [ConfusionCell(served=s, cheapest_correct=k, cases=n) for (s, k), n in sorted(counts.items())]


def _evidence(run: str | None, row: DiagnosedRow, model: str | None) -> AnswerEvidence:
    return AnswerEvidence(run_id=run, cell_id=row.cell_id, call=row.call, target_id=row.target_id, model=model,
                          correct=bool(row.ok()), cost_usd=None if row.cost_usd is None else float(row.cost_usd))


def _routing_headers(headers_of: HeadersOf | None, call: str | None) -> dict[str, str]:
    if headers_of is None or call is None:
        return {}
    return {k: v for k, v in sorted(headers_of(call).items()) if k.lower().startswith("x-")}


def losses(matrix: list[CaseOutcome], singles: dict[str, Rows], rows: Rows, model_of: Mapping[str, str],
           brun: str | None, crun: str | None, headers_of: HeadersOf | None) -> tuple[list[Loss], int]:
    """Cases the router answered wrongly where a single with a cost ≤ the router's on that case (the served
    single's cost when the router's is unknown) answered correctly: the cheapest such single (ties: target id).
    Also how many failed cases had a correct single but a cost too unknown to say."""
    out, unknown = [], 0
    for c in matrix:
        if c.router_correct or not c.oracle_correct:
            continue
        paid = c.router_cost_usd if c.router_cost_usd is not None else _cost(c, c.served_single)
        correct = [s for s in c.singles if s.correct]
        if paid is None or any(s.cost_usd is None for s in correct):
            unknown += 1
            continue
        cheaper = sorted((s for s in correct if (s.cost_usd or 0.0) <= paid), key=lambda s: (s.cost_usd, s.target_id))
        if not cheaper:
            continue
        win = cheaper[0].target_id
        r = rows[c.case_id]
        out.append(Loss(case_id=c.case_id, benchmark=c.benchmark, stratum=c.stratum,
                        router=_evidence(crun, r, c.served_model), decision=r.decision,
                        headers=_routing_headers(headers_of, r.call),
                        single=_evidence(brun, singles[win][c.case_id], model_of[win])))
    return out, unknown


def overhead(matrix: list[CaseOutcome], singles: dict[str, Rows], rows: Rows,
             field: Literal["ttft_s", "latency_s"]) -> Overhead:
    """Router − the served model called directly, on the cases both completed with the figure known."""
    mine, direct = [], []
    for c in matrix:
        if c.served_single is None:
            continue
        r, d = rows[c.case_id], singles[c.served_single][c.case_id]
        a, b = getattr(r, field), getattr(d, field)
        if r.state == "completed" and d.state == "completed" and a is not None and b is not None:
            mine.append(float(a))
            direct.append(float(b))
    diffs = [a - b for a, b in zip(mine, direct, strict=True)]
    return Overhead(pairs=len(diffs), p50_s=percentile(diffs, 0.5), p95_s=percentile(diffs, 0.95),
                    router_p50_s=percentile(mine, 0.5), direct_p50_s=percentile(direct, 0.5))
