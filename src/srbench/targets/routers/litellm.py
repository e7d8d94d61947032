"""LiteLLM proxy / Router (``litellm``): attribution from the proxy's ``x-litellm-*`` response headers.

- served model: ``x-litellm-model-name`` (the deployment's model as LiteLLM names it, e.g.
  ``openai/gpt-4o-mini``; prices are looked up under exactly that name); the deployment is
  ``x-litellm-model-id`` and the model group ``x-litellm-model-group``.
- retries and fallbacks: ``x-litellm-attempted-retries`` and ``x-litellm-attempted-fallbacks``. Each
  is an inference attempt besides the one that answered: inference calls = 1 + retries + fallbacks.
  Only the answering call is metered (the stream's usage), so a call with a retry or fallback has an
  unknown cost — its failed attempts' usage is not reported — and never the answer's price alone.
- the proxy's own figure — ``x-litellm-response-cost``, or for a stream (whose headers leave before
  the cost is known) the ``cost`` it adds to the usage object — is kept as evidence, never the price.
A response without ``x-litellm-model-name``, or without either attempt count, is unattributed.
LiteLLM reports no configuration hash: a pinned ``config_hash`` cannot be checked (the plan says so).
"""

from __future__ import annotations

from collections.abc import Mapping

from srbench.schemas.target import Target
from srbench.schemas.wire import WireJSON
from srbench.targets.routers.base import (
    Attribution,
    RouterAdapter,
    header_count,
    header_usd,
    lower,
    usage_cost,
)

PREFIX = "x-litellm-"


class LiteLLM(RouterAdapter):
    name = "litellm"
    title = "LiteLLM proxy / Router (x-litellm-* headers)"

    def attribute(self, target: Target, headers: Mapping[str, str], response_model: str | None,
                  usage_raw: WireJSON | None) -> Attribution:
        h = lower(headers)
        out = Attribution(self.name, selected_model=(h.get("x-litellm-model-name") or "").strip() or None,
                          deployment=h.get("x-litellm-model-id") or None,
                          group=h.get("x-litellm-model-group") or None,
                          reported_cost_usd=header_usd(h, "x-litellm-response-cost") or usage_cost(usage_raw),
                          evidence={k: v for k, v in h.items() if k.startswith(PREFIX)})
        out.retries, bad_r = header_count(h, "x-litellm-attempted-retries")
        out.fallbacks, bad_f = header_count(h, "x-litellm-attempted-fallbacks")
        if bad_r or bad_f:
            out.problem = bad_r or bad_f
            return out
        if out.retries is not None and out.fallbacks is not None:
            out.inference_calls = 1 + out.retries + out.fallbacks
        if out.selected_model is None:
            out.unknown_reason = "the proxy named no deployment model (no x-litellm-model-name)"
        elif out.inference_calls is None:
            out.unknown_reason = ("the proxy did not report its attempts (x-litellm-attempted-retries/-fallbacks): "
                                  "the number of inference calls is unknown")
        elif out.inference_calls > 1:
            out.unknown_reason = (f"{out.retries} retr{'y' if out.retries == 1 else 'ies'} and {out.fallbacks} "
                                  f"fallback(s) before the answer: only the answering call is metered")
        return out
