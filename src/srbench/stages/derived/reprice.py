"""Reprice: a price correction for a finished run — new four-bucket prices per target and model,
applied to the stored call records by the report rule (zero model calls; TG-2, REP-2).

The correction is a versioned, content-addressed object; the service appends it once per distinct
content. The frozen plan and the raw call records stay as they were; reports, comparisons and
exports then use the corrected prices, and the report names the correction.
"""

from __future__ import annotations

from pydantic import ValidationError

from srbench import TERMINAL_STATUSES
from srbench.errors import InvalidInput
from srbench.schemas.corrections import PriceCorrection
from srbench.schemas.plan import Plan, PlannedTarget
from srbench.schemas.target import Prices, Target
from srbench.stages.derived.facts import RunFacts

PRICE_CORRECTION_VERSION = "sr-bench-price-correction-v1"


def price_correction(run: RunFacts, plan: Plan, prices: object, reason: str | None) -> PriceCorrection:
    """Validate `prices` (as given) = {target id: {model: {input, cached_input, cache_write, output}}}."""
    if run.status not in TERMINAL_STATUSES:
        raise InvalidInput(f"run {run.id} is {run.status}; reprice a terminated run", code="run_not_finished")
    if not isinstance(prices, dict) or not prices:
        raise InvalidInput("prices must be a non-empty object keyed by target id")
    known = {pt.target.id for pt in plan.targets} | set(plan.auxiliary_targets)
    out: dict[str, dict[str, Prices]] = {}
    problems = []
    for tid, models in prices.items():
        if tid not in known:
            problems.append(f"{tid}: not a target of run {run.id}")
            continue
        if not isinstance(models, dict) or not models:
            problems.append(f"{tid}: expected {{model: prices}}")
            continue
        out[tid] = {}
        for model, p in models.items():
            try:
                out[tid][str(model)] = Prices.model_validate(p)
            except ValidationError as exc:
                problems.append(f"{tid}.{model}: {exc.errors()[0]['msg']}")
    if problems:
        raise InvalidInput("prices: " + "; ".join(problems))
    return PriceCorrection(version=PRICE_CORRECTION_VERSION, run_id=run.id, plan_sha256=plan.plan_sha256,
                           prices=out, reason=reason)


def priced(target: Target, correction: PriceCorrection | None) -> Target:
    """`target` with the prices a price correction gives it (itself when the correction does not name it)."""
    new = correction.prices.get(target.id) if correction else None
    return target if new is None else Target.model_validate({**target.model_dump(mode="json"), "prices": new})


def apply_prices(plan: Plan, correction: PriceCorrection | None) -> Plan:
    """The plan as the report prices it: each corrected target's prices replaced (others untouched)."""
    if not correction:
        return plan

    def fix(pt: PlannedTarget) -> PlannedTarget:
        target = priced(pt.target, correction)
        return pt if target is pt.target else pt.model_copy(update={"target": target})
    return plan.model_copy(update={"targets": [fix(pt) for pt in plan.targets],
                                   "auxiliary_targets": {k: fix(v) for k, v in plan.auxiliary_targets.items()}})
