"""Sections of the report (schemas/report.py): a router's routing figures, a benchmark's headline, the
partial block of a run without an answer in every cell, and the corrections the report reads."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

_FROZEN = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class RoutingFigures(BaseModel):
    """A router target's routing figures over its answered calls (stages/report/routing.py)."""

    model_config = _FROZEN
    router: str
    """The router adapter that read the calls (targets/routers)."""
    answered_calls: int
    """Calls with a response (a conversation counts each subject turn)."""
    model_mix: dict[str, int]
    """Answered calls per served model."""
    deployments: dict[str, int]
    """Answered calls per deployment the router named."""
    unattributed_calls: int
    """Answered calls that name no served model."""
    retries: int | None
    """Retries over the answered calls; None when one call did not report them."""
    fallbacks: int | None
    """Fallbacks over the answered calls; None when one call did not report them."""
    calls_with_retries_or_fallbacks: int
    """Answered calls with at least one retry or fallback."""
    inference_calls: int | None
    """Inference calls behind the answered calls; None when one call did not report them."""
    calls_over_max_inference_calls: int
    """Answered calls over the target's max_inference_calls."""


class Headline(BaseModel):
    """A benchmark's published headline metric for one row (stages/report/published.py `headline`).
    Unset fields are not written (`Report.dump`)."""

    model_config = _FROZEN
    metric: Literal["f1", "accuracy"]
    """The metric: SimpleQA's F1, accuracy for the others."""
    value: float | None
    """Its value."""
    accuracy: float | None = None
    """SimpleQA: the accuracy beside its F1."""
    note: str | None = None
    """SimpleQA: why the macro uses accuracy, not the headline."""


class PartialBlock(BaseModel):
    """How much of a run without an answer in every cell was answered (stages/report/partial.py)."""

    model_config = _FROZEN
    answered_cells: int
    """Cells with a complete answer."""
    planned_cells: int
    """Every planned cell."""
    final: bool
    """Whether the run ended (it will not answer more)."""
    label: str
    """"partial: n of N planned cells answered (…)"."""
    accuracy: str
    """What `accuracy` is over."""
    accuracy_answered: str
    """What `accuracy_answered` is over."""


class PriceCorrectionRef(BaseModel):
    """The price correction the report reads (schemas/corrections.py `PriceCorrection`)."""

    model_config = _FROZEN
    digest: str
    """The correction object's digest."""
    version: str
    """Its version."""
    reason: str | None
    """Why it was made."""
    targets: list[str]
    """The targets it reprices."""


class UsageCorrectionRef(BaseModel):
    """The usage correction the report reads (schemas/corrections.py `UsageCorrection`)."""

    model_config = _FROZEN
    digest: str
    """The correction object's digest."""
    at: float | None
    """When it was appended to the run."""
    version: str
    """Its version."""
    verified_count: int
    """Calls whose usage was verified."""
    changed_count: int
    """Calls whose usage changed."""
    unverifiable_count: int
    """Calls that could not be verified."""
    old_known_cost_usd: float | None
    """Known cost before the correction."""
    new_known_cost_usd: float | None
    """Known cost after it."""
    qualified: bool
    """Whether the corrected figures qualify (the correction's own verdict)."""
    routers: dict[str, str] | None
    """Router targets re-attributed offline (target id to router), if any."""
