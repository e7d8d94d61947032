"""The report (kind ``report``, schema 1): the model stages/report/build.py builds and dumps at the edge.

Its stored bytes are the ones the dict-literal report had (tests/stages/test_report_model.py pins
them): `Report.dump` writes by alias and leaves out the fields a report did not have (e.g. a target's
auxiliary costs without a conversation cell, a provenance without sandbox receipts). The parameter
objects of the report rule are in stages/report/rule.py.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from srbench.schemas.cell import RunStatus
from srbench.schemas.early_stop import EarlyStopRecord
from srbench.schemas.plan import PlanMode, PlanRecovery
from srbench.schemas.recipe import RecipeSummary
from srbench.schemas.report_paired import Paired
from srbench.schemas.report_sections import (
    ConfigHashEvidence,
    Headline,
    PartialBlock,
    PriceCorrectionRef,
    RoutingFigures,
    UsageCorrectionRef,
)

_FROZEN = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


_OPEN = ConfigDict(extra="allow", frozen=True, use_attribute_docstrings=True)


class TargetSummary(BaseModel):
    """One target's figures over every planned cell of it (stages/report/build.py). A preview run
    adds its routing counts and a replay its `estimated_*` copies of the measured figures
    (`adjust_for_mode`). Unset fields are not written (`Report.dump`)."""

    model_config = _FROZEN
    target_id: str
    """The target's id."""
    kind: Literal["single", "mom"]
    """A single model or a router (mom)."""
    model: str | None
    """The model the target names."""
    total: int
    """Planned cells."""
    completed: int
    """Cells with a complete answer."""
    failed: int
    """Cells that ended without one (failed, cancelled, ambiguous)."""
    pending: int
    """Cells not ended yet."""
    graded: int | None
    """Cells with a grade (None in a preview)."""
    correct: int | None
    """Cells graded correct (None in a preview or a replay)."""
    ambiguous_dispatch: int
    """Cells whose dispatch is ambiguous (the service stopped mid-call)."""
    accuracy: float | None
    """Correct over every planned cell."""
    accuracy_ci95: list[float] | None
    """Wilson 95% interval of `accuracy`."""
    accuracy_answered: float | None
    """Correct over the answered cells."""
    accuracy_answered_ci95: list[float] | None
    """Wilson 95% interval of `accuracy_answered`."""
    macro_accuracy: float | None
    """The weighted mean of the per-benchmark accuracies (REP-4 weights, renormalised)."""
    sr_bench_score: float | None
    """The full sr-bench score (all nine benchmarks complete), else None (stages/report/full_score.py)."""
    sr_bench_score_ci95: list[float] | None
    """Its weighted Hoeffding 95% interval."""
    score_method: str
    """How the full score is computed."""
    missing_benchmarks: list[str]
    """Benchmarks of the registry the plan leaves out."""
    incomplete_benchmarks: list[str]
    """Benchmarks with a cell not completed and graded."""
    unpinned_benchmarks: list[str]
    """Benchmarks whose cases are not at their pinned sources."""
    score_scope: str | None = None
    """What the full score covers (or why there is none)."""
    tokens: dict[str, int] | None
    """The four token buckets summed, when every cell has a metered call."""
    cost_usd: float | None
    """Principal cost; None when one cell's is unknown."""
    known_cost_usd: float
    """The known part of the principal cost."""
    judge_cost_usd: float | None
    """Judge calls' cost."""
    total_cost_usd: float | None
    """Principal, judge and auxiliary costs; None when one is unknown."""
    cost_complete: bool
    """Whether every cell's principal cost is known."""
    cache_neutral_cost_usd: float | None
    """Principal cost with every cached token priced as input."""
    latency_p50_s: float | None
    """Median latency of the completed cells."""
    latency_p95_s: float | None
    """95th percentile latency of the completed cells."""
    ttft_p50_s: float | None
    """Median time to first token of the completed cells."""
    request_time_sum_s: float | None
    """Summed latency of every cell with a call."""
    request_count: int
    """Cells with a call."""
    grade_statuses: dict[str, int]
    """Cells per grade status."""
    failure_classes: dict[str, int]
    """Cells per error class."""
    selected_models: dict[str, int] | None
    """A router's choices per model (a conversation counts each turn); None for a single target."""
    decisions: dict[str, int] | None
    """A router's decisions (x-vsr-selected-decision) per name; None for a single target."""
    routing: RoutingFigures | None
    """A router's routing figures; None for a single target."""
    models_outside_pool: list[str]
    """Models that answered although the target's pool does not declare them."""
    simulator_cost_usd: float | None = None
    """The user simulator's cost (a target with a conversation cell)."""
    scaffolding_cost_usd: float | None = None
    """The scaffolding calls' cost (a target with a conversation cell)."""
    tokens_by_role: dict[str, dict[str, int] | None]
    """The four token buckets per role (None when one call of the role is unmetered)."""
    call_count: int
    """Recorded calls of every role."""
    calls_by_role: dict[str, int]
    """Recorded calls per role."""
    config_hash_evidence: ConfigHashEvidence | None
    """Whether a router's pinned config_hash is confirmed (stages/compare/evidence.py)."""
    models: dict[str, int] | None = None
    """Preview: the completed cells per model the router would select."""
    selection_statuses: dict[str, int] | None = None
    """Preview: the completed cells per selection status."""
    selection_reasons: dict[str, int] | None = None
    """Preview: the completed cells per selection reason."""
    evidence_mode: Literal["offline_estimate"] | None = None
    """Replay: the figures are an offline estimate, never a measurement."""
    estimated_accuracy: float | None = None
    """Replay: `accuracy` as estimated."""
    estimated_accuracy_ci95: list[float] | None = None
    """Replay: `accuracy_ci95` as estimated."""
    estimated_accuracy_answered: float | None = None
    """Replay: `accuracy_answered` as estimated."""
    estimated_accuracy_answered_ci95: list[float] | None = None
    """Replay: `accuracy_answered_ci95` as estimated."""
    estimated_macro_accuracy: float | None = None
    """Replay: `macro_accuracy` as estimated."""
    estimated_correct: int | None = None
    """Replay: `correct` as estimated."""
    estimated_cost_usd: float | None = None
    """Replay: `cost_usd` as estimated (what the saved answers cost)."""
    estimated_cache_neutral_cost_usd: float | None = None
    """Replay: `cache_neutral_cost_usd` as estimated."""
    estimated_latency_p50_s: float | None = None
    """Replay: `latency_p50_s` as estimated."""
    estimated_latency_p95_s: float | None = None
    """Replay: `latency_p95_s` as estimated."""
    estimated_ttft_p50_s: float | None = None
    """Replay: `ttft_p50_s` as estimated."""
    estimated_tokens: dict[str, int] | None = None
    """Replay: `tokens` as estimated."""
    estimated_request_time_sum_s: float | None = None
    """Replay: `request_time_sum_s` as estimated."""
    estimated_tokens_by_role: dict[str, dict[str, int] | None] | None = None
    """Replay: `tokens_by_role` as estimated (no model was called, so `tokens_by_role` is empty)."""


class BenchmarkRow(BaseModel):
    """One target on one benchmark. The benchmark's own report metrics (`Benchmark.report_metrics`),
    e.g. SimpleQA's, are extra fields; a replay renames its figures `estimated_*`.
    Unset fields are not written (`Report.dump`)."""

    model_config = _OPEN
    benchmark: str
    """The benchmark's id."""
    target_id: str
    """The target's id."""
    total: int
    """Planned cells."""
    completed: int
    """Cells with a complete answer."""
    correct: int | None = None
    """Cells graded correct (None in a preview)."""
    accuracy: float | None = None
    """Correct over every planned cell."""
    accuracy_ci95: list[float] | None = None
    """Wilson 95% interval of `accuracy`."""
    accuracy_answered: float | None = None
    """Correct over the answered cells."""
    sr_bench_rule: str
    """sr-bench's grading rule of the benchmark."""
    published: dict[str, JsonValue] | None = None
    """The benchmark's published rule on the same answers (benchmarks/published_grades.py `PublishedSummary`'s
    stored JSON: its fields depend on the rule)."""
    headline: Headline | None = None
    """The benchmark's published headline metric."""
    limitations: list[str] | None = None
    """The target's unconfirmed config pin, when there is one."""


class ReportSummary(BaseModel):
    """The run's totals and its per-target summaries. Unset fields are not written (`Report.dump`)."""

    model_config = _FROZEN
    wall_time_s: float | None
    """Seconds the run took so far."""
    total_spend_usd: float | None
    """What the run spent, None when a part is unknown (0 for a replay)."""
    principal_cost_usd: float | None
    """Principal cost of every target."""
    judge_cost_usd: float | None
    """Judge cost of every target."""
    simulator_cost_usd: float | None = None
    """User-simulator cost (a run with conversation cells)."""
    scaffolding_cost_usd: float | None = None
    """Scaffolding cost (a run with conversation cells)."""
    known_spend_usd: float
    """The known part of the spend."""
    planned_cells: int
    """Every planned cell of the run."""
    targets: list[TargetSummary]
    """One summary per target, in plan order."""


class DatasetRef(BaseModel):
    """The dataset a report's plan ran."""

    model_config = _FROZEN
    id: str
    """The dataset's id."""
    sha256: str
    """Its sha256."""
    object: str
    """The digest of its stored object."""


class Provenance(BaseModel):
    """What the report was built from. Unset fields are not written (`Report.dump`)."""

    model_config = _FROZEN
    plan: str
    """The plan's digest."""
    plan_sha256: str
    """The plan's identity (stages/plan/identity.py)."""
    dataset: DatasetRef
    """The dataset."""
    grader_versions: dict[str, str]
    """The plan's grader per benchmark."""
    adapter_versions: dict[str, str]
    """The plan's adapter versions."""
    report_version: str
    """The report layout's version."""
    profile: str
    """The plan's profile."""
    seed: int
    """The plan's seed."""
    sandbox_receipts: list[dict[str, JsonValue]] | None = None
    """The sandbox receipts of its grades, when a grade ran in a sandbox."""


class Report(BaseModel):
    """A run's report (kind ``report``, stages/report/build.py); its rows are the `results` object.
    Unset fields are not written (`Report.dump`)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, use_attribute_docstrings=True)
    kind: Literal["report"] = "report"
    """What this object is."""
    schema_: Literal[1] = Field(default=1, alias="schema")
    """The layout of this object."""
    version: str
    """The sr-bench version that built it."""
    report_version: str
    """The report layout's version."""
    run_id: str
    """The run."""
    status: RunStatus
    """The run's status when it was built."""
    mode: PlanMode
    """The plan's mode."""
    name: str
    """The plan's name."""
    profile: str
    """The plan's profile."""
    cost_policy: str
    """The plan's cost policy."""
    complete: bool
    """A live run completed in every cell."""
    summary: ReportSummary
    """Totals and per-target summaries."""
    benchmarks: list[BenchmarkRow]
    """One row per target and benchmark."""
    aggregation: dict[str, str]
    """What micro and macro mean wherever the report uses them."""
    results: str | None
    """Digest of the result rows' index (stages/report/results.py)."""
    recovery: PlanRecovery | None
    """A recovery child's parent and scope, or None."""
    price_correction: PriceCorrectionRef | None
    """The price correction it reads, or None."""
    accounting_correction: UsageCorrectionRef | None
    """The usage correction it reads, or None."""
    early_stop: EarlyStopRecord | None
    """The run's early-stop record, or None."""
    partial: PartialBlock | None
    """What was answered, for a run without an answer in every cell."""
    recipes: dict[str, RecipeSummary]
    """Router recipe captures per target (UI-7)."""
    paired: Paired | None
    """Routers against the strongest single target of the run (stages/report/in_run.py, partial.py;
    schemas/report_paired.py)."""
    limitations: list[str]
    """What a reader must know before reading the figures (stages/report/limits.py)."""
    provenance: Provenance
    """What it was built from."""
    content_digest: str | None = None
    """The digest of its content, rows included, timings not (stages/plan/identity.py)."""

    def model_post_init(self, context: Any, /) -> None:
        self.__pydantic_fields_set__.update({"kind", "schema_"})       # always written

    def dump(self) -> dict[str, JsonValue]:
        """The stored JSON: by alias, without the fields left unset."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)
