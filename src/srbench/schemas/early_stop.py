"""A live run's early-stop record (service/runs/early_stop.py): the decisions that stopped it and, once the
run closes, what the stop saved. Kept in the run's `extra.early_stop` and carried into its report as
``dump()``: the fields set, so the stored JSON is what the dict of before held."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, JsonValue

from srbench.schemas.event_data import StopReason
from srbench.schemas.intervals import StopDecision

_FROZEN = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class StopSelection(BaseModel):
    """The baseline was selected among K singles: the decision is on the adjusted bounds (issue 28)."""

    model_config = _FROZEN
    k: int
    """The singles the baseline was chosen among."""
    adjustment: str
    """How the bounds are adjusted for the choice."""


class TargetDecision(StopDecision):
    """One candidate's decision against its baseline at the look that stopped the run."""

    target_id: str
    """The candidate target."""
    baseline_target_id: str
    """The baseline it was paired with."""
    selection: StopSelection | None = None
    """Set when the baseline was selected among several singles (absent otherwise)."""


class EarlyStopRecord(BaseModel):
    """Why and when the run stopped early; the saving fields are set when the run closes."""

    model_config = _FROZEN
    rule: Literal["betting"]
    """The stopping rule."""
    method: str
    """The confidence-sequence method."""
    order: str
    """The order the cases were dispatched and analysed in."""
    reason: StopReason
    """Why the run stops."""
    summary: str
    """Each decision in one line."""
    question: Literal["sign", "non_inferiority"]
    """The question the decisions answer."""
    margin: float | None
    """The non-inferiority margin (null: the sign of Δ)."""
    decided_at_cases: int
    """Cases observed when it decided."""
    planned_cases: int
    """Cases the plan holds."""
    decided_at: float
    """When it decided (epoch seconds)."""
    decisions: list[TargetDecision]
    """Every candidate's decision."""
    baseline: str
    """The declared baseline run, or "strongest single target of this run"."""
    cells_not_sent: int | None = None
    """Cells never sent (set when the run closes)."""
    cells_not_sent_by_target: dict[str, int] | None = None
    """Cells never sent, by target (set when the run closes)."""
    subject_calls_not_sent: int | None = None
    """Subject calls never sent (set when the run closes)."""
    estimated_saving_usd: float | None = None
    """Money not spent, estimated (null: a cost was unknown; set when the run closes)."""
    saving_basis: str | None = None
    """How the saving is estimated (set when the run closes)."""

    def dump(self) -> dict[str, JsonValue]:
        """The stored JSON object: the fields set, in JSON form."""
        return self.model_dump(mode="json", exclude_unset=True)
