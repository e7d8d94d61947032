"""The data of a run's events (the journal's ``events.data``): one frozen model per kind of fact.

The journal stores an event's data as ``json.dumps(data.dump(), sort_keys=True)``; ``dump`` keeps exactly the
fields the writer set (a field left unset is absent, one set to None is null), so the stored text is what the
dict literals of before wrote. Readers parse a stored row back with ``parse_event``; older journals may hold
keys earlier versions wrote, which reading ignores (``extra="ignore"``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, JsonValue

from srbench.schemas.event import EventType
from srbench.schemas.plan import StopScope
from srbench.schemas.wire import JSONObject

StopReason = Literal["settled", "unreachable", "settled or unreachable"]
"""Why valid early stopping stops a run."""


class EventData(BaseModel):
    """The base of every event's data: frozen, documented; dumped with only the fields the writer set."""

    model_config = ConfigDict(extra="ignore", frozen=True, use_attribute_docstrings=True)

    def dump(self) -> dict[str, JsonValue]:
        """The stored JSON object: the fields set by the writer, in JSON form."""
        return self.model_dump(mode="json", exclude_unset=True)


class NoData(EventData):
    """An event without facts (`running`, a replay's `completed`)."""


class ReplayOf(BaseModel):
    """The two runs a replay run joins."""

    model_config = ConfigDict(extra="ignore", frozen=True, use_attribute_docstrings=True)
    baseline: str
    """The live baseline run."""
    preview: str
    """The preview run whose routing decisions are replayed."""


class Created(EventData):
    """A run was created: a planned run with its plan and cells, or a replay joining two runs."""

    plan_sha256: str | None = None
    """The frozen plan's digest (a planned run)."""
    total: int | None = None
    """The run's planned cells (a planned run)."""
    replay_of: ReplayOf | None = None
    """The runs a replay joins (a replay)."""
    model_requests: int | None = None
    """Model requests a replay sent (always 0)."""


class RunEnded(EventData):
    """A run reached a terminal status (`completed`, `failed`, `cancelled`, `interrupted`, `stopped_early`)."""

    error: str | None = None
    """What went wrong, when the status carries an error."""
    reason: str | None = None
    """Why an unfinished run was interrupted (the service restarted)."""


class CancellationRequested(EventData):
    """Someone asked to cancel the run."""

    reason: str | None = None
    """The reason given with the request."""


class CellEvent(EventData):
    """A cell ended other than with an answer (`cell_failed`, `cell_cancelled`, `cell_ambiguous`)."""

    cell_id: str
    """The cell."""
    case_id: str
    """The cell's case."""
    target_id: str
    """The cell's target."""
    error_class: str | None = None
    """The closed error class the cell ended with (absent when the service restart made it ambiguous)."""
    error: str | None = None
    """The cell's error in words."""


class BudgetRefused(EventData):
    """A call's reservation would exceed the run's cost cap; the call was not sent."""

    cell_id: str
    """The cell."""
    reserve_usd: float
    """The reservation refused."""
    call_index: int | None = None
    """The call within a conversation cell (absent for a single-call cell)."""
    role: str | None = None
    """The call's role within a conversation cell."""


class EarlyStop(EventData):
    """Valid early stopping decided the run's question; no further cell is sent."""

    reason: StopReason
    """Why the run stops."""
    summary: str
    """Each decision in one line."""
    decided_at_cases: int
    """Cases observed when it decided."""
    planned_cases: int
    """Cases the plan holds."""


class EarlyStopRecorded(EventData):
    """The early stop's record was written to the run's extra."""

    cells_not_sent: int
    """Cells never sent."""
    estimated_saving_usd: float | None
    """Money not spent, estimated (null: a cost was unknown)."""


class StorageFault(EventData):
    """The store failed (full disk, read-only, I/O error) and the run ended."""

    code: str
    """The fault's code."""
    message: str
    """The fault in words."""
    ambiguous: int
    """Cells in flight made ambiguous."""
    not_dispatched: int
    """Cells never sent."""


class ObjectDamaged(EventData):
    """A stored object failed its digest when read."""

    digest: str
    """The object."""
    where: str
    """What read it."""
    message: str
    """The damage in words."""


class ReportFailed(EventData):
    """The run's report could not be built."""

    error: str
    """Why."""


class Pulled(EventData):
    """The run was pulled from another store as a bundle."""

    bundle: str
    """The bundle's digest."""


class DispatchStopped(EventData):
    """A target's dispatch stopped after a systematic failure."""

    target_id: str
    """The target stopped."""
    scope: StopScope
    """What stops: the target's cells only, or the whole run."""
    reason: str
    """Why, in words."""
    error_class: str | None
    """The failure's error class."""
    role: str | None = None
    """The call's role in a conversation cell (absent for a single-call cell)."""


class RecipeCaptured(EventData):
    """A MoM router's recipe was captured (or not) before the run."""

    target_id: str
    """The MoM target."""
    capture: str
    """The capture object's digest."""
    captured: bool
    """A recipe was captured."""
    projection_hash: str | None = None
    """Digest of the redacted config and recipes."""
    limitation: str | None = None
    """Why it was not captured."""


class RecipeChecked(EventData):
    """A captured recipe checked after the run."""

    target_id: str
    """The MoM target."""
    phase: Literal["after"]
    """When the check ran."""
    hash: JSONObject | None
    """The router's config hash view after the run, as the router gave it (third-party JSON)."""
    config_etag: str | None
    """The ETag of the router's config after the run."""
    unchanged: bool = False
    """The hash and the ETag are those of the capture."""
    problem: str | None = None
    """Why the capture does not hold for the whole run (null: it does)."""


class ConfigHashChecked(EventData):
    """A live MoM target's pinned config_hash probed before or after the run (IT-2)."""

    phase: str
    """before | after the run."""
    target_id: str
    """The MoM target."""
    expected: str
    """The pinned config_hash."""
    seen: str | None = None
    """The hash the router reported (null: none)."""
    ok: bool = True
    """The probe did not find a mismatch."""
    probe: str | None = None
    """How the probe went (answered, an error class, or no preview_url)."""
    evidence: Literal["confirmed", "mismatch", "missing", "unavailable"] | None = None
    """What the probe shows (absent in journals written before it was recorded)."""


EVENT_DATA: dict[EventType, type[EventData]] = {
    "created": Created, "running": NoData, "completed": RunEnded, "failed": RunEnded, "cancelled": RunEnded,
    "interrupted": RunEnded, "stopped_early": RunEnded, "cell_completed": CellEvent, "cell_failed": CellEvent,
    "cell_cancelled": CellEvent, "cell_ambiguous": CellEvent, "budget_refused": BudgetRefused,
    "cancellation_requested": CancellationRequested, "early_stop": EarlyStop,
    "early_stop_recorded": EarlyStopRecorded, "storage_fault": StorageFault, "object_damaged": ObjectDamaged,
    "report_failed": ReportFailed, "pulled": Pulled, "dispatch_stopped": DispatchStopped,
    "recipe_captured": RecipeCaptured, "recipe_checked": RecipeChecked, "config_hash_checked": ConfigHashChecked,
}
"""The data model of each event kind."""


def parse_event(type_: EventType, data: str) -> EventData:
    """A stored event's data (its JSON text) as its kind's model."""
    return EVENT_DATA[type_].model_validate_json(data)
