"""vLLM Semantic Router (``vllm-sr``, the default router kind): attribution from its ``x-vsr-*`` headers.

- ``x-vsr-model-usage`` (JSON ≤ 12,288 bytes: ``{"version": 1, "complete": bool, "calls": [{"model",
  "usage"}, 1..256]}``): every child call with its own usage; the call is priced per child.
- otherwise a direct route only when ``x-vsr-inference-call-count`` is exactly ``1``: the answer is
  ``x-vsr-selected-model``'s, metered by the stream's own usage.
- config evidence: ``x-vsr-config-hash`` (or ``x-sr-bench-config-hash``), checked against the target's
  pinned ``config_hash``, which is also sent as ``x-sr-bench-expected-config-hash``.
Retries and fallbacks are not reported by this router: they stay unknown.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from srbench.schemas.target import Target
from srbench.schemas.wire import WireJSON
from srbench.targets.metering import UsageError, parse_usage
from srbench.targets.routers.base import Attribution, ChildCall, RouterAdapter, lower

MODEL_USAGE_MAX_BYTES = 12288
COMPOSITE_REASON = "composite or undeclared router call: no single model to price it at"


def children(header: str) -> tuple[list[ChildCall], bool]:
    """The child calls listed in ``x-vsr-model-usage`` and whether the list is complete (ValueError,
    UsageError when the header is malformed)."""
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
        out.append(ChildCall(c["model"], parse_usage(c.get("usage"))))
    return out, data.get("complete") is True


class VllmSemanticRouter(RouterAdapter):
    name = "vllm-sr"
    title = "vLLM Semantic Router (x-vsr-* headers)"
    reports_config_hash = True
    header_names = ("x-vsr-debug", "x-sr-bench-expected-config-hash")

    def attribute(self, target: Target, headers: Mapping[str, str], response_model: str | None,
                  usage_raw: WireJSON | None) -> Attribution:
        h = lower(headers)
        count = h.get("x-vsr-inference-call-count", "").strip()
        out = Attribution(self.name, selected_model=h.get("x-vsr-selected-model") or None,
                          inference_calls=int(count) if count.isdigit() and count.isascii() else None,
                          config_hash=h.get("x-vsr-config-hash") or h.get("x-sr-bench-config-hash"),
                          evidence={k: v for k, v in h.items() if k.startswith("x-vsr-")})
        if "x-vsr-model-usage" in h:
            try:
                out.children, out.complete = children(h["x-vsr-model-usage"])
            except (ValueError, UsageError) as exc:
                out.problem = f"bad x-vsr-model-usage: {exc}"
            return out
        if count != "1" or out.selected_model is None:
            out.unknown_reason = COMPOSITE_REASON
        return out

    def request_headers(self, target: Target) -> dict[str, str]:
        headers = {"x-vsr-debug": "true"}
        if target.config_hash:
            headers["x-sr-bench-expected-config-hash"] = target.config_hash
        return headers
