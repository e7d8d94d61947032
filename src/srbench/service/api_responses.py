"""The response side of the API contract: one pydantic model per answer the routes give.

The shapes are the ones the CLI and the Dashboard read today (issue 13 reshapes them to the upstream
wire format later). Top-level fields are closed (`extra="forbid"`): a field added to a handler but not
here fails the contract tests (`tests/service/test_contract.py`, schemathesis). Stored documents the
answers carry whole — plans, reports, comparisons, corrections, call records — are objects with
their own kinds and schema versions, typed `dict[str, Any]` here.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from srbench.schemas.dataset import DatasetManifest
from srbench.schemas.target import Target

Document = dict[str, Any]


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ErrorDetail(Answer):
    code: str = Field(description="stable for clients, e.g. invalid_input, not_found, damaged_object, "
                                  "insufficient_storage")
    message: str = Field(description="one line a person can act on")


class Error(Answer):
    error: ErrorDetail


class Health(Answer):
    version: str
    status: Literal["ready"]
    store_id: str


class Catalog(Answer):
    version: str
    benchmarks: list[Document]
    totals: Document
    weights_note: str


class SetupChecks(Answer):
    version: str
    home: str
    benchmarks: list[Document]
    note: str


class Targets(Answer):
    targets: list[Target]


class Registered(Answer):
    registered: list[str]


class Datasets(Answer):
    datasets: list[DatasetManifest]
    total: int


class CaseView(Answer):
    id: str
    benchmark: str
    messages: list[Document]
    metadata: Document = Field(description="stratum and split; never the reference answer")


class Cases(Answer):
    cases: list[CaseView]
    total: int
    offset: int


class PlanAnswer(Answer):
    plan: Document
    plan_sha256: str
    total: int
    status: Literal["validated"]
    model_requests: Literal[0]
    planning: Document | None = Field(default=None, description="sample-size planning of a live plan")


class Progress(Answer):
    total: int
    completed: int
    failed: int
    cancelled: int
    ambiguous: int
    running: int
    pending: int


class TargetInfo(Answer):
    id: str
    kind: str | None
    model: str | None


class RunView(Answer):
    id: str
    name: str
    mode: str
    profile: str | None
    status: Literal["queued", "running", "completed", "failed", "cancelled", "interrupted", "stopped_early"]
    plan: str
    plan_sha256: str
    idempotency_key: str | None
    parent: str | None
    targets: list[str]
    created_at: float
    started_at: float | None
    finished_at: float | None
    updated_at: float
    error: str | None
    cancel_requested: bool
    progress: Progress
    end_recorded: bool = Field(description="false while a storage fault keeps the journal from recording the "
                                           "run's end (shown as it will be recorded)")
    target_info: list[TargetInfo]
    lineage: Document | None = Field(default=None, description="parent, children (one run only)")
    budget: Document | None = Field(default=None, description="RUN-8 reservation state (one run only)")
    early_stop: Document | None = Field(default=None, description="the stopping rule's decision (one run only)")


class Runs(Answer):
    runs: list[RunView]
    next_cursor: str | None = Field(default=None, description="the next page's `after` (null: last page)")


class RunCreated(Answer):
    run: RunView
    created: bool


class ReplayCreated(RunCreated):
    model_requests: Literal[0]


class Report(Answer):
    report: Document
    cache_hit: bool
    explain: str


class Results(Answer):
    results: list[Document]
    total: int
    offset: int
    next_cursor: str | None = Field(default=None, description="the next page's `after` (null: last page)")


class CallSummary(Answer):
    cell_id: str
    seq: int
    case_id: str
    target_id: str
    state: str
    error_class: str | None
    error: str | None
    request: str | None
    call: str | None
    damaged: bool = Field(description="the call object is damaged or missing: `damage` says which and why")
    damage: str | None = None
    status: str | None = None
    http_status: int | None = None
    finish_reason: str | None = None
    usage: Document | None = None
    latency_s: float | None = None
    ttft_s: float | None = None
    response_model: str | None = None
    selected_model: str | None = None


class Calls(Answer):
    calls: list[CallSummary]
    total: int
    offset: int
    next_cursor: str | None = Field(default=None, description="the next page's `after` (null: last page)")


class CallDetail(CallSummary):
    record: Document | None = None
    request_object: Document | None = None


class Event(Answer):
    seq: int
    ts: float
    type: str
    data: Document


class Events(Answer):
    events: list[Event]
    total: int
    next_cursor: str | None = Field(default=None, description="the next page's `after` (null: last page)")


class Derived(Answer):
    """A derived result (comparison, regrade, export) with its digest and why it was (re)built."""

    model_config = ConfigDict(extra="allow")
    digest: str
    cache_hit: bool
    explain: str


class Repriced(Answer):
    correction: Document
    appended: bool
    model_requests: Literal[0]


class Reconciled(Repriced):
    cache_hit: bool
    explain: str


class Pushed(Answer):
    run_id: str
    bundle: str
    objects: int
    copied: int
    cells: int
    model_requests: Literal[0]


class Pulled(Answer):
    run_id: str
    bundle: str
    imported: bool
    copied: int
    cells: int | None = Field(default=None, description="absent when the run was pulled before")
    model_requests: Literal[0]


class Stopping(Answer):
    status: Literal["stopping"]
    results: Literal["kept"]


class Missing(Answer):
    digest: str
    referenced_from: list[str]
    references: int


class Unrepaired(Answer):
    digest: str
    reason: str


class Verified(Answer):
    objects: int
    bytes: int
    reachable: int
    references: int
    corrupt: list[str]
    missing: list[Missing]
    problems: int
    ok: bool
    elapsed_s: float
    repaired: list[str] | None = None
    unrepaired: list[Unrepaired] | None = None
    sources: list[str] | None = None


class Collected(Answer):
    model_config = ConfigDict(extra="allow")      # the per-kind counts and their *_bytes twins
    dry_run: bool
    grace_s: float
    items: list[Document]
    elapsed_s: float
