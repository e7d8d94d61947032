"""Stopping a paid run early, validly: the plan's statistics block, the dispatch order, the measured
prefix, and the decision at a look. Pure functions; the service's monitor and `compare` share them.

- `statistics_of(plan)`: the declared block, or its defaults (Hoeffding makes claims, no stop, the
  baseline's selection ignored: what a stored plan without those fields means).
- `dispatch_order(plan, cases)`: with early stopping declared, the cases in `benchmark-interleave-v1`
  order (see `betting`); otherwise unchanged. The order is a function of the frozen plan, so the
  cases a stopped run measured are well defined: a prefix of it.
- `analysis_order(rows)`: the same order rebuilt from a run's result rows (each benchmark's cases in
  plan order, i.e. by `seq`, then interleaved — the interleave only looks at each benchmark's own
  order, so it gives the same order whether the run dispatched interleaved or not).
- `measured_prefix(order, cells)`: how many leading cases of the order have a terminal outcome for
  every target. A stopped run is analysed on that prefix and nothing after it, whatever finished
  later out of order.
- `decide(d, design, margin)`: at a look on a prefix, with the running intersection
  [lower, upper] of the betting interval and how far the remaining cases could move it
  (`betting.reach_bounds`). The question: non-inferiority when a margin is declared (settled when
  lower > −m or upper < −m), otherwise improvement / regression (settled when lower > 0 or
  upper < 0). It is `unreachable` when no outcome of the remaining cases could settle it:
  max(lower, best_lower) ≤ t and min(upper, worst_upper) ≥ t for the question's threshold t
  (0, or −m). Either way the run may stop: the betting interval is valid at any data-dependent
  prefix, so the claim the comparison makes on the measured prefix keeps its 95 %.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np

from srbench.benchmarks import get
from srbench.schemas.cell import TERMINAL_CELL_STATES
from srbench.schemas.comparison_inputs import ComparedRow
from srbench.schemas.intervals import StatisticsBlock, StopDecision
from srbench.schemas.plan import Plan, Statistics
from srbench.stages.stats.betting import Design, interleave, reach_bounds

TERMINAL_CELL = TERMINAL_CELL_STATES

__all__ = ["statistics_of", "statistics_problems", "dispatch_order", "analysis_order", "measured_prefix", "decide",
           "decision",
           "look_step"]


def statistics_of(plan: Plan | Mapping[str, Any]) -> StatisticsBlock:
    """The plan's statistics block with every default filled in (the stored form leaves defaults out)."""
    s = (plan.statistics or Statistics()) if isinstance(plan, Plan) else Statistics.model_validate(
        plan.get("statistics") or {})
    return StatisticsBlock(claim_rule=s.claim_rule, margin=s.margin, primary_benchmarks=s.primary_benchmarks,
                           planning=s.planning, early_stop=s.early_stop, baseline_selection=s.baseline_selection)


def statistics_problems(plan: Plan) -> list[str]:
    """What a plan's statistics block cannot do with its mode and targets."""
    stats = plan.statistics
    if stats is None or stats.early_stop is None:
        return []
    out = []
    if plan.mode != "live":
        out.append("statistics.early_stop applies to live runs only")
    kinds = [pt.target.kind for pt in plan.targets]
    if stats.early_stop.baseline_run is None and not ("single" in kinds and "mom" in kinds):
        out.append("statistics.early_stop without baseline_run compares the router with the strongest single model "
                   "of the same run: the plan needs at least one single and one mom target (or name a "
                   "baseline_run)")
    if plan.execution_cells is not None:
        out.append("statistics.early_stop does not apply to a recovery child (its cells are a selection)")
    sandboxed = sorted(b for b in plan.dataset.benchmarks
                       if getattr(_benchmark(b), "needs_sandbox", False))
    if sandboxed:   # the monitor grades as cells settle; a sandbox fault must never count as a wrong answer
        out.append(f"statistics.early_stop is not available yet with sandbox-graded benchmarks ({', '.join(sandboxed)})")
    return out


def _benchmark(benchmark_id: str) -> Any:
    try:
        return get(benchmark_id)
    except Exception:  # noqa: BLE001 - an unknown benchmark is reported by the plan's own checks
        return None


def dispatch_order(plan: Plan | Mapping[str, Any], cases: Sequence[Any]) -> list[Any]:
    """The cases in the order they are dispatched: interleaved across benchmarks with early stopping."""
    if statistics_of(plan).early_stop is None:
        return list(cases)
    return [cases[i] for i in interleave([c.benchmark for c in cases])]


def analysis_order(rows: Sequence[ComparedRow]) -> list[tuple[str, str]]:
    """(case id, benchmark) of every planned case of a run, in `benchmark-interleave-v1` order."""
    first: dict[str, tuple[int, str]] = {}
    for r in rows:
        seq = int(r.seq or 0)
        if r.case_id not in first or seq < first[r.case_id][0]:
            first[r.case_id] = (seq, r.benchmark)
    planned = sorted(first.items(), key=lambda kv: (kv[1][0], kv[0]))
    benches = [b for _, (_, b) in planned]
    return [(planned[i][0], benches[i]) for i in interleave(benches)]


def measured_prefix(order: Sequence[tuple[str, str]], cells: Mapping[str, Mapping[str, ComparedRow]]) -> int:
    """Leading cases of `order` whose cell has a terminal outcome for every target of `cells`."""
    for k, (case_id, _) in enumerate(order):
        for by_case in cells.values():
            row = by_case.get(case_id)
            if row is None or row.state not in TERMINAL_CELL:
                return k
    return len(order)


def look_step(planned_cases: int) -> int:
    """Looks happen every this many measured cases (about 200 looks a run; every look is valid)."""
    return max(1, planned_cases // 200)


def decide(d: Sequence[int], design: Design, margin: float | None = None) -> StopDecision:
    """The stopping decision on the prefix `d` (paired differences in analysis order)."""
    arr = np.asarray([int(v) for v in d], dtype=float)[None, :]
    lo, hi, best_lo, worst_hi = reach_bounds(arr, design)
    lower, upper = float(np.max(lo)), float(np.min(hi))
    best, worst = float(best_lo[0, -1]), float(worst_hi[0, -1])
    return decision(int(arr.shape[1]), lower, upper, max(lower, best), min(upper, worst), margin)


def decision(n: int, lower: float, upper: float, best_lower: float, worst_upper: float,
             margin: float | None) -> StopDecision:
    """The stopping decision from the running bounds and the bounds the remaining cases could reach."""
    threshold = 0.0 if margin is None else -float(margin)
    sign = margin is None
    state: Literal["settled", "unreachable", "continue"] = "continue"
    verdict: Literal["improvement", "regression", "non_inferior", "inferior", "inconclusive"] | None = None
    if lower > threshold:
        state, verdict = "settled", "improvement" if sign else "non_inferior"
    elif upper < threshold:
        state, verdict = "settled", "regression" if sign else "inferior"
    elif best_lower <= threshold and worst_upper >= threshold:
        state, verdict = "unreachable", "inconclusive"
    return StopDecision(state=state, verdict=verdict, question="sign" if sign else "non_inferiority",
                        threshold=threshold, n=n, lower=lower, upper=upper, best_lower=best_lower,
                        worst_upper=worst_upper)
