"""Routing figures of one MoM target over its result rows: which models served, how often the router
retried or fell back, and how many calls it left unattributed (used by the report and by compare).

Each row carries what the router adapter read from that call (``router``, ``selected_model``,
``deployment``, ``inference_calls``, ``retries``, ``fallbacks``; a conversation row the same per subject
turn in ``turn_routing``). Unknown stays unknown: a total is
``None`` as soon as one call with a response did not report it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from srbench.schemas.report_sections import RoutingFigures


def _total(rows: list[dict[str, Any]], key: str) -> int | None:
    values = [r.get(key) for r in rows]
    return None if not rows or any(v is None for v in values) else int(sum(values))  # type: ignore[arg-type]


def routing_summary(router: str, rows: list[dict[str, Any]], max_inference_calls: int | None) -> RoutingFigures:
    """Model mix, deployments, retries and fallbacks of the rows that have a call with a response; a
    conversation row counts each of its subject turns (``turn_routing``) as one call."""
    calls = [t for r in rows for t in (r.get("turn_routing") or [r])]
    answered = [r for r in calls if r.get("has_call") and r.get("http_status") is not None]
    mix = Counter(r["selected_model"] for r in answered if r.get("selected_model"))
    deployments = Counter(r["deployment"] for r in answered if r.get("deployment"))
    over = [r for r in answered if max_inference_calls is not None and (r.get("inference_calls") or 0) > max_inference_calls]
    return RoutingFigures(
        router=router,
        answered_calls=len(answered),
        model_mix=dict(sorted(mix.items())),
        deployments=dict(sorted(deployments.items())),
        unattributed_calls=sum(1 for r in answered if not r.get("selected_model")),
        retries=_total(answered, "retries"),
        fallbacks=_total(answered, "fallbacks"),
        calls_with_retries_or_fallbacks=sum(1 for r in answered if (r.get("retries") or 0) + (r.get("fallbacks") or 0)),
        inference_calls=_total(answered, "inference_calls"),
        calls_over_max_inference_calls=len(over),
    )
