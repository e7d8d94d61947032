"""Objects derived from a terminated run with zero model calls (stages/derived/rules.py): the offline
regrade (IT-6: the saved final answers graded again with the current graders) and the training
export (IT-7: a dev-labelled, complete, rectangular run as a case × target matrix)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from srbench.schemas.call import Usage
from srbench.schemas.cell import CellState
from srbench.schemas.dataset import Message, Split
from srbench.schemas.generation import GenerationParams
from srbench.schemas.wire import JSONObject

Number = int | float


def _config() -> ConfigDict:
    return ConfigDict(extra="forbid", frozen=True, populate_by_name=True, use_attribute_docstrings=True)


class RegradeRow(BaseModel):
    """One cell graded again."""

    model_config = _config()
    cell_id: str
    """The cell."""
    case_id: str
    """Its case."""
    target_id: str
    """Its target."""
    benchmark: str
    """Its benchmark."""
    correct: bool
    """The new verdict."""
    status: str
    """The new grade status (the cell's state when it had no answer)."""
    previous_correct: bool
    """The verdict of the run's report."""
    changed: bool
    """The verdict changed."""
    published_score: Number | None
    """The benchmark's published rule's new score."""
    previous_published_score: Number | None
    """That score in the run's report."""


class RegradeTarget(BaseModel):
    """A target's new totals."""

    model_config = _config()
    target_id: str
    """The target."""
    total: int
    """Its cells."""
    correct: int
    """Those now credited."""
    accuracy: Number | None
    """correct / total (None: no cell)."""


class RegradeBenchmark(RegradeTarget):
    """A target's new totals on one benchmark, with the published rule's figure."""

    benchmark: str
    """The benchmark."""
    published: JSONObject | None      # PublishedSummary's stored JSON (benchmarks/published_grades.py)
    """The benchmark's published figure over these cells (None: the benchmark has none)."""


class OfflineRegrade(BaseModel):
    """The stored offline regrade of a run (rule ``regrade``)."""

    model_config = _config()
    kind: Literal["offline-regrade"] = "offline-regrade"
    """What this object is."""
    schema_: Literal[1] = Field(default=1, alias="schema")
    """The layout of this object."""
    version: str
    """The sr-bench version that made it."""
    regrade_version: str
    """The regrade rule's version."""
    run_id: str
    """The run regraded."""
    grader_versions: dict[str, str]
    """{benchmark: grader version} used now."""
    published_rules: dict[str, list[str | None]]
    """{benchmark: [published rule, published conversation rule]} used now."""
    original_grader_versions: dict[str, str]
    """The plan's grader versions."""
    original_report: str
    """Digest of the run's report regraded."""
    results: list[RegradeRow]
    """One row per cell."""
    changed_count: int
    """Cells whose verdict changed."""
    published_changed_count: int
    """Cells whose published score changed."""
    targets: list[RegradeTarget]
    """Per target."""
    benchmarks: list[RegradeBenchmark]
    """Per target and benchmark."""
    model_requests: Literal[0] = 0
    """Model calls the regrade made: none."""
    note: str
    """What this is and is not."""


class ExportAnswer(BaseModel):
    """One target's answer to an exported case."""

    model_config = _config()
    id: str
    """The target."""
    model: str
    """Its model (a router target: the router's name)."""
    kind: str
    """single or mom."""
    request_params: GenerationParams
    """The parameters it was called with (the fields its plan gave)."""
    answer: str | None
    """Its visible final answer."""
    correct: bool | None
    """sr-bench's verdict."""
    usage: Usage | None
    """Its four token buckets (None: unknown)."""
    cost_usd: Number | None
    """Its cost (None: unknown)."""
    subject_latency_s: Number | None
    """Request start to end of stream."""
    selected_model: str | None
    """The model a router said it chose."""
    final: CellState
    """The cell's final state."""


class ExportCase(BaseModel):
    """One exported case with every target's answer."""

    model_config = _config()
    case_id: str
    """The case."""
    benchmark: str
    """Its benchmark."""
    stratum: str
    """Its stratum."""
    split: Split | None
    """Its split (always dev here)."""
    messages: list[Message]
    """The prompt as sent (no reference answer)."""
    targets: list[ExportAnswer]
    """Each target's answer, in the report's order."""


class Export(BaseModel):
    """The stored training export of a run (rule ``export``)."""

    model_config = _config()
    kind: Literal["export"] = "export"
    """What this object is."""
    schema_: Literal[1] = Field(default=1, alias="schema")
    """The layout of this object."""
    version: str
    """The sr-bench version that made it."""
    export_version: str
    """The export rule's version."""
    run_id: str
    """The run exported."""
    split: Literal["dev"] = "dev"
    """Only dev data is exported."""
    profile: str
    """The run's profile."""
    plan_sha256: str
    """The run's frozen plan."""
    cases: list[ExportCase]
    """The matrix, one case per entry."""
    note: str
    """What this is and is not."""


_VIEW = ConfigDict(extra="ignore", frozen=True, use_attribute_docstrings=True)


class SavedRef(BaseModel):
    """A correction the stored report reads."""

    model_config = _VIEW
    digest: str
    """The correction object's digest."""


class SavedProvenance(BaseModel):
    """What the stored report was built from."""

    model_config = _VIEW
    plan: str
    """Digest of the run's frozen plan."""


class SavedReport(BaseModel):
    """What regrade, export and compare's pricing read of a stored run report (a view of its JSON: the
    fields they do not read are ignored)."""

    model_config = _VIEW
    run_id: str
    """The run."""
    results: str
    """Digest of its result rows' index (stages/report/results.py)."""
    provenance: SavedProvenance
    """What it was built from."""
    price_correction: SavedRef | None = None
    """The price correction its costs read (None: the plan's prices)."""


class SavedRow(BaseModel):
    """What regrade and export read of one stored result row (schemas/results.py `ResultRow`; a view:
    the fields they do not read are ignored, numbers kept as stored)."""

    model_config = _VIEW
    cell_id: str
    """The cell."""
    case_id: str
    """Its case."""
    target_id: str
    """Its target."""
    benchmark: str
    """Its benchmark."""
    state: CellState
    """Its state."""
    call: str | None
    """Digest of its call record (a conversation record for a multi-call cell)."""
    correct: bool | None
    """Its grade's verdict; None when not graded."""
    grade_status: str | None
    """Its grade's status, or None."""
    usage: Usage | None = None
    """Its four token buckets (None when one is unmetered)."""
    cost_usd: Number | None = None
    """Its principal cost (None: unknown)."""
    latency_s: Number | None = None
    """Its latency."""
    selected_model: str | None = None
    """The model a router chose."""
    conversation: bool | None = None
    """A multi-call cell."""
    published_score: Number | None = None
    """The published rule's score of its answer."""
