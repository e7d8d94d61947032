"""A run as the service reads it back (`RunManager.get`, `list`, `list_owned`): its journal row, its progress
from the maintained counters, its planned targets and, for one run, its lineage, budget and early-stop
decision. The API's run view (`service.api.responses.RunView`, built by `service.wire.views`) is its
projection: ISO times, the caller's idempotency key, the owner and the manifest beside it.

`Progress`, `TargetInfo`, `RunLineage` and `RunBudget` are served as they are (they are the answer's parts).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, WithJsonSchema

from srbench.schemas.cell import RunStatus
from srbench.schemas.early_stop import EarlyStopRecord
from srbench.schemas.plan import PlanMode

# what runs in a run's insert transaction (its owner, its experiment link, a recovery's claims): the writer's
# connection and the new run's id
OnCreate = Callable[[sqlite3.Connection, str], None]

# a JSON number served as the record holds it (an int stays an int: the answer's bytes are the record's)
Number = Annotated[int | float, WithJsonSchema({"type": "number"})]


class Progress(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    total: int
    """The run's planned cells."""
    completed: int
    """Cells whose call completed (an answer, graded or not)."""
    failed: int
    """Cells whose call failed."""
    cancelled: int
    """Cells cancelled before they finished."""
    ambiguous: int
    """Cells in flight when the service stopped: their call may have been sent and billed."""
    running: int
    """Cells whose subject or judge call is in flight."""
    pending: int
    """Cells not sent yet."""


class TargetInfo(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    id: str
    """The target's id."""
    kind: Literal["single", "mom"] | None
    """single (one model) or mom (a router)."""
    model: str | None
    """The model it names."""


class RunLineage(BaseModel):
    """Where a run sits among its recoveries (one run only)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    parent: str | None
    """The run this one recovers (null: it recovers none)."""
    children: list[str]
    """The runs recovering this one, oldest first."""
    parent_known_cost_usd: Number | None = None
    """A recovery: the parent's known cost when the recovery was planned (absent: not a recovery)."""


class RunBudget(BaseModel):
    """A run's RUN-8 reservation state (one run with a cost cap only)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    cap_usd: Number
    """The plan's cost cap."""
    spent_usd: Number
    """The known cost of the calls that finished."""
    reserved_usd: Number
    """The cost reserved for calls in flight."""
    unknown_cost_calls: int
    """Calls whose cost is unknown (not counted in spent_usd)."""
    note: str
    """What the budget is (and is not)."""


class RunState(BaseModel):
    """A run as the service reads it back (times as epoch seconds, its idempotency key as stored)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    id: str
    """run-<20 hex>."""
    name: str
    """The plan's name."""
    mode: PlanMode
    """The plan's mode."""
    profile: str | None
    """The plan's profile, if any."""
    status: RunStatus
    """The run's status (as it will be recorded, while a storage fault delays its end: `end_recorded`)."""
    plan: str
    """The frozen plan object's digest."""
    plan_sha256: str
    """The plan's hash."""
    idempotency_key: str | None
    """The key it was submitted with, as stored (a scoped actor's key carries its owner)."""
    parent: str | None
    """The run this one recovers, if any."""
    targets: list[str]
    """The planned targets' ids."""
    created_at: float
    """Epoch seconds."""
    started_at: float | None
    """Epoch seconds, once it started."""
    finished_at: float | None
    """Epoch seconds, once it ended."""
    updated_at: float
    """Epoch seconds of the latest change to the run or one of its cells."""
    error: str | None
    """Why it failed or stopped, if it did."""
    cancel_requested: bool
    """A cancel was asked for."""
    progress: Progress
    """Its cells by state."""
    end_recorded: bool
    """False while a storage fault keeps the journal from recording the run's end."""
    target_info: list[TargetInfo]
    """Each planned target's id, kind and model."""
    lineage: RunLineage | None = None
    """One run only: its parent and children."""
    budget: RunBudget | None = None
    """One run only: its budget (null: no cost cap)."""
    early_stop: EarlyStopRecord | None = None
    """One run only: the stopping rule's decision as recorded in the run (null: it did not stop early)."""
