"""The stored comparison (kind ``comparison``, stages/compare, IT-5). The compare rule (stages/derived/rules.py)
stores `Comparison.model_validate(out).dump()`: the bytes equal the dict-literal code's (digests pinned in
tests/stages/test_comparison_model.py). The claim rules' blocks are models too (schemas/comparison_claims.py),
validated on the way out like every field: a key no model declares is refused.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from srbench.schemas.comparison_claims import (
    AdjustedInterval,
    Claim,
    ClaimPlanning,
    ClaimsByRule,
    Detectability,
    EarlyStopShortening,
    IntervalsByRule,
    LabelledBetting,
    LabelledHoeffding,
    MissingEvidence,
    NonInferiority,
    PrimaryClaim,
    Rule,
    SelectionSummary,
)
from srbench.schemas.comparison_published import PublishedRow
from srbench.schemas.intervals import BettingInterval, BootstrapInterval, StatisticsBlock
from srbench.schemas.plan import CostPolicy
from srbench.schemas.report_sections import ConfigHashEvidence, RoutingFigures

Number = int | float


def _config(extra: Literal["forbid", "allow"] = "forbid") -> ConfigDict:
    return ConfigDict(extra=extra, frozen=True, populate_by_name=True, use_attribute_docstrings=True)


class RunInfo(BaseModel):
    """Which run a side of the comparison is."""

    model_config = _config()
    run_id: str | None
    """The run (None: a report made outside a run)."""
    status: Literal["completed", "failed", "stopped_early"]
    """The run's status when its report was made (only these compare)."""
    plan_sha256: str
    """Its frozen plan."""
    profile: str
    """The plan's profile."""
    cost_policy: CostPolicy
    """The plan's cost policy."""
    targets: list[str]
    """The plan's target ids, in plan order."""


class Evidence(BaseModel):
    """How much the comparison may conclude."""

    model_config = _config()
    profile: str
    """The baseline plan's profile."""
    split: str | None
    """The dataset's split."""
    formal: bool
    """Both runs ran the standard holdout on the pinned, checked sources: a formal conclusion."""
    label: str
    """Formal, dev or custom source, in words."""
    standing: Literal["formal", "dev", "custom source"] | None = None
    """The standing (None: a comparison made before it was recorded; `label` says it)."""
    reason: str | None = None
    """Why it has that standing (stages/compare/limitations.py `evidence_of`)."""


class Costs(BaseModel):
    """A target's costs on the compared cases (None: some cell's cost is unknown)."""

    model_config = _config()
    principal: float | None
    """The subject's own calls."""
    total: float | None
    """Principal plus auxiliary."""
    auxiliary: float | None
    """Judge, simulator and scaffolding calls."""
    cache_neutral: float | None
    """The principal cost with cached input priced as fresh (REP-3)."""


class TiedBaseline(BaseModel):
    """A single target tied as the strongest of the baseline run."""

    model_config = _config()
    target_id: str
    """The target."""
    quality: float
    """Its exact weighted quality, as a float."""
    quality_exact: str
    """That quality as an exact fraction."""
    costs: Costs
    """Its costs on the compared cases."""
    cost_complete: bool
    """Its principal cost is known."""


class BaselineChoice(BaseModel):
    """The baseline the candidates are compared against (REP-5)."""

    model_config = _config()
    target_id: str
    """The chosen single target."""
    model: str
    """Its model."""
    quality: float
    """Its exact weighted quality, as a float."""
    quality_exact: str
    """That quality as an exact fraction."""
    tied_strongest: list[TiedBaseline]
    """Every single target tied as strongest, the chosen one first."""
    chosen_on_cases: int
    """The cases it was chosen on (all the baseline run measured)."""
    rule: str
    """How it was chosen, in words."""


class DeltaInterval(BaseModel):
    """A benchmark's own paired-difference interval (descriptive)."""

    model_config = _config()
    method: str
    """The interval's method."""
    ci: list[float]
    """Its bounds."""
    scope: str
    """What it covers, in words."""


class BenchmarkDelta(BaseModel):
    """A candidate against the baseline on one benchmark's compared cases (REP-1)."""

    model_config = _config()
    benchmark: str
    """The benchmark."""
    n: int
    """Its compared cases."""
    weight: float
    """Its weight (REP-4)."""
    candidate_correct: int
    """Cases the candidate answered correctly."""
    baseline_correct: int
    """Cases the baseline answered correctly."""
    candidate_accuracy: float
    """candidate_correct / n."""
    baseline_accuracy: float
    """baseline_correct / n."""
    delta: float
    """The accuracy difference."""
    candidate_accuracy_ci95: list[float]
    """The candidate's Wilson 95% interval."""
    baseline_accuracy_ci95: list[float]
    """The baseline's Wilson 95% interval."""
    delta_interval: DeltaInterval
    """The difference's Hoeffding interval on this benchmark alone."""
    wins: int
    """Cases only the candidate got right."""
    losses: int
    """Cases only the baseline got right."""
    ties: int
    """Cases both got right or both wrong."""


class ScopeSaving(BaseModel):
    """What the candidate saves against the baseline in one cost scope (null with a reason when unknown)."""

    model_config = _config()
    baseline_target_id: str | None
    """The tied strongest baseline with the lowest cost in this scope."""
    baseline_usd: float | None
    """Its cost."""
    candidate_usd: float | None
    """The candidate's cost."""
    saving_usd: float | None
    """baseline_usd − candidate_usd."""
    saving_pct: float | None
    """100·(1 − candidate/baseline)."""
    reason: str | None
    """Why the saving is unknown (None: it is known)."""


class Savings(BaseModel):
    """The candidate's savings per cost scope."""

    model_config = _config()
    principal: ScopeSaving
    """On the subject's own calls."""
    total: ScopeSaving
    """On principal plus auxiliary calls."""
    cache_neutral: ScopeSaving
    """On the cache-neutral cost."""


class Tokens(BaseModel):
    """Token totals over the compared cells."""

    model_config = _config()
    input: int
    """Input tokens."""
    cached_input: int
    """Cached input tokens."""
    cache_write: int
    """Cache-write tokens."""
    output: int
    """Output tokens."""


class Operations(BaseModel):
    """Latency and tokens of one side on the compared cells."""

    model_config = _config()
    latency_p50_s: float | None
    """Median latency of the completed cells."""
    latency_p95_s: float | None
    """95th percentile latency of the completed cells."""
    ttft_p50_s: float | None
    """Median time to first token."""
    tokens: Tokens | None
    """Token totals (None: some cell's usage is unknown)."""
    incorrect_by_state: dict[str, int]
    """Cells counted incorrect because they did not complete, by state."""


class OperationsPair(BaseModel):
    """Operations of both sides."""

    model_config = _config()
    baseline: Operations
    """The baseline target's."""
    candidate: Operations
    """The candidate's."""


class Candidate(BaseModel):
    """One candidate target against the baseline. Its claim fields (interval, intervals, claim_method,
    claims_by_rule, planning, primary_betting, selection, primary_adjusted) are written by
    stages/compare/claims.py (schemas/comparison_claims.py)."""

    model_config = _config()
    target_id: str
    """The candidate target."""
    kind: Literal["single", "mom"]
    """Its kind: a single model or a router (mom)."""
    model: str
    """Its model."""
    n: int
    """Compared cases."""
    quality: float
    """Its exact weighted quality, as a float."""
    quality_exact: str
    """That quality as an exact fraction."""
    baseline_quality: float
    """The baseline's quality on the same cases."""
    delta: float
    """quality − baseline_quality (macro)."""
    delta_exact: str
    """That difference as an exact fraction."""
    micro_delta: float
    """Mean per-case difference."""
    wins: int
    """Cases only the candidate got right."""
    losses: int
    """Cases only the baseline got right."""
    ties: int
    """Cases both got right or both wrong."""
    both_correct: int
    """Cases both got right."""
    both_wrong: int
    """Cases both got wrong."""
    benchmarks: list[BenchmarkDelta]
    """Per benchmark (REP-1)."""
    claim_rule: Rule
    """The rule that makes the claim (hoeffding or betting)."""
    claim: Claim
    """improvement, regression, inconclusive or blocked."""
    interval: LabelledHoeffding | LabelledBetting | AdjustedInterval | None = None
    """The interval that makes the claim (the declared rule's, or its selection-adjusted one)."""
    intervals: IntervalsByRule | None = None
    """Both rules' intervals."""
    claim_method: str | None = None
    """The method of the interval that makes the claim."""
    claims_by_rule: ClaimsByRule | None = None
    """The claim each rule's interval would make."""
    planning: ClaimPlanning | None = None
    """Sample-size planning of an inconclusive claim (None: the claim is settled)."""
    primary_betting: BettingInterval | None = None
    """The betting interval over the declared primary benchmarks alone, if any."""
    selection: SelectionSummary | None = None
    """The baseline's selection among K singles (plans that adjust for it)."""
    primary_adjusted: AdjustedInterval | None = None
    """The selection-adjusted interval over the primary benchmarks, if any."""
    non_inferiority: NonInferiority
    """The non-inferiority verdict and its margin."""
    bootstrap: BootstrapInterval
    """The stratified bootstrap interval (a diagnostic)."""
    claim_label: str
    """Formal or dev, in words."""
    savings: Savings
    """Savings per cost scope."""
    costs: Costs
    """Its costs on the compared cases."""
    operations: OperationsPair
    """Latency and tokens of both sides."""
    routing: RoutingFigures | None = None
    """A router's model mix, retries and fallbacks (None: not a router)."""
    config_hash_evidence: ConfigHashEvidence | MissingEvidence | None = None
    """Whether a router's pinned config_hash was confirmed by evidence."""
    interval_claim: Claim | None = None
    """The interval's own verdict when the claim is blocked."""
    primary: PrimaryClaim | None = None
    """The claim on the plan's declared primary benchmarks."""
    detectability: Detectability | None = None
    """For an inconclusive Hoeffding claim: the cases that would make the difference detectable."""


class Aggregation(BaseModel):
    """How the quality figures aggregate, in words."""

    model_config = _config()
    quality: str
    """The macro quality."""
    micro_delta: str
    """The micro difference."""


class Provenance(BaseModel):
    """The reports compared."""

    model_config = _config()
    baseline_report: str
    """The baseline run's report digest."""
    candidate_report: str
    """The candidate run's report digest."""


class Comparison(BaseModel):
    """A paired live comparison (IT-5, REP-3, REP-5, REP-6, REP-7)."""

    model_config = _config()
    kind: Literal["comparison"]
    """The object kind."""
    schema_: Literal[1] = Field(default=1, alias="schema")
    """The object's schema version."""
    version: str
    """The sr-bench version that made it."""
    compare_version: str
    """The compare stage's version."""
    baseline_run: RunInfo
    """The baseline run."""
    candidate_run: RunInfo
    """The candidate run."""
    case_sha256: str
    """The case set both runs planned."""
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
    claim_rule: Rule
    """The candidate plan's claim rule."""
    statistics: StatisticsBlock
    """The candidate plan's statistics block as compare read it."""
    early_stop: EarlyStopShortening | None
    """How an early stop shortened the compared cases (None: no run stopped early)."""
    baseline: BaselineChoice
    """The baseline target."""
    savings_blocked: str | None
    """Why no saving is claimed at all (None: savings are computed)."""
    candidates: list[Candidate]
    """Every candidate target against the baseline."""
    limitations: list[str]
    """What the comparison does not show."""
    selection: SelectionSummary | None = None
    """How the baseline's selection among K singles is adjusted for (plans with baseline_selection: adjusted)."""
    margin_source: str | None = None
    """Where the margin came from (declared in the plan or given post hoc)."""
    published: list[PublishedRow] | None = None
    """sr-bench's and the published rules' figures side by side."""
    aggregation: Aggregation | None = None
    """How the quality figures aggregate."""
    provenance: Provenance | None = None
    """The reports compared."""

    def dump(self) -> dict[str, JsonValue]:
        """The stored JSON shape (fields never set stay absent)."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)
