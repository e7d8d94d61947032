"""Sections of the report (schemas/report.py): a router's routing figures, a benchmark's headline, the
partial block of a run without an answer in every cell, and the corrections the report reads."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from srbench.schemas.cell import RunStatus

_FROZEN = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class RoutingFigures(BaseModel):
    """A router target's routing figures over its answered calls (stages/report/routing.py)."""

    model_config = _FROZEN
    router: str
    """The router adapter that read the calls (targets/routers)."""
    answered_calls: int
    """Calls with a response (a conversation counts each subject turn)."""
    model_mix: dict[str, int]
    """Answered calls per served model."""
    deployments: dict[str, int]
    """Answered calls per deployment the router named."""
    unattributed_calls: int
    """Answered calls that name no served model."""
    retries: int | None
    """Retries over the answered calls; None when one call did not report them."""
    fallbacks: int | None
    """Fallbacks over the answered calls; None when one call did not report them."""
    calls_with_retries_or_fallbacks: int
    """Answered calls with at least one retry or fallback."""
    inference_calls: int | None
    """Inference calls behind the answered calls; None when one call did not report them."""
    calls_over_max_inference_calls: int
    """Answered calls over the target's max_inference_calls."""


class Headline(BaseModel):
    """A benchmark's published headline metric for one row (stages/report/published.py `headline`).
    Unset fields are not written (`Report.dump`)."""

    model_config = _FROZEN
    metric: Literal["f1", "accuracy"]
    """The metric: SimpleQA's F1, accuracy for the others."""
    value: float | None
    """Its value."""
    accuracy: float | None = None
    """SimpleQA: the accuracy beside its F1."""
    note: str | None = None
    """SimpleQA: why the macro uses accuracy, not the headline."""


class ConfigHashEvidence(BaseModel):
    """Whether a live router target's pinned config_hash is confirmed (stages/compare/evidence.py)."""

    model_config = _FROZEN
    pinned: str
    """The config hash the target pins."""
    probe_before: str | None
    """The probe's evidence before the run (``confirmed``, ``not run`` …)."""
    probe_after: str | None
    """The probe's evidence after the run."""
    responses: int
    """Answered calls of the target."""
    responses_with_header: int
    """Those carrying the pinned hash."""
    responses_without_header: int
    """Those carrying no config hash."""
    confirmed: bool
    """Whether the pin is confirmed (both probes and every answered response that carries a hash)."""
    reason: str | None
    """Why it is not, or None."""


class PartialBlock(BaseModel):
    """How much of a run without an answer in every cell was answered (stages/report/partial.py)."""

    model_config = _FROZEN
    answered_cells: int
    """Cells with a complete answer."""
    planned_cells: int
    """Every planned cell."""
    final: bool
    """Whether the run ended (it will not answer more)."""
    label: str
    """"partial: n of N planned cells answered (…)"."""
    accuracy: str
    """What `accuracy` is over."""
    accuracy_answered: str
    """What `accuracy_answered` is over."""


class PriceCorrectionRef(BaseModel):
    """The price correction the report reads (schemas/corrections.py `PriceCorrection`)."""

    model_config = _FROZEN
    digest: str
    """The correction object's digest."""
    version: str
    """Its version."""
    reason: str | None
    """Why it was made."""
    targets: list[str]
    """The targets it reprices."""


class UsageCorrectionRef(BaseModel):
    """The usage correction the report reads (schemas/corrections.py `UsageCorrection`)."""

    model_config = _FROZEN
    digest: str
    """The correction object's digest."""
    at: float | None
    """When it was appended to the run."""
    version: str
    """Its version."""
    verified_count: int
    """Calls whose usage was verified."""
    changed_count: int
    """Calls whose usage changed."""
    unverifiable_count: int
    """Calls that could not be verified."""
    old_known_cost_usd: float | None
    """Known cost before the correction."""
    new_known_cost_usd: float | None
    """Known cost after it."""
    qualified: bool
    """Whether the corrected figures qualify (the correction's own verdict)."""
    routers: dict[str, str] | None
    """Router targets re-attributed offline (target id to router), if any."""


class FullScore(BaseModel):
    """A target's full sr-bench score fields (stages/report/full_score.py), spread into its `TargetSummary`."""

    model_config = _FROZEN
    sr_bench_score: float | None
    """The weighted mean of the nine per-benchmark accuracies, or None (a benchmark missing or incomplete)."""
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
    score_scope: str
    """What the full score covers (or why there is none)."""


class RoleTotals(BaseModel):
    """A target's calls, tokens and auxiliary costs per role over its rows (stages/report/conversations.py
    `role_totals`), spread into its `TargetSummary`. The auxiliary costs are set only for a target with a
    conversation row (left out of `model_dump(exclude_unset=True)` otherwise)."""

    model_config = _FROZEN
    simulator_cost_usd: float | None = None
    """The user simulator's cost (None when one of its calls' cost is unknown)."""
    scaffolding_cost_usd: float | None = None
    """The scaffolding calls' cost (None when one of its calls' cost is unknown)."""
    tokens_by_role: dict[str, dict[str, int] | None]
    """The four token buckets per role (None when one call of the role is unmetered)."""
    call_count: int
    """Recorded calls of every role."""
    calls_by_role: dict[str, int]
    """Recorded calls per role (roles with none left out)."""


class PairedSide(BaseModel):
    """One side of a partial paired figure on the cases both sides answered (stages/report/partial.py)."""

    model_config = _FROZEN
    correct: int
    """Correct answers on those cases."""
    cost_usd: float | None
    """Principal cost on those cases; None when one is unknown."""
    latency_p50_s: float | None
    """Median latency on those cases."""
    latency_p95_s: float | None
    """95th percentile latency on those cases."""


class PairedOperations(BaseModel):
    """Principal cost and latency of each side on the same cases."""

    model_config = _FROZEN
    candidate: PairedSide
    """The router target's figures."""
    baseline: PairedSide
    """The baseline single target's figures."""


class DescriptiveInterval(BaseModel):
    """The paired Hoeffding 95% interval of a partial figure, as a description only."""

    model_config = _FROZEN
    method: str
    """The interval's method (stages/stats/paired.py HOEFFDING)."""
    ci: list[float]
    """[low, high]."""
    scope: str
    """The cases it covers."""


class PartialCandidate(BaseModel):
    """One router target's partial paired figure (stages/report/partial.py `_candidate`); without a case
    answered by both sides it names only the reason. Unset fields are not written (`PartialPaired.dump`)."""

    model_config = _FROZEN
    target_id: str
    """The router (mom) target."""
    n: int
    """Cases answered by it and by every single target."""
    planned_cases: int
    """Every planned case."""
    label: str
    """"partial: n of N planned cases answered by both sides"."""
    claim: None
    """Never a claim."""
    claim_note: str
    """Why no claim is made."""
    formal: Literal[False]
    """Never a formal conclusion."""
    baseline_target_id: str | None
    """The single target with the highest exact weighted quality on those cases (ties: the lowest id)."""
    reason: str | None = None
    """Why there is no figure (no case answered by both sides)."""
    quality: float | None = None
    """The candidate's exact weighted quality on those cases."""
    baseline_quality: float | None = None
    """The baseline's."""
    delta: float | None = None
    """quality − baseline_quality."""
    micro_delta: float | None = None
    """The mean paired difference, every case weighing the same."""
    wins: int | None = None
    """Cases the candidate answered correctly and the baseline not."""
    losses: int | None = None
    """Cases the baseline answered correctly and the candidate not."""
    ties: int | None = None
    """Cases both answered alike."""
    interval: DescriptiveInterval | None = None
    """The paired Hoeffding 95% interval, descriptive."""
    operations: PairedOperations | None = None
    """Principal cost and latency of each side on the same cases."""
    saving_pct: float | None = None
    """How much cheaper the candidate is, in percent; None when a cost is unknown or the baseline's is 0."""


class PartialEvidence(BaseModel):
    """What a partial paired figure is evidence of."""

    model_config = _FROZEN
    profile: str
    """The plan's profile."""
    formal: Literal[False]
    """Never formal."""
    label: str
    """"partial, dev (not a formal conclusion): …"."""


class PartialPaired(BaseModel):
    """The report's paired section of a run that ended without an answer in every cell
    (stages/report/partial.py `partial_paired`)."""

    model_config = _FROZEN
    available: Literal[True] = True
    """Always there for such a run."""
    partial: Literal[True] = True
    """The figure is partial."""
    status: RunStatus
    """The run's status."""
    planned_cases: int
    """Every planned case."""
    evidence: PartialEvidence
    """What it is evidence of."""
    candidates: list[PartialCandidate]
    """One figure per router target."""

    def model_post_init(self, context: object, /) -> None:
        self.__pydantic_fields_set__.update({"available", "partial"})       # always written

    def dump(self) -> dict[str, object]:
        """The stored JSON (the report's `paired`): without the unset figures of a candidate."""
        return self.model_dump(mode="json", exclude_unset=True) | {"available": True, "partial": True}
