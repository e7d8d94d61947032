"""What compare (stages/compare) reads of a stored run report: its run, status, mode, early stop, plan,
the targets' config-hash evidence and the benchmark rows' published figures. A view of the report JSON
(fields compare does not read are ignored); a field a report lacks reads as its default, as the dict
code's `.get` did."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from srbench.schemas.comparison_claims import MissingEvidence
from srbench.schemas.report_sections import ConfigHashEvidence

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
    early_stop: Any = None
    """The early-stop record as the report stores it (any version), or None."""
    provenance: ReportProvenance | None = None
    """Where the report came from."""
    summary: ReportSummary | None = None
    """Its summary (the targets)."""
    benchmarks: list[ReportBenchmarkRow] = []
    """Its benchmark rows."""
