"""What one stored call cost, and at which model(s) it was priced (TG-2, TG-3, REP-1, REP-3).

- single target: the four buckets of the call at the prices of the model the response names
  (else the target's model); unpriced → unknown.
- MoM: the target's router adapter (:mod:`srbench.targets.routers`) reads the stored response and
  says who served it. A router that lists every child call with its usage (vLLM Semantic Router's
  ``x-vsr-model-usage``) is priced child by child; the total is known only when the list is complete
  and every child is metered and priced. A proven direct route of exactly one inference call is
  priced at the model that answered, with the stream's own usage.
- anything else (no served model named, several inference calls but one metered — retries,
  fallbacks, composite routes — or evidence that contradicts itself): unknown, with the reason. The
  final model's price never stands in for unmetered calls. Usage errors in a child make the whole
  call unknown (never zero).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import JsonValue

from srbench.schemas.call import MeteredCall, MeteredView, Usage
from srbench.schemas.target import Target
from srbench.targets import routers
from srbench.targets.pricing import cache_neutral_cost_usd, cost_usd, priced_model
from srbench.targets.routers import Attribution


@dataclass
class CallCost:
    basis: str                              # single | mom-direct | mom-model-usage | unknown
    models: list[str] = field(default_factory=list)
    usage: Usage | None = None
    cost_usd: float | None = None
    cache_neutral_cost_usd: float | None = None
    reason: str | None = None               # why the cost is unknown
    outside_pool: list[str] = field(default_factory=list)
    attribution: Attribution | None = None  # MoM: who served the call, per the router's evidence


def _composite(target: Target, attr: Attribution) -> CallCost:
    kids = attr.children or []
    models = [c.model for c in kids]
    outside = sorted({m for m in models if target.models and m not in target.models})
    total_usage: Usage | None = None
    if attr.complete and all(c.usage is not None for c in kids):   # an incomplete list undercounts
        total_usage = sum((c.usage for c in kids if c.usage), Usage(input=0, cached_input=0, cache_write=0, output=0))
    costs = [cost_usd(c.usage, target.price_for(c.model)) for c in kids]
    neutral = [cache_neutral_cost_usd(c.usage, target.price_for(c.model)) for c in kids]
    known = attr.complete and all(c is not None for c in costs)
    reason = None if known else ("router reported an incomplete child list" if not attr.complete
                                 else "a child call is unmetered or unpriced")
    return CallCost("mom-model-usage", models, total_usage,
                    float(sum(costs)) if known else None,  # type: ignore[arg-type]
                    float(sum(neutral)) if known and all(n is not None for n in neutral) else None,  # type: ignore[arg-type]
                    reason, outside, attr)


def _priced(target: Target, basis: str, model: str, usage: Usage | None, attr: Attribution | None) -> CallCost:
    outside = [model] if target.kind == "mom" and target.models and model not in target.models else []
    prices = target.price_for(model)
    if usage is None:
        return CallCost(basis, [model], None, None, None, "the call carried no usage", outside, attr)
    if prices is None:
        return CallCost(basis, [model], usage, None, None, f"no prices for model {model}", outside, attr)
    return CallCost(basis, [model], usage, cost_usd(usage, prices), cache_neutral_cost_usd(usage, prices), None,
                    outside, attr)


def call_cost(target: Target, call: MeteredCall | Mapping[str, JsonValue]) -> CallCost:
    """What one call of `target` cost: `call` a call record, or a stored one's JSON (read as `MeteredView`)."""
    c = MeteredView.of(call)
    usage = c.usage
    if target.kind == "single":
        model = priced_model(target, c.response_model, c.headers)
        assert model is not None
        return _priced(target, "single", model, usage, None)
    attr = routers.attribute(target, c)
    if attr.problem is not None:
        return CallCost("unknown", usage=usage, reason=attr.problem, attribution=attr)
    if attr.children is not None:
        return _composite(target, attr)
    if attr.unknown_reason is not None or attr.selected_model is None or attr.inference_calls != 1:
        return CallCost("unknown", usage=usage, attribution=attr,
                        reason=attr.unknown_reason or "no single model to price it at")
    return _priced(target, "mom-direct", attr.selected_model, usage, attr)
