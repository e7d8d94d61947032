"""Served model named in the response body (``body-model``), as OpenRouter-style auto routers do.

The answer's model is the ``model`` the streamed chunks name; one inference call is assumed, since
such a service answers one request with one completion and reports no other calls. A body that names
no model, or only echoes the name the target requested (the router's own alias, when that is not a
priced pool model), is unattributed. A ``cost`` in the usage object (OpenRouter's usage extension) is
kept as the service's own figure, never used as the price. Retries, fallbacks and a config hash are
not reported: they stay unknown.
"""

from __future__ import annotations

from collections.abc import Mapping

from srbench.schemas.target import Target
from srbench.schemas.wire import WireJSON
from srbench.targets.routers.base import Attribution, RouterAdapter, usage_cost


class BodyModel(RouterAdapter):
    name = "body-model"
    title = "served model named in the response body's model (OpenRouter-style)"

    def attribute(self, target: Target, headers: Mapping[str, str], response_model: str | None,
                  usage_raw: WireJSON | None) -> Attribution:
        model = (response_model or "").strip() or None
        out = Attribution(self.name, evidence={"model": model} if model else {})
        out.reported_cost_usd = usage_cost(usage_raw)
        if model is None:
            out.unknown_reason = "the response body named no model"
        elif model == target.model and model not in (target.models or []) and model not in target.prices:
            out.unknown_reason = f"the response body only echoes the requested name {model!r}"
        else:
            out.selected_model, out.inference_calls = model, 1
        return out
