"""The response side of the API contract, its workflow answers: experiments, dataset preparation
jobs, replay/comparison options, repricing and usage corrections, team push/pull and store
maintenance (`service.api_responses` holds the rest and the base models; the same conventions).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from srbench.schemas.corrections import PriceCorrection, UsageCorrection
from srbench.schemas.derived import Export, OfflineRegrade
from srbench.schemas.diagnosis import Diagnosis
from srbench.schemas.recipe import RecipeCapture
from srbench.schemas.recovery import ExcludedCell, ParentSnapshot, RecoveryCell, RecoveryMode
from srbench.schemas.robustness import Robustness
from srbench.service.api.responses import Answer, Document, Number, WireDataset
from srbench.service.runs.state import Progress


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


class PreparableBenchmark(Answer):
    """One benchmark as the preparation form offers it."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    id: str
    """The benchmark."""
    name: str
    """Its title."""
    profiles: dict[str, int | None]
    """Cases per profile (smoke, quick, standard)."""
    source_url: str
    """Its upstream source."""
    revision: str
    """The pinned revision."""
    available: bool
    """This release implements it."""
    unavailable_reason: str | None
    """Why not, if not."""
    access_note: str
    """What preparing it reads, and its access terms."""
    dependencies: list[str]
    """Other benchmarks it needs prepared first (none)."""
    source_partition: str | None
    """The upstream partition its pinned files are (for canonical task identities)."""
    evaluation_roles: list[str]
    """The evaluation roles a preparation may record."""


class PreparationOptions(Answer):
    benchmarks: list[PreparableBenchmark]


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


class BaselineOption(Answer):
    """A run considered as the baseline of another run (service/runs/baselines.py)."""

    run_id: str
    name: str
    status: str
    created_at: float = Field(description="epoch seconds")
    usable: bool = Field(description="compare takes the pair and its savings can be known")
    partial: str | None = Field(description="why a usable run's figures are partial (null: it answered every cell)")
    left_out: str | None = Field(description="why the run cannot be the baseline (null: it can)")


class BaselineOptions(Answer):
    run_id: str
    own_single: bool = Field(description="the run holds a single model: its own strongest one is the baseline")
    chosen: str | None = Field(description="the default baseline run: this run when it holds a single model, else "
                                           "the newest complete usable run, else the newest partial one")
    options: list[BaselineOption] = Field(description="usable runs first (complete, then partial; newest first), then "
                                                      "every other run the caller may see with why it is left out")
    scan_limited: bool
    damaged_runs: list[DamagedRun]
    model_requests: Literal[0]


class LiveTarget(Answer):
    """One target's figures so far (service/runs/live.py)."""

    target_id: str
    kind: Literal["single", "mom"] | None
    planned: int = Field(description="its planned cells")
    finished: int = Field(description="its cells folded into these figures (answered + failed)")
    answered: int
    failed: int
    correct: int
    accuracy_answered: float | None = Field(description="correct over the answered cells so far")
    accuracy_planned: float | None = Field(description="correct over every planned cell (unfinished count as not "
                                                       "correct)")
    cost_usd: float | None = Field(description="principal cost so far (null: a finished cell's cost is unknown)")
    known_cost_usd: float = Field(description="the known part of the principal cost so far")
    judge_cost_usd: float | None = Field(description="judge cost so far (null: the run has no judge, or a judge "
                                                     "call's cost is unknown)")


class LiveFigures(Answer):
    """A run's figures so far, maintained as its cells finish (GET /runs/{run_id}/live)."""

    run_id: str
    status: str
    progress: Progress = Field(description="the run view's cell counts, read with the figures")
    folded: int = Field(description="finished cells the figures hold (the progress may be ahead by about a second)")
    judged: bool = Field(description="the plan has a judge")
    targets: list[LiveTarget]
    model_requests: Literal[0]


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


class Stopping(Answer):
    status: Literal["stopping"]
    results: Literal["kept"]


class RecipeCheck(Answer):
    """The check of a captured recipe after the run (the run's `recipe_checked` event, UI-7)."""

    model_config = ConfigDict(use_attribute_docstrings=True)
    target_id: str
    """The MoM target."""
    phase: Literal["after"]
    """When the check ran."""
    hash: Document | None
    """The router's config hash view after the run, as the router gave it (null: not read)."""
    config_etag: str | None
    """The ETag of the router's config after the run."""
    unchanged: bool
    """The hash and the ETag are those of the capture."""
    problem: str | None
    """Why the capture does not hold for the whole run (null: it does)."""


class RecipeView(Answer):
    """One MoM target of a run with its recipe capture, or why it has none (UI-7)."""

    model_config = ConfigDict(use_attribute_docstrings=True)
    target_id: str
    """The MoM target."""
    status: Literal["captured", "not_captured", "unavailable"]
    """unavailable: the run holds no capture of this target (it never borrows a later one)."""
    limitation: str | None
    """Why the recipe is not captured, or does not hold for the whole run."""
    capture: RecipeCapture | None
    """The stored capture (credentials redacted)."""
    capture_digest: str | None = None
    """The capture object's digest (absent: no capture)."""
    after: RecipeCheck | None
    """The check after the run (null: none ran)."""
    projection_hash: str | None
    """Digest of the redacted config and recipes."""
    held_during_run: bool | None
    """The configuration did not change during the run (null: not checked)."""


class Recipes(Answer):
    run_id: str
    recipes: list[RecipeView] = Field(description="per MoM target: status captured | not_captured | unavailable, "
                                                  "the limitation, the stored (redacted) capture and the check after "
                                                  "the run")
    note: str


class _Built(BaseModel):
    """What a derived rule's answer carries beside its stored document."""

    model_config = ConfigDict(use_attribute_docstrings=True)
    digest: str
    """The stored document's digest."""
    cache_hit: bool
    """It was taken from the action cache."""
    explain: str
    """Why it was (re)built."""


class Regraded(OfflineRegrade, _Built):
    """The stored offline regrade (schemas/derived.py) with its digest and why it was (re)built."""


class Exported(Export, _Built):
    """The stored training export (schemas/derived.py) with its digest and why it was (re)built."""


class Diagnosed(Diagnosis, _Built):
    """The stored routing diagnosis (schemas/diagnosis.py) with its digest and why it was (re)built."""


class RobustnessMeasured(Robustness, _Built):
    """The stored robustness measurement (schemas/robustness.py) with its digest and why it was (re)built."""


class RecoveryCellRef(Answer):
    """A cell by its case and target (upstream's cell reference)."""

    model_config = ConfigDict(use_attribute_docstrings=True)
    case_id: str
    """Its case."""
    target_id: str
    """Its target."""


class RecoveryCounts(Answer):
    """How many cells a recovery plan selects and leaves out."""

    model_config = ConfigDict(use_attribute_docstrings=True)
    eligible: int
    """Cells a child run may attempt."""
    excluded: int
    """Cells it may not."""


class RecoveryParent(Answer):
    """upstream's snapshot of the parent run."""

    model_config = ConfigDict(use_attribute_docstrings=True)
    status: str
    """Its status when the plan was made."""
    progress: Progress
    """Its cells by state now."""
    known_spend_usd: Number | None
    """What its calls are known to have cost."""
    spend_complete: bool
    """Its cost is known."""


class RecoveryPlan(Answer):
    """sr-bench's reviewed recovery plan (schemas/recovery.py; sr-bench's CLI sends it back whole) with upstream's
    fields beside it (`service.wire.projections.wire_recovery_plan`): `parent` is upstream's parent snapshot,
    the parent's id is `parent_run_id`."""

    model_config = ConfigDict(use_attribute_docstrings=True)
    kind: Literal["recovery-plan"]
    """What this document is."""
    version: str
    """The recovery rules' version."""
    mode: RecoveryMode
    """undispatched (cells that never sent a call) or failed (new, paid attempts of failed cells)."""
    parent_snapshot: ParentSnapshot
    """The parent when the plan was made."""
    eligible: list[RecoveryCell]
    """The cells a child may attempt, in the parent's order."""
    excluded: list[ExcludedCell]
    """The others, each with its reason."""
    excluded_counts: dict[str, int]
    """Excluded cells per reason."""
    requires_acknowledgement: bool
    """Recovering needs --acknowledge-new-attempt (mode failed: attempts cost again)."""
    note: str
    """What recovering this way does."""
    plan_sha256: str
    """SHA-256 of the plan's canonical JSON without this field and `selected_cells`."""
    selected_cells: list[str]
    """The cells to attempt (all eligible ones; the operator may keep fewer)."""
    parent_run_id: str
    """The run to recover."""
    eligible_cells: list[RecoveryCellRef]
    """upstream's list of the eligible cells."""
    counts: RecoveryCounts
    """Eligible and excluded cells."""
    parent: RecoveryParent
    """upstream's parent snapshot."""
    new_attempt_budget_usd: Number | None
    """The parent's cost cap, which a child's new attempts are held to (null: none)."""
    requires_new_attempt_acknowledgment: bool
    """upstream's name of `requires_acknowledgement`."""
    scope: str
    """What a recovery run is (and is not)."""
