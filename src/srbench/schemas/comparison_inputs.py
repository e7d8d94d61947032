"""What compare (stages/compare) reads of a stored run report: its run, status, mode, early stop, plan,
the targets' config-hash evidence and the benchmark rows' published figures; and of each stored result
row (`ComparedRow`). Views of the stored JSON (fields compare does not read are ignored); a field a
report or row lacks reads as its default, as the dict code's `.get` did."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, JsonValue

from srbench.schemas.call import Usage
from srbench.schemas.cell import CellState
from srbench.schemas.comparison_claims import MissingEvidence
from srbench.schemas.report_sections import ConfigHashEvidence
from srbench.schemas.results import TurnRouting

_VIEW = ConfigDict(extra="ignore", frozen=True, use_attribute_docstrings=True)
Number = int | float


class ReportProvenance(BaseModel):
    """Where the report came from."""

    model_config = _VIEW
    plan_sha256: str | None = None
    """The plan the report was made from (None: not recorded)."""


class ReportTarget(BaseModel):
    """A target of the report's summary."""

    model_config = _VIEW
    target_id: str
    """The target."""
    kind: str | None = None
    """Its kind (single, mom, …)."""
    config_hash_evidence: ConfigHashEvidence | MissingEvidence | None = None
    """A router's config-hash evidence (absent from a report made before evidence was recorded)."""


class ReportSummary(BaseModel):
    """The report's summary."""

    model_config = _VIEW
    targets: list[ReportTarget] = []
    """Its targets."""


class PublishedFigure(BaseModel):
    """A benchmark row's published (upstream) rule and figure."""

    model_config = _VIEW
    rule: str | None = None
    """The published rule."""
    metric: str | None = "accuracy"
    """The published metric."""
    score: Number | None = None
    """The published rule's figure."""
    graded_differently: int | None = None
    """Cells whose published score differs from sr-bench's verdict."""
    reason: str | None = None
    """Why a figure is missing."""
    note: str | None = None
    """A note on the published rule."""


class ReportBenchmarkRow(BaseModel):
    """One target's row of one benchmark in the report."""

    model_config = _VIEW
    target_id: str | None = None
    """The target."""
    benchmark: str
    """The benchmark."""
    sr_bench_rule: str | None = None
    """sr-bench's grading rule."""
    accuracy: Number | None = None
    """sr-bench's accuracy."""
    published: PublishedFigure | None = None
    """The published rule's figure, if any."""


class ComparedReport(BaseModel):
    """What compare reads of a stored run report."""

    model_config = _VIEW
    run_id: str | None = None
    """The run (None: a report made outside a run)."""
    status: str | None = None
    """The run's status when its report was made."""
    mode: str | None = "live"
    """live, preview or replay (absent: live)."""
    early_stop: dict[str, JsonValue] | None = None
    """The early-stop record as the report stores it (any version: JSON), or None."""
    provenance: ReportProvenance | None = None
    """Where the report came from."""
    summary: ReportSummary | None = None
    """Its summary (the targets)."""
    benchmarks: list[ReportBenchmarkRow] = []
    """Its benchmark rows."""


class RoutedCall(BaseModel):
    """What a router adapter read from one routed call, as a stored row or conversation turn holds it
    (schemas/results.py `TurnRouting`); a field the row lacks reads as unknown (None), `has_call` as False."""

    model_config = _VIEW
    has_call: bool = False
    """Whether there is a call record."""
    http_status: int | None = None
    """The HTTP status of the response, None without one."""
    selected_model: str | None = None
    """The model the router chose."""
    deployment: str | None = None
    """The deployment the router named."""
    inference_calls: int | None = None
    """Inference calls behind the call, None when not reported."""
    retries: int | None = None
    """The router's retries, None when not reported."""
    fallbacks: int | None = None
    """The router's fallbacks, None when not reported."""

    def routing(self) -> TurnRouting:
        """The call's routing as the report's routing figures count it."""
        return TurnRouting(has_call=self.has_call, http_status=self.http_status, selected_model=self.selected_model,
                           deployment=self.deployment, inference_calls=self.inference_calls, retries=self.retries,
                           fallbacks=self.fallbacks)


class ComparedRow(RoutedCall):
    """What compare and the early-stop monitor read of one result row (schemas/results.py `ResultRow`, as
    stored; numbers kept as stored). Whether an auxiliary cost field is in the stored row at all matters
    (`has`): a report that never wrote `judge_cost_usd` metered no judge."""

    case_id: str
    """The case."""
    target_id: str
    """The target."""
    benchmark: str
    """The case's benchmark."""
    state: CellState
    """The cell's state."""
    seq: int | None = None
    """Its position in the plan (absent: 0 for the analysis order)."""
    correct: bool | None = None
    """Its grade's verdict; None when not graded."""
    usage: Usage | None = None
    """The four token buckets of its (subject) calls; None when one is unmetered."""
    cost_usd: Number | None = None
    """Principal cost; None when unknown."""
    cache_neutral_cost_usd: Number | None = None
    """Principal cost with every cached token priced as input; None when unknown."""
    judge_cost_usd: Number | None = None
    """The judge call's cost; None when unknown (or absent: see `has`)."""
    simulator_cost_usd: Number | None = 0.0
    """A conversation's user-simulator cost; absent from a single call's row, which made no such call (0)."""
    scaffolding_cost_usd: Number | None = 0.0
    """A conversation's scaffolding cost; absent from a single call's row (0)."""
    latency_s: Number | None = None
    """Its call's latency."""
    ttft_s: Number | None = None
    """Time to first token."""
    turn_routing: list[RoutedCall] | None = None
    """A router's conversation: each subject turn's routing (None: the row's own call is the one routed)."""

    def has(self, name: str) -> bool:
        """Whether the stored row holds field `name` at all (null included)."""
        return name in self.model_fields_set

    def ok(self) -> int:
        """1 when the cell completed with a correct answer, else 0 (failed, cancelled, ambiguous: incorrect)."""
        return int(self.state == "completed" and self.correct is True)
