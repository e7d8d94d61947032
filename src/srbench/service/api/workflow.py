"""The response side of the API contract, its workflow answers: experiments, dataset preparation
jobs, replay/comparison options, repricing and usage corrections, team push/pull and store
maintenance (`service.api_responses` holds the rest and the base models; the same conventions).
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from srbench.schemas.corrections import PriceCorrection, UsageCorrection
from srbench.service.api.responses import Answer, Document, Number, WireDataset


class Experiment(Answer):
    id: str
    name: str
    owner: str
    created_at: str
    updated_at: str
    run_count: int | None = None
    active_run_count: int | None = None


class ListPage(Answer):
    """One page of a list (experiments, an experiment's runs): the next cursor and whether more follow."""

    next_cursor: int | None
    has_more: bool


class Experiments(ListPage):
    experiments: list[Experiment]


class ExperimentMember(Answer):
    run_id: str
    role: str
    hypothesis: str
    linked_at: str


class ExperimentRuns(ListPage):
    experiment: Experiment
    members: list[ExperimentMember]


class ExperimentDeleted(Answer):
    id: str
    deleted: Literal[True]
    unlinked_runs: int
    deleted_at: str
    runs_deleted: Literal[0]
    model_requests: Literal[0]


class PreparationItem(Answer):
    benchmark: str
    status: Literal["queued", "running", "completed", "failed"]
    phase: str
    reused: bool
    source_ids: list[str]


class Preparation(Answer):
    id: str
    benchmark: str | None = None
    benchmarks: list[str] | None = None
    profile: str
    seed: int
    limit: int | None = None
    source: str | None = None
    source_partition: str | None = None
    evaluation_role: str | None = None
    exclusion_snapshot: str | None = Field(default=None, description="the sha256 of the exclusion snapshot")
    request: Document
    status: Literal["queued", "running", "completed", "failed"]
    phase: str
    created_at: str
    updated_at: str
    owner: str
    dataset: WireDataset | None = None
    error: str | None = None
    items: list[PreparationItem] | None = Field(default=None, description="several benchmarks: each one's part")


class PreparationAnswer(Answer):
    preparation: Preparation


class Preparations(Answer):
    preparations: list[Preparation]


class PreparationOptions(Answer):
    benchmarks: list[Document]


class RunChoice(Answer):
    run_id: str
    name: str
    profile: str | None
    case_count: int


class DamagedRun(Answer):
    """A run left out of a store-wide list because a stored object it needs is damaged."""

    run_id: str
    error: str = Field(description="which object is damaged and how to repair it (`sr-bench store verify`)")


class RunOptions(Answer):
    baseline: RunChoice | None
    baselines: list[RunChoice]
    options: list[RunChoice]
    next_cursor: str | None
    has_more: bool
    scanned_pairs: int
    scan_limited: bool
    unverified_pairs: int
    unverified_baselines: int
    model_requests: Literal[0]
    empty_reason: str | None = None
    damaged_runs: list[DamagedRun] = Field(default_factory=list,
                                           description="runs skipped: their frozen plan is damaged (each named)")


class StoredPriceCorrection(PriceCorrection):
    """The stored price correction with its object digest."""

    digest: str
    """The correction object's digest."""


class Repriced(Answer):
    correction: StoredPriceCorrection
    appended: bool
    model_requests: Literal[0]


class Reconciled(UsageCorrection):
    """The usage correction itself (schemas/corrections.py), with upstream's receipt fields beside sr-bench's
    (`service.wire.projections.wire_correction`) and whether it was (re)built and appended."""

    id: str
    """accounting-<24 hex>: upstream's id of this receipt."""
    evidence_sha256: str
    """SHA-256 of the correction's canonical JSON (its digest left out)."""
    corrected_call_count: int
    """upstream's name of `changed_count`."""
    verified_call_count: int
    """upstream's name of `verified_count`."""
    unverifiable_call_count: int
    """upstream's name of `unverifiable_count`."""
    original_known_spend_usd: Number
    """upstream's name of `old_known_cost_usd`."""
    corrected_known_spend_usd: Number
    """upstream's name of `new_known_cost_usd`."""
    original_receipts_preserved: Literal[True]
    """The calls' own records are kept unchanged."""
    digest: str
    """The correction object's digest."""
    appended: bool
    """It was appended to the run's corrections now (false: it was there already)."""
    cache_hit: bool
    """The correction was taken from the action cache."""
    explain: str
    """Why it was (re)built."""


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
