"""A replay (IT-4, rule ``replay`` in stages/derived/replay.py): the cells of an offline estimate that reuses
saved single-model answers along a preview run's routes, and its compatibility receipt. The replay
run's plan carries the receipt (``replay``) with the object's digest."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class ReplayReceipt(BaseModel):
    """What was replayed from what, and that no model was called."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    version: str
    """The compatibility rules' version (``sr-bench-replay-compatibility-v1``)."""
    baseline_run: str
    """The run whose saved answers are reused."""
    preview_run: str
    """The preview run whose routes choose them."""
    baseline_plan_sha256: str
    """The baseline's frozen plan."""
    preview_plan_sha256: str
    """The preview's frozen plan."""
    case_sha256: str
    """The dataset both ran."""
    cells: int
    """Cells replayed."""
    model_requests: Literal[0] = 0
    """Model calls the replay made: none."""
    evidence_mode: Literal["offline_estimate"] = "offline_estimate"
    """A diagnostic estimate, never a measured run."""


class ReplayCell(BaseModel):
    """One replayed cell: the preview's case and target, the baseline's request and answer."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    case_id: str
    """The case."""
    target_id: str
    """The previewed (router) target."""
    request: str | None
    """Digest of the baseline's request object."""
    call: str
    """Digest of the replay record (the saved answer attributed to the previewed route)."""
    judge_call: str | None
    """Digest of the baseline's judge call record, if the cell was judged."""


class Replay(BaseModel):
    """The stored replay object."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, use_attribute_docstrings=True)
    kind: Literal["replay"] = "replay"
    """What this object is."""
    schema_: Literal[1] = Field(default=1, alias="schema")
    """The layout of this object."""
    receipt: ReplayReceipt
    """The compatibility receipt."""
    cells: list[ReplayCell]
    """The replayed cells, in the preview's order."""
