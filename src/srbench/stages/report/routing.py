"""Routing figures of one MoM target over its result rows: which models served, how often the router
retried or fell back, and how many calls it left unattributed (used by the report and by compare).

Each row carries what the router adapter read from that call (``router``, ``selected_model``,
``deployment``, ``inference_calls``, ``retries``, ``fallbacks``; a conversation row the same per subject
turn in ``turn_routing``). Unknown stays unknown: a total is
``None`` as soon as one call with a response did not report it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from srbench.schemas.comparison_inputs import ComparedRow
from srbench.schemas.report_sections import RoutingFigures
from srbench.schemas.results import TurnRouting


def routed_calls(rows: Sequence[ComparedRow]) -> list[TurnRouting]:
    """The routed calls of stored result rows (compare reads them as stored): a conversation row's
    subject turns (``turn_routing``), else the row's own call."""
    return [t.routing() for r in rows for t in (r.turn_routing or [r])]


def _total(calls: list[TurnRouting], key: str) -> int | None:
    values = [getattr(c, key) for c in calls]
    return None if not calls or any(v is None for v in values) else int(sum(values))


def routing_summary(router: str, calls: list[TurnRouting], max_inference_calls: int | None) -> RoutingFigures:
    """Model mix, deployments, retries and fallbacks of the calls with a response; a conversation
    counts each of its subject turns as one call."""
    answered = [c for c in calls if c.has_call and c.http_status is not None]
    mix = Counter(c.selected_model for c in answered if c.selected_model)
    deployments = Counter(c.deployment for c in answered if c.deployment)
    over = [c for c in answered if max_inference_calls is not None and (c.inference_calls or 0) > max_inference_calls]
    return RoutingFigures(
        router=router,
        answered_calls=len(answered),
        model_mix=dict(sorted(mix.items())),
        deployments=dict(sorted(deployments.items())),
        unattributed_calls=sum(1 for c in answered if not c.selected_model),
        retries=_total(answered, "retries"),
        fallbacks=_total(answered, "fallbacks"),
        calls_with_retries_or_fallbacks=sum(1 for c in answered if (c.retries or 0) + (c.fallbacks or 0)),
        inference_calls=_total(answered, "inference_calls"),
        calls_over_max_inference_calls=len(over),
    )
