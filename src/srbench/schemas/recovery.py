"""A recovery plan (REC-1..REC-4, service/runs/recovery.py): which cells of a terminated run a child run
may attempt again, which it may not and why, and the parent as it was when the plan was made.

The operator reviews it (``recover-plan``) and submits it back (``recover``); ``plan_sha256`` covers
every field but itself and ``selected_cells`` (the operator may narrow the selection), so a plan
made before the parent changed is refused.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from srbench.schemas.cell import CellState

RecoveryMode = Literal["undispatched", "failed"]


class ParentSnapshot(BaseModel):
    """The parent run when the plan was made."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    status: str
    """Its status (a terminated one)."""
    plan_sha256: str
    """Its frozen plan."""
    total: int
    """Its planned cells."""
    known_cost_usd: int | float
    """What its calls are known to have cost."""


class RecoveryCell(BaseModel):
    """A cell of the parent."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    cell_id: str
    """The cell."""
    case_id: str
    """Its case."""
    target_id: str
    """Its target."""
    state: CellState
    """Its state in the parent."""


class KnownCostTarget(BaseModel):
    """What a recovery plan reads of one target of its parent's report summary (a view: the other fields are
    ignored)."""

    model_config = ConfigDict(extra="ignore", frozen=True, use_attribute_docstrings=True)
    known_cost_usd: int | float
    """What the target's calls are known to have cost (as stored)."""


class KnownCostSummary(BaseModel):
    """The parent's report summary as a recovery plan reads it."""

    model_config = ConfigDict(extra="ignore", frozen=True, use_attribute_docstrings=True)
    targets: list[KnownCostTarget]
    """Its targets."""


class KnownCostReport(BaseModel):
    """What a recovery plan reads of its parent's report: each target's known cost (`ParentSnapshot`)."""

    model_config = ConfigDict(extra="ignore", frozen=True, use_attribute_docstrings=True)
    summary: KnownCostSummary
    """The report's summary."""

    def known_cost_usd(self) -> int | float:
        """The targets' known costs summed."""
        return sum(t.known_cost_usd for t in self.summary.targets)


class ExcludedCell(RecoveryCell):
    """A cell the plan leaves out, and why."""

    reason: str
    """completed, claimed, ambiguous_dispatch, already_dispatched, never_dispatched, unknown_usage_or_cost."""
    claimed_by: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """The child run that claimed it (present only when the reason is ``claimed``)."""


class RecoveryPlan(BaseModel):
    """The reviewed plan of a recovery child run."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    kind: Literal["recovery-plan"] = "recovery-plan"
    """What this document is."""
    version: str
    """The recovery rules' version."""
    parent: str
    """The run to recover."""
    mode: RecoveryMode
    """undispatched (cells that never sent a call) or failed (new, paid attempts of failed cells)."""
    parent_snapshot: ParentSnapshot
    """The parent when the plan was made."""
    eligible: list[RecoveryCell]
    """The cells a child may attempt, in the parent's order."""
    excluded: list[ExcludedCell]
    """The others, each with its reason."""
    excluded_counts: dict[str, int]
    """Excluded cells per reason."""
    requires_acknowledgement: bool
    """Recovering needs --acknowledge-new-attempt (mode failed: attempts cost again)."""
    note: str
    """What recovering this way does."""
    plan_sha256: str
    """SHA-256 of the plan's canonical JSON without this field and `selected_cells`."""
    selected_cells: list[str]
    """The cells to attempt (all eligible ones; the operator may keep fewer)."""
