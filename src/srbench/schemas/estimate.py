"""What a frozen plan will send and an upper bound of what it may cost (stages/plan/estimate.py, UI-2): the
planning answer's ``estimate``. Not stored: computed for each planning request from the plan and its cases."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

_FROZEN = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class EstimateRow(BaseModel):
    """One target in one role: what it will be sent and its upper cost."""

    model_config = _FROZEN
    target_id: str
    """The target."""
    kind: Literal["single", "mom"]
    """Its kind."""
    model: str
    """Its model (a MoM target's router name)."""
    role: Literal["subject", "judge"]
    """Whether it answers the cases or judges the answers."""
    requests: int
    """Requests sr-bench sends it."""
    inference_calls_upper: int
    """At most this many inference calls behind those requests (a MoM target may make several a request)."""
    conversation_cells: int
    """Cells that are conversations (several requests each): counted once, their cost not bounded here."""
    upper_cost_usd: float | None
    """The upper cost in USD (null: unknown — no prices, or conversations; 0 for a replay)."""
    priced: bool
    """The target pins prices."""


class RoleCounts(BaseModel):
    """Requests by role."""

    model_config = _FROZEN
    subject: int
    """Requests to the targets under test."""
    judge: int
    """Requests to the judges."""
    total: int
    """Both."""


class RoleCosts(BaseModel):
    """Upper cost in USD by role (null: unknown)."""

    model_config = _FROZEN
    subject: float | None
    """The targets under test."""
    judge: float | None
    """The judges."""
    total: float | None
    """Both (null when either is unknown)."""


class PlanEstimate(BaseModel):
    """Planned requests by role (judge calls included) and the upper cost estimate from the pinned prices."""

    model_config = _FROZEN
    requests: RoleCounts
    """Requests by role."""
    inference_calls_upper: int
    """At most this many inference calls in all."""
    conversation_cells: int
    """Cells that are conversations, counted once each."""
    upper_cost_usd: RoleCosts
    """Upper cost by role."""
    targets: list[EstimateRow]
    """Per target and role: subjects first, then judges, each by target id."""
    basis: str
    """How the upper bound of one request is computed."""
    notes: list[str]
    """What the figures leave out (conversations, unpriced targets, a preview)."""
    note: str
    """What the figures are not (a bill, a provider-enforced cap)."""
