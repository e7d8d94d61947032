"""The report's limitations (stages/report/build.py): what a reader must know before reading its figures —
the plan's notices, a recovery child's scope, a replay, the profile, a subset of benchmarks, a partial
run with both of its denominators, ambiguous dispatches, models outside a pool, router calls over
budget or unattributed, unknown costs, an early stop, and a recipe capture that did not hold."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from srbench.benchmarks import all_benchmarks
from srbench.schemas.cell import RunStatus
from srbench.schemas.early_stop import EarlyStopRecord
from srbench.schemas.plan import Plan
from srbench.schemas.recipe import RecipeSummary
from srbench.schemas.report import TargetSummary
from srbench.stages.report.published import PUBLISHED_NOTE

__all__ = ["limitations", "stop_limitations", "recipe_limitations"]


def limitations(plan: Plan, status: RunStatus, states: Counter[str], targets: list[TargetSummary]) -> list[str]:
    """The report's limitations; `states` counts the rows by state."""
    out = list(plan.notices)
    if plan.recovery:
        rec = plan.recovery
        out.append(f"Recovery child of {rec.parent} (mode {rec.mode}): its denominator, progress and cost "
                   f"cover only its {len(rec.cells)} selected cells; the parent's known cost "
                   f"({rec.snapshot.known_cost_usd}) is shown apart. It never completes the parent.")
    if plan.mode == "replay":
        out.append("Replay: an offline estimate from saved single-model answers along previewed routes; not a "
                   "measured capability, latency or saving (IT-4). No model was called.")
    out.append(f"{plan.profile} profile ({plan.dataset.split} split): "
               "not the upstream full-benchmark result.")
    full = {b.id for b in all_benchmarks()}
    if set(plan.dataset.benchmarks) != full:
        out.append("Not all nine benchmarks: no full sr-bench score; macro accuracy is a subset result.")
    total = sum(states.values())
    missing = total - states["completed"]
    if status != "completed" or missing:
        out.append(f"Partial run (status {status}): {missing} of {total} planned cells have no complete answer. "
                   f"Accuracy is over all {total} planned cells (those count as incorrect); accuracy_answered is over "
                   f"the {total - missing} answered cells only. This is not a complete evaluation.")
    amb = states["ambiguous"]
    if amb:
        out.append(f"{amb} cell(s) have an ambiguous dispatch (the service stopped mid-call): they may have been "
                   "billed; their cost is unknown.")
    for t in targets:
        if t.models_outside_pool:
            out.append(f"Target {t.target_id} was answered by model(s) outside its declared pool: "
                       f"{', '.join(t.models_outside_pool)}.")
    for t in targets:
        r = t.routing
        if r is not None and r.calls_over_max_inference_calls:
            out.append(f"Target {t.target_id} made more inference calls than its max_inference_calls in "
                       f"{r.calls_over_max_inference_calls} call(s) (retries or fallbacks): the budget reservation "
                       "was too low for them.")
        if r is not None and r.unattributed_calls:
            out.append(f"Target {t.target_id} (router {r.router}): {r.unattributed_calls} answered call(s) "
                       "name no served model; they are left out of the model mix and their cost is unknown.")
    if any(t.cost_usd is None for t in targets):
        out.append("Some cost is unknown (unmetered, unpriced or missing calls): it is null, never zero.")
    if plan.cost_policy == "capability_only":
        out.append("cost_policy capability_only: prices may be unknown and no savings are claimed.")
    out.append("Intervals are Wilson 95% intervals over planned cells; they do not cover contamination or "
               "tuning selection.")
    out.append(PUBLISHED_NOTE)
    return out


def stop_limitations(stop: EarlyStopRecord | None) -> list[str]:
    """What an early stop means for reading the report."""
    if stop is None:
        return []
    saved = stop.estimated_saving_usd
    money = "unknown" if saved is None else f"{saved:.4f}"
    return [f"Stopped early by the plan's rule ({stop.reason}: {stop.summary}) after "
            f"{stop.decided_at_cases} of {stop.planned_cases} cases: {stop.cells_not_sent} cells "
            f"were never sent (estimated USD {money} not spent). Accuracies over the planned denominator count them "
            "as not correct; the paired section compares the measured prefix, where the betting interval is "
            "valid (the Hoeffding one is shown for reference only)."]


def recipe_limitations(recipes: Mapping[str, RecipeSummary]) -> list[str]:
    """A recipe capture that did not hold, or a configuration that changed during the run (UI-7)."""
    return [f"Recipe of target {tid} (UI-7): {s.limitation}." for tid, s in sorted(recipes.items())
            if s.limitation]
