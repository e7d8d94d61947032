"""The response side of the API contract: one pydantic model per answer the routes give.

The shapes are upstream's wire format (vLLM Semantic Router's sr-bench 1.0 API, `service.wire`) with
sr-bench's own fields beside upstream's: an upstream client reads them unchanged, sr-bench's CLI and
Dashboard read the extras. Top-level fields are closed (`extra="forbid"`) where the answer is
sr-bench's: a field added to a handler but not here fails the contract tests
(`tests/service/test_contract.py`, schemathesis, `tests/service/test_upstream_wire.py`). Answers that
are stored documents themselves (a report, a comparison, a regrade, an export, a correction) are
open (`extra="allow"`) with their upstream fields required.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from srbench.schemas.call import CallRole, CallStatus, Usage
from srbench.schemas.cell import CallState, CellState, WireRunStatus
from srbench.schemas.comparison import Comparison as StoredComparison
from srbench.schemas.dataset import DatasetManifest
from srbench.schemas.estimate import PlanEstimate
from srbench.schemas.intervals import Planning
from srbench.schemas.plan import PlanMode
from srbench.schemas.target import Target
from srbench.schemas.target_checks import TargetCheck, TargetFailures
from srbench.schemas.wire import JSONObject, WireJSON
from srbench.service.api.catalog import CatalogEntry, CatalogTotals
from srbench.service.runs.state import Number, Progress, RunBudget, RunLineage, TargetInfo
from srbench.stages.compare.headline import RouterFacts

Document = WireJSON      # a JSON document an answer passes through in its wire form (a manifest, a report)
A = TypeVar("A", bound=BaseModel)


def extend(answer: BaseModel, model: type[A], /, **more: Any) -> A:
    """`answer` as `model` (a model adding fields to its own), with `more` set: the fields `answer` set and
    no others, so it is served with the same keys (`service.api.bindings`)."""
    return model.model_validate({**{k: getattr(answer, k) for k in answer.model_fields_set}, **more})


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Error(BaseModel):
    """Upstream's error body; some codes add fields (reviewed_plan_changed: dispatch_started and
    model_requests; replay_ineligible: reasons)."""

    model_config = ConfigDict(extra="allow")
    error: str = Field(description="one line a person can act on")
    code: str = Field(description="stable for clients, e.g. invalid_input, not_found, unauthorized, read_only, "
                                  "reviewed_plan_changed, replay_ineligible, damaged_object, insufficient_storage")


class Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Health(Answer):
    version: str
    status: Literal["ready"]
    store_id: str


class Profile(Answer):
    id: str
    purpose: str


class Catalog(Answer):
    version: str
    benchmarks: list[CatalogEntry]
    profiles: list[Profile]
    modes: list[str]
    totals: CatalogTotals
    weights_note: str
    plugin_problems: list[str] | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="each installed plugin left out, with why (absent: every plugin loaded, or none installed)")


class Targets(Answer):
    targets: list[Target]


class Registered(Answer):
    registered: list[str]


class StoreBenchmarkOptions(Answer):
    """The store's benchmark-options.json (DEP-1) as the service holds it; only the service writes it."""

    options: JSONObject = Field(description="benchmark id → its entry (judge, grader_version, user_simulator, …)")
    file: str = Field(description="the file's name in the store (written by `sr-bench options set`, never by hand)")


class TargetChecks(Answer):
    targets: list[TargetCheck]


class RunFailures(Answer):
    """A run's failed and ambiguous cells per target, by class: counts, the first message, a hint."""

    run_id: str
    targets: list[TargetFailures]


class WireDataset(DatasetManifest):
    """A dataset manifest as answers hand it out (service.datasets.ids): every route that takes a dataset
    takes `id`, `ref` or the `sha256`."""

    id: str = Field(pattern=r"^[0-9a-f]{64}$", description="the dataset's 64-hex id (upstream's form)")
    ref: str = Field(description="sr-bench's ds- id of the dataset (what frozen plans name)")


class Datasets(Answer):
    datasets: list[WireDataset]
    total: int


class DatasetBenchmark(Answer):
    id: str
    title: str
    count: int
    categories: list[Document]


class DatasetDetail(Answer):
    id: str = Field(description="the dataset's 64-hex id")
    ref: str = Field(description="its ds- id")
    name: str | None = None
    profile: str | None = None
    split: str | None = None
    custom_subset: bool | None = None
    case_count: int
    benchmarks: list[DatasetBenchmark]
    categories: list[Document]
    provenance: Document
    manifest: WireDataset = Field(description="sr-bench's full dataset manifest")


class CaseView(Answer):
    id: str
    benchmark: str
    category: str
    question: str
    messages: list[Document]
    input_status: Literal["available", "unavailable"]
    input_notice: str | None = None
    metadata: Document = Field(description="stratum and split; never the reference answer")


class Cases(Answer):
    dataset_id: str
    cases: list[CaseView]
    total: int
    dataset_total: int
    next_cursor: str | None
    limit: int
    offset: int


class BenchmarkSelection(Answer):
    id: str
    title: str
    eligible: bool
    case_count: int
    source_ids: list[str]
    reason_code: str | None
    reason: str | None


class DatasetSelection(Answer):
    profile: str
    split: Literal["dev", "holdout"]
    seed: int | None
    benchmarks: list[BenchmarkSelection]
    model_requests: Literal[0]


class Composed(Answer):
    dataset: WireDataset


class PlanAnswer(Answer):
    manifest: Document = Field(description="the frozen manifest (POST it to /runs): sr-bench's plan with "
                                           "targets as plain target objects and their target_profiles")
    plan_sha256: str
    total: int
    status: Literal["validated"]
    model_requests: Literal[0]
    planning: Planning | None = Field(default=None, description="sample-size planning of a live plan")
    estimate: PlanEstimate | None = Field(default=None, description="planned requests by role (judge calls included) "
                                                                "and an upper cost estimate from the pinned prices")


class RunView(Answer):
    id: str
    owner: str = Field(description="the actor that created the run (local: the operator)")
    name: str
    mode: PlanMode
    profile: str | None
    status: WireRunStatus = Field(description="upstream's run statuses: a run stopped early by its plan's rule is "
                                              "`completed`, with `stopped_early` true and its `early_stop` block")
    stopped_early: bool = Field(description="the run ended early by its plan's stopping rule (sr-bench's own end "
                                            "`stopped_early`): every cell not sent stays pending")
    manifest: Document = Field(description="the frozen manifest (a run list carries its summary)")
    manifest_summary: bool | None = None
    experiment_roles: list[str]
    plan: str = Field(description="the plan object's digest")
    plan_sha256: str
    idempotency_key: str | None
    parent: str | None
    targets: list[str]
    created_at: str = Field(description="ISO-8601, UTC")
    started_at: str | None
    finished_at: str | None
    updated_at: str
    error: str | None
    cancel_requested: bool
    progress: Progress
    end_recorded: bool = Field(description="false while a storage fault keeps the journal from recording the "
                                           "run's end (shown as it will be recorded)")
    target_info: list[TargetInfo]
    lineage: RunLineage | None = Field(default=None, description="parent, children (one run only)")
    budget: RunBudget | None = Field(default=None, description="RUN-8 reservation state (one run only)")
    early_stop: Document | None = Field(default=None, description="the stopping rule's decision (one run only)")


class Runs(Answer):
    runs: list[RunView]
    next_cursor: str | None = Field(default=None, description="the next page's `after` (null: last page)")


class RunCreated(RunView):
    created: bool = Field(description="false: the idempotency key was bound to this run already (still 201, as upstream)")


class ReplayCreated(RunCreated):
    model_requests: Literal[0]


class Report(Open):
    version: str
    run_id: str
    status: str
    summary: Document
    benchmarks: list[Document]
    limitations: list[str]
    provenance: Document
    partial: Document | None = Field(default=None, description=(
        "a run without an answer in every planned cell: answered and planned cells, whether it will still finish, "
        "and what `accuracy` (every planned cell) and `accuracy_answered` (answered cells only) are over; null "
        "when every planned cell was answered"))
    report_digest: str
    cache_hit: bool
    explain: str
    judges: list[str] = Field(default_factory=list, description=(
        "the plan's judge targets (auxiliary, never scored); empty: no benchmark of the run is judged, so it has "
        "no judge cost at all (shown as \"—\", not $0)"))


class EvidencePage(Answer):
    """A run's evidence page (results, calls): the rows after the cursor, upstream's paging fields."""

    total: int
    limit: int
    next_cursor: int | None


class Results(EvidencePage):
    results: list[Document]


class ConversationCall(Answer):
    """One call of a multi-call cell (service/runs/call_pages.py)."""

    index: int
    role: CallRole
    target_id: str
    state: CallState | None
    request: str | None
    call: str | None
    error_class: str | None
    cost_usd: Number | None
    damaged: bool
    damage: str | None = None
    status: CallStatus | None = None
    http_status: int | None = None
    finish_reason: str | None = None
    usage: Usage | None = None
    latency_s: Number | None = None
    ttft_s: Number | None = None
    response_model: str | None = None
    selected_model: str | None = None
    tool_calls: int | None = None


class CallSummary(Answer):
    id: str = Field(description="call-<32 hex>")
    case_id: str
    target_id: str
    role: CallRole = Field(description="subject, judge, simulator (a conversation: also scaffolding)")
    status: str = Field(description="sent, completed, failed, cancelled, sent_unknown")
    cell_id: str
    seq: int
    state: CellState
    error_class: str | None
    error: str | None
    request: str | None
    call: str | None
    damaged: bool = Field(description="the call object is damaged or missing: `damage` says which and why")
    damage: str | None = None
    http_status: int | None = None
    finish_reason: str | None = None
    usage: Usage | None = None
    latency_s: Number | None = None
    ttft_s: Number | None = None
    response_model: str | None = None
    selected_model: str | None = None
    calls: list[ConversationCall] | None = Field(default=None, description="a multi-call cell: every call of its "
                                                 "conversation in order, with its role")
    # upstream's call fields (service/wire/calls.py), on a single call with a stored record
    model: str | None = Field(default=None, description="the model the response named")
    cost_usd: Number | None = Field(default=None, description="the call priced at its target's frozen prices")
    cost_complete: bool | None = Field(default=None, description="whether `cost_usd` is known")
    started_at: str | None = Field(default=None, description="ISO-8601, UTC")
    finished_at: str | None = Field(default=None, description="ISO-8601, UTC")
    output_complete: bool | None = Field(default=None, description="false: the reply was cut at the output cap")
    response_usage: Document | None = Field(default=None, description="the four token buckets under upstream's names")
    inference_call_count: int | None = Field(default=None, description="inference calls behind the call")
    decision: str | None = Field(default=None, description="a router's decision header")
    config_hash: str | None = Field(default=None, description="a router's config hash header")
    activity: Document | None = Field(default=None, description="{received_bytes}")
    usage_complete: bool | None = Field(default=None, description="a router's call: whether its usage is known")


class Calls(EvidencePage):
    calls: list[CallSummary]


class CallDetail(CallSummary):
    record: Document | None = None
    final: str | None = Field(default=None, description="upstream's name of the visible reply")
    reasoning: str | None = Field(default=None, description="null: sr-bench keeps only the reasoning's length")
    raw_usage: Document | None = Field(default=None, description="the usage object as the response sent it")
    tool_calls: list[Document] | None = Field(default=None, description="the reply's tool calls")
    request_object: Document | None = None
    trajectory_object: Document | None = Field(default=None, description="an agent conversation's stored "
                                                                          "trajectory (kind trajectory)")


class Event(Answer):
    seq: int
    at: str = Field(description="ISO-8601, UTC")
    kind: str
    data: Document


class Events(Answer):
    events: list[Event]
    total: int
    next_cursor: str | None = Field(default=None, description="the next page's `after` (null: last page)")


class Comparison(StoredComparison):
    """The stored comparison (schemas/comparison.py) with its digest and upstream's fields beside it."""

    model_config = ConfigDict(extra="allow")
    baseline_run_id: str
    candidate_run_id: str
    baseline_targets: list[Document]
    candidate_targets: list[Document]
    comparisons: list[Document]
    routing_facts: list[RouterFacts] = Field(description="\"Does routing pay?\": per router (every candidate "
                                             "when none is a router) the headline facts the CLI prints and the "
                                             "Dashboard's panel renders (stages.headline)")
    comparison_digest: str
    cache_hit: bool
    explain: str
