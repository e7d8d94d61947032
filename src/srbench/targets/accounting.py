"""What one stored call cost, and at which model(s) it was priced (TG-2, TG-3, REP-1, REP-3).

- single target: the four buckets of the call at the prices of the model the response names
  (else the target's model); unpriced → unknown.
- MoM with ``x-vsr-model-usage`` (JSON ≤ 12,288 bytes: ``{"version": 1, "complete": bool,
  "calls": [{"model", "usage"}, 1..256]}``): every child call priced at its own model; the total is
  known only when ``complete`` is true and every child is metered and priced.
- MoM declaring exactly one inference (``x-vsr-inference-call-count: 1``): priced at
  ``x-vsr-selected-model``.
- anything else: unknown. The final model's price never stands in for unmetered composite calls.
Usage errors in a child make the whole call unknown (never zero).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from srbench.schemas.call import Usage
from srbench.schemas.target import Target
from srbench.targets.metering import UsageError, parse_usage
from srbench.targets.pricing import cache_neutral_cost_usd, cost_usd, priced_model

MODEL_USAGE_MAX_BYTES = 12288


@dataclass
class CallCost:
    basis: str                              # single | mom-direct | mom-model-usage | unknown
    models: list[str] = field(default_factory=list)
    usage: Usage | None = None
    cost_usd: float | None = None
    cache_neutral_cost_usd: float | None = None
    reason: str | None = None               # why the cost is unknown
    outside_pool: list[str] = field(default_factory=list)


def _children(header: str) -> tuple[list[tuple[str, Usage | None]], bool]:
    if len(header.encode()) > MODEL_USAGE_MAX_BYTES:
        raise ValueError("x-vsr-model-usage is over 12,288 bytes")
    data = json.loads(header)
    if not isinstance(data, dict) or data.get("version") != 1 or not isinstance(data.get("calls"), list):
        raise ValueError("x-vsr-model-usage is not version 1 with a calls list")
    calls = data["calls"]
    if not 1 <= len(calls) <= 256:
        raise ValueError("x-vsr-model-usage must list 1 to 256 calls")
    out = []
    for c in calls:
        if not isinstance(c, dict) or not isinstance(c.get("model"), str):
            raise ValueError("x-vsr-model-usage call without a model")
        out.append((c["model"], parse_usage(c.get("usage"))))
    return out, data.get("complete") is True


def call_cost(target: Target, call: dict[str, Any]) -> CallCost:
    headers = {k.lower(): v for k, v in (call.get("headers") or {}).items()}
    usage = Usage(**call["usage"]) if call.get("usage") else None
    if target.kind == "mom" and "x-vsr-model-usage" in headers:
        try:
            children, complete = _children(headers["x-vsr-model-usage"])
        except (ValueError, UsageError) as exc:
            return CallCost("unknown", usage=usage, reason=f"bad x-vsr-model-usage: {exc}")
        models = [m for m, _ in children]
        outside = sorted({m for m in models if target.models and m not in target.models})
        total_usage: Usage | None = None
        if complete and all(u is not None for _, u in children):   # an incomplete list undercounts
            total_usage = sum((u for _, u in children if u), Usage(input=0, cached_input=0, cache_write=0, output=0))
        costs = [cost_usd(u, target.price_for(m)) for m, u in children]
        neutral = [cache_neutral_cost_usd(u, target.price_for(m)) for m, u in children]
        known = complete and all(c is not None for c in costs)
        reason = None if known else ("router reported an incomplete child list" if not complete
                                     else "a child call is unmetered or unpriced")
        return CallCost("mom-model-usage", models, total_usage,
                        float(sum(costs)) if known else None,  # type: ignore[arg-type]
                        float(sum(neutral)) if known and all(n is not None for n in neutral) else None,  # type: ignore[arg-type]
                        reason, outside)
    model = priced_model(target, call.get("response_model"), headers)
    if model is None:
        return CallCost("unknown", usage=usage,
                        reason="composite or undeclared router call: no single model to price it at")
    outside = [model] if target.kind == "mom" and target.models and model not in target.models else []
    prices = target.price_for(model)
    basis = "single" if target.kind == "single" else "mom-direct"
    if usage is None:
        return CallCost(basis, [model], None, None, None, "the call carried no usage", outside)
    if prices is None:
        return CallCost(basis, [model], usage, None, None, f"no prices for model {model}", outside)
    return CallCost(basis, [model], usage, cost_usd(usage, prices), cache_neutral_cost_usd(usage, prices), None,
                    outside)
