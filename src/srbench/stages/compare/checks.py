"""Compare: whether two runs may be compared at all — each run's own eligibility and the pair's protocol
(the refusals listed in `stages/compare/build.py`'s docstring) — read from their frozen plans."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from pydantic import JsonValue

from srbench.cas.digest import stored_number
from srbench.errors import InvalidInput
from srbench.schemas.cell import UNSUCCESSFUL_CELL_STATES
from srbench.schemas.comparison import RunInfo
from srbench.schemas.comparison_inputs import ComparedReport, ComparedRow
from srbench.schemas.plan import Plan
from srbench.schemas.target import Prices

STOPPED = "stopped_early"
COMPARABLE_STATUS = ("completed", "failed", STOPPED)
FINISHING_STATUS = ("queued", "running")
INCORRECT_STATES = UNSUCCESSFUL_CELL_STATES
PROTOCOL_KEYS = ("profile", "sampling", "limits", "benchmark_weights", "grader_versions", "adapter_versions",
                 "benchmark_options")
OPERATIONAL_LIMITS = ("concurrency", "max_run_seconds", "max_cost_usd")

Cells = dict[str, ComparedRow]
"""One target's rows by case id."""
ByTarget = dict[str, Cells]
"""A run's rows by target, then case id."""


class NotComparable(InvalidInput):
    """Two runs that cannot be compared; `reason` is a stable sub-code, also the message prefix."""

    code = "not_comparable"

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(f"not comparable ({reason}): {message}")
        self.reason = reason


def run_checks(side: str, report: ComparedReport, rows: list[ComparedRow], plan: Plan) -> tuple[set[str], ByTarget]:
    """One run's own eligibility; returns (case set E, rows by target then case id)."""
    declared = report.provenance.plan_sha256 if report.provenance is not None else None
    if declared is not None and declared != plan.plan_sha256:
        raise NotComparable("plan_mismatch", f"the {side} report was made from plan {declared}, not the plan given")
    status = report.status
    if status in FINISHING_STATUS:
        raise NotComparable("run_not_finished", f"the {side} run is {status}; wait until it has finished")
    if status not in COMPARABLE_STATUS:
        raise NotComparable("run_not_comparable", f"the {side} run is {status}; only completed or failed runs "
                            "compare (a cancelled or interrupted run did not carry out its plan)")
    if plan.mode != "live" or report.mode != "live":
        raise NotComparable("not_live", f"the {side} run is not a live run (mode {plan.mode})")
    target_ids = [pt.target.id for pt in plan.targets]
    by_target: ByTarget = {t: {} for t in target_ids}
    for r in rows:
        cells = by_target.get(r.target_id)
        if cells is None:
            raise NotComparable("case_set_mismatch", f"the {side} rows name target {r.target_id!r}, "
                                "which its plan does not")
        if r.case_id in cells:
            raise NotComparable("case_set_mismatch", f"the {side} run has two cells for case {r.case_id!r} "
                                f"and target {r.target_id!r}")
        cells[r.case_id] = r
    cases = set(by_target[target_ids[0]]) if target_ids else set()
    if not cases:
        raise NotComparable("case_set_mismatch", f"the {side} run has no planned cases")
    for t, cells in by_target.items():
        if set(cells) != cases:
            raise NotComparable("case_set_mismatch", f"in the {side} run, target {t!r} is not planned on the "
                                "same cases as the others")
    if plan.dataset.case_count not in (None, len(cases)):
        raise NotComparable("case_set_mismatch", f"the {side} rows cover {len(cases)} cases, its plan "
                            f"{plan.dataset.case_count}")
    for r in rows:
        where = f"{side} cell ({r.case_id}, {r.target_id})"
        if r.state == "completed":
            if r.correct is None:
                raise NotComparable("cell_not_graded", f"{where} completed without a grade")
        elif r.state == "pending" and status == STOPPED:
            continue                                   # never sent: after the measured prefix
        elif r.state not in INCORRECT_STATES:
            raise NotComparable("cell_pending", f"{where} is {r.state}: it has no terminal outcome yet")
    return cases, by_target


def _prices(plan: Plan) -> dict[str, list[Prices]]:
    """The distinct prices each model has across the plan's targets."""
    out: dict[str, list[Prices]] = {}
    for pt in plan.targets:
        for model, p in pt.target.prices.items():
            if p not in out.setdefault(model, []):
                out[model].append(p)
    return out


class JudgeProtocol(NamedTuple):
    """What grading depends on in a judge."""

    model: str
    """Its model."""
    prices: dict[str, Prices]
    """Its prices per model."""
    params: Mapping[str, object]
    """Its effective request parameters."""


def _aux(plan: Plan) -> dict[str, JudgeProtocol]:
    """Each judge's model, prices and effective request parameters."""
    return {tid: JudgeProtocol(pt.target.model, pt.target.prices, pt.effective_params.body())
            for tid, pt in plan.auxiliary_targets.items()}


def _params_by_model(plan: Plan) -> dict[str, list[dict[str, JsonValue]]]:
    """Effective request parameters of each single model (a model run two ways is compared as such)."""
    out: dict[str, list[dict[str, JsonValue]]] = {}
    for pt in plan.targets:
        if pt.target.kind == "single":
            p = pt.effective_params.body()
            if p not in out.setdefault(pt.target.model, []):
                out[pt.target.model].append(p)
    return out


def _protocol(plan: Mapping[str, JsonValue], key: str) -> JsonValue:
    """The plan's JSON under `key`, the limits without the operational ones."""
    value = plan.get(key)
    if key == "limits" and isinstance(value, dict):
        return {k: v for k, v in value.items() if k not in OPERATIONAL_LIMITS}
    return value


def pair_checks(bplan: Plan, cplan: Plan, bcases: set[str], ccases: set[str]) -> None:
    """The pair's own refusals: other cases, or another protocol (what the plans freeze that scores depend on)."""
    if bplan.case_sha256 != cplan.case_sha256 or bcases != ccases:
        raise NotComparable("case_set_mismatch", "the two runs were not planned on the same cases "
                            "(case_sha256 or case ids differ)")
    bj, cj = bplan.as_json(), cplan.as_json()
    differ = [k for k in PROTOCOL_KEYS if (_protocol(bj, k) or None) != (_protocol(cj, k) or None)]
    if _aux(bplan) != _aux(cplan):
        differ.append("auxiliary_targets (judges)")
    bparams, cparams = _params_by_model(bplan), _params_by_model(cplan)
    differ += [f"request parameters of {m}" for m in sorted(set(bparams) & set(cparams)) if bparams[m] != cparams[m]]
    bp, cp = _prices(bplan), _prices(cplan)
    differ += [f"prices[{m}]" for m in sorted(set(bp) & set(cp)) if bp[m] != cp[m]]
    if differ:
        raise NotComparable("protocol_mismatch", f"the runs differ in {', '.join(differ)}")


def operational_limitations(bplan: Plan, cplan: Plan) -> list[str]:
    """Run-level limits that differ between the runs: latency and wall time were measured under other load."""
    bl, cl = bplan.limits, cplan.limits
    differ = [f"limits.{k} {_shown(getattr(bl, k))!r} (baseline) vs {_shown(getattr(cl, k))!r} (candidate)"
              for k in OPERATIONAL_LIMITS if getattr(bl, k) != getattr(cl, k)]
    if not differ:
        return []
    return [f"The runs differ in run-level limits ({'; '.join(differ)}): quality, tokens and cost compare as "
            "usual, but latency and wall time were measured under different load."]


def _shown(value: float | None) -> float | int | None:
    return None if value is None else stored_number(value)


def run_info(report: ComparedReport, plan: Plan) -> RunInfo:
    """Which run a side of the comparison is: its id, status, plan and targets."""
    return RunInfo(run_id=report.run_id, status=report.status, plan_sha256=plan.plan_sha256,
                   profile=plan.profile, cost_policy=plan.cost_policy, targets=[pt.target.id for pt in plan.targets])


