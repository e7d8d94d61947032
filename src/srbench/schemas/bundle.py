"""A run bundle: what a run needs beyond its objects (its journal rows), as one content-addressed object.

`sr-bench push RUN_ID` writes the run's objects and its bundle to a team object store and binds the
name ``runs/<run id>`` to the bundle once; `sr-bench pull RUN_ID` on another host reads the name,
checks every digest on arrival and imports the rows into its own journal. Reports, regrades and
comparisons of the pulled run are then built from the shared answers with zero model calls.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, JsonValue

RUN_COLUMNS = ("id", "name", "mode", "profile", "plan", "plan_sha256", "status", "idem_key", "parent", "total",
               "targets", "created_at", "started_at", "finished_at", "updated_at", "error", "cancel_requested",
               "extra")
CELL_COLUMNS = ("cell_id", "seq", "case_id", "target_id", "state", "request", "call", "error_class", "error",
                "updated_at", "judge_request", "judge_call", "reserved_usd")
CALL_COLUMNS = ("cell_id", "idx", "role", "target_id", "state", "request", "call", "error_class", "cost_usd",
                "reserved_usd", "updated_at")

ColumnValue: TypeAlias = str | int | float | None
"""A journal column's stored value (SQLite TEXT, INTEGER, REAL or NULL; the journal stores no BLOB)."""
Columns: TypeAlias = dict[str, ColumnValue]
"""One journal row as a bundle carries it: column → stored value (the columns are RUN_/CELL_/CALL_COLUMNS)."""


class BundledEvent(BaseModel):
    """One journaled event of the run (its `pulled` events are not carried)."""

    model_config = ConfigDict(extra="forbid")
    ts: float = Field(description="when it was journaled (epoch seconds)")
    type: str = Field(description="the event type (schemas/event_data.py)")
    data: dict[str, JsonValue] = Field(description="its payload as journaled (the JSON of its event-data model)")


class BundledBudget(BaseModel):
    """The run's budget row."""

    model_config = ConfigDict(extra="forbid")
    cap_usd: float
    spent_usd: float
    reserved_usd: float
    unknown_calls: int


class RunBundle(BaseModel):
    """The journal rows of one finished run; every object they name travels beside it."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["run-bundle"] = "run-bundle"
    schema_: int = Field(default=1, alias="schema")
    run: Columns = Field(description="the runs row (the idempotency key is not carried)")
    cells: list[Columns]
    calls: list[Columns] = Field(default_factory=list,
                                 description="the journaled calls of multi-call cells (absent when none)")
    events: list[BundledEvent]
    budget: BundledBudget | None = None
    corrections: dict[str, list[dict[str, JsonValue]]] = Field(
        default_factory=dict, description="usage and price correction histories, as journaled")
    datasets: list[dict[str, JsonValue]] = Field(default_factory=list, description="dataset manifests, without path")
    objects: list[str] = Field(description="every object digest the rows reach, sorted")
