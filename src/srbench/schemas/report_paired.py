"""The report's paired section (stages/report/in_run.py, partial.py): every router target of a live run
against the strongest single target of the same run. It is one of three shapes — `PairedInRun`
(`compare` on the run itself), `PartialPaired` (a run that ended without an answer in every cell,
schemas/report_sections.py) or `PairedUnavailable` (why there is no figure yet) — dumped with the fields
it has, as the dict it replaces was stored."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, JsonValue

from srbench.schemas.comparison import (
    Aggregation,
    BaselineChoice,
    Candidate,
    Comparison,
    Evidence,
    Provenance,
)
from srbench.schemas.comparison_claims import EarlyStopShortening, SelectionSummary
from srbench.schemas.comparison_published import PublishedRow
from srbench.schemas.intervals import StatisticsBlock
from srbench.schemas.report_sections import PartialPaired

_FROZEN = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

DROPPED = frozenset({"kind", "schema_", "baseline_run", "candidate_run"})
"""The comparison's fields the section leaves out (both sides are the run itself)."""


class PairedUnavailable(BaseModel):
    """No paired figure yet: compare refused the run (still running, or not comparable)."""

    model_config = _FROZEN
    available: Literal[False] = False
    """There is no figure."""
    reason: str
    """Why (compare's refusal, one line)."""

    def model_post_init(self, context: Any, /) -> None:
        self.__pydantic_fields_set__.add("available")       # always written

    def dump(self) -> dict[str, JsonValue]:
        """The stored JSON."""
        return self.model_dump(mode="json")


class PairedInRun(BaseModel):
    """`compare` with the run on both sides (schemas/comparison.py `Comparison` without its kind, schema and
    run sides), its candidates the router targets only."""

    model_config = _FROZEN
    available: Literal[True] = True
    """There is a figure."""
    version: str
    """The sr-bench version that made it."""
    compare_version: str
    """The compare stage's version."""
    case_sha256: str
    """The case set of the run."""
    cases: int
    """Compared cases."""
    planned_cases: int
    """Planned cases."""
    benchmarks: list[str]
    """The benchmarks compared."""
    benchmark_weights: dict[str, float]
    """Their weights (REP-4)."""
    evidence: Evidence
    """How much the comparison may conclude."""
    margin: float | None
    """The non-inferiority margin (None: none declared)."""
    claim_rule: str
    """The plan's claim rule."""
    statistics: StatisticsBlock
    """The plan's statistics block as compare read it."""
    early_stop: EarlyStopShortening | None
    """How an early stop shortened the compared cases (None: the run did not stop early)."""
    baseline: BaselineChoice
    """The baseline (single) target."""
    savings_blocked: str | None
    """Why no saving is claimed at all (None: savings are computed)."""
    candidates: list[Candidate]
    """Every router target against the baseline."""
    limitations: list[str]
    """What the comparison does not show."""
    selection: SelectionSummary | None = None
    """How the baseline's selection among K singles is adjusted for (plans with baseline_selection: adjusted)."""
    margin_source: str | None = None
    """Where the margin came from."""
    published: list[PublishedRow] | None = None
    """sr-bench's and the published rules' figures side by side."""
    aggregation: Aggregation | None = None
    """How the quality figures aggregate."""
    provenance: Provenance | None = None
    """The reports compared."""

    def model_post_init(self, context: Any, /) -> None:
        self.__pydantic_fields_set__.add("available")       # always written

    @classmethod
    def of(cls, cmp: Comparison, routers: set[str]) -> PairedInRun:
        """The section of `cmp` (the run against itself): its fields set, the candidates in `routers`."""
        fields = {k: getattr(cmp, k) for k in cmp.model_fields_set - DROPPED}
        return cls(**fields | {"candidates": [c for c in cmp.candidates if c.target_id in routers]})

    def dump(self) -> dict[str, JsonValue]:
        """The stored JSON: the fields set."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


Paired = PairedInRun | PartialPaired | PairedUnavailable
"""The report's paired section."""
