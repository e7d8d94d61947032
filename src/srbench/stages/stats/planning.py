"""The sample-size planning of a live plan (what `sr-bench plan` prints, the plan route answers and the
Dashboard's review shows): both claim rules at the plan's planning assumptions (`power.power_plan`),
each with the per-benchmark sizes that reach the wanted power (`sizing.sizes_needed`, capped at the
cases each benchmark's pinned source holds), and the detectable effect over a few tie rates. A comparison's
inconclusive claim of a new plan is sized the same way (`sized_plan`, `stages/compare/claims.py`), each answer
remembered by its inputs."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping

from srbench.benchmarks.pins import source_tasks
from srbench.schemas.intervals import Planning, PowerPlan, SizesNeeded
from srbench.schemas.plan import EarlyStop, Plan
from srbench.stages.stats.power import MODEL, detectable_effect, power_plan
from srbench.stages.stats.sizing import sizes_needed
from srbench.stages.stats.stopping import statistics_of

TIE_RATES = (0.0, 0.5, 0.8, 0.9)

__all__ = ["TIE_RATES", "planning_for", "with_sizes", "sized_plan", "available_cases"]


def _filled(early_stop: EarlyStop | None) -> EarlyStop | None:
    """The early-stop block with every default set, so that an answer written with only the set fields shows them."""
    return None if early_stop is None else EarlyStop.model_validate(early_stop.model_dump())


def available_cases(benchmarks: Iterable[str]) -> dict[str, int]:
    """The most cases each benchmark's pinned source holds (`pins.source_tasks`), where known."""
    return {b: n for b in benchmarks if (n := source_tasks(b)) is not None}


def with_sizes(out: PowerPlan, counts: Mapping[str, int], weights: Mapping[str, float],
               available: Mapping[str, int], cost: Mapping[str, float] | None) -> PowerPlan:
    """`out` with its per-benchmark sizes for the effect (and the margin, when one is declared)."""
    def size(delta: float, threshold: float) -> SizesNeeded:
        return sizes_needed(out.rule, counts, weights, out.tie_rate, delta, threshold, out.power, out.alpha,
                            out.singles, available, cost)
    update: dict[str, object] = {}
    if out.power_at_effect is not None:
        update["sized_for_effect"] = size(out.effect, 0.0)
    if out.power_non_inferiority is not None and out.margin is not None:
        update["sized_for_margin"] = size(0.0, -out.margin)
    return out.model_copy(update=update)


def sized_plan(counts: Mapping[str, int], weights: Mapping[str, float], *, rule: str, tie_rate: float, effect: float,
               margin: float | None, power: float, singles: int | None, available: Mapping[str, int],
               cost: Mapping[str, float] | None) -> PowerPlan:
    """`power.power_plan` with its per-benchmark sizes (`with_sizes`), remembered by its inputs: a comparison
    sizes each inconclusive candidate at the plan's tie rate and the one it observed, the in-run report
    again at every refresh, and the same inputs always give the same answer."""
    names = sorted(counts)
    return _sized_plan(rule, tuple((b, counts[b]) for b in names), tuple((b, weights.get(b)) for b in names),
                       tie_rate, effect, margin, power, singles, tuple(sorted(available.items())),
                       None if cost is None else tuple((b, cost.get(b)) for b in names))


@functools.lru_cache(maxsize=64)
def _sized_plan(rule: str, count_items: tuple[tuple[str, int], ...], weight_items: tuple[tuple[str, float | None], ...],
                tie_rate: float, effect: float, margin: float | None, power: float, singles: int | None,
                available: tuple[tuple[str, int], ...], cost: tuple[tuple[str, float | None], ...] | None) -> PowerPlan:
    counts = dict(count_items)
    weights = {b: w for b, w in weight_items if w is not None}
    costs = None if cost is None else {b: c for b, c in cost if c is not None}
    out = power_plan(counts, weights, rule=rule, tie_rate=tie_rate, effect=effect, margin=margin, power=power,
                     singles=singles)
    return with_sizes(out, counts, weights, dict(available), costs)


def planning_for(plan: Plan, counts: Mapping[str, int], available: Mapping[str, int] | None = None,
                 cost: Mapping[str, float] | None = None) -> Planning:
    """What `sr-bench plan` prints and the Dashboard's review shows: the declared rule first, the other
    beside it, at the plan's planning assumptions, and the detectable effect over a few tie rates.
    A plan that adjusts for the baseline's selection plans against K = its single targets (at least 1).
    `available`: the most cases each benchmark's source holds; `cost`: every benchmark's upper cost per
    case (sizes by cost; None: by the fewest cases)."""
    stats = statistics_of(plan)
    declared = stats.claim_rule
    other = "betting" if declared == "hoeffding" else "hoeffding"
    weights = plan.benchmark_weights
    p = stats.planning
    k = None
    if stats.baseline_selection == "adjusted":
        k = max(1, sum(pt.target.kind == "single" for pt in plan.targets))
    effect, margin = min(p.effect, 1 - p.tie_rate), stats.margin

    def plan_for(rule: str) -> PowerPlan:
        return sized_plan(counts, weights, rule=rule, tie_rate=p.tie_rate, effect=effect, margin=margin,
                          power=p.power, singles=k, available=available or {}, cost=cost)
    model = "every benchmark: the same tie rate and difference"
    if k is not None:
        model += (f"; the baseline is the strongest of K = {k} single target(s) of this plan "
                  f"({MODEL}); a baseline run with more singles needs more cases")
    out = Planning(
        claim_rule=declared, assumptions={**p.model_dump(mode="json"), "model": model},
        counts=dict(sorted(counts.items())), margin=margin, declared=plan_for(declared), other=plan_for(other),
        detectable_by_tie_rate=[{"tie_rate": t,
                                 declared: detectable_effect(declared, counts, weights, t, p.power, singles=k),
                                 other: detectable_effect(other, counts, weights, t, p.power, singles=k)}
                                for t in TIE_RATES],
        early_stop=_filled(stats.early_stop))
    return out if k is None else out.model_copy(update={"singles": k})
