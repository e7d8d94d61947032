"""Run manifests and frozen plans (RUN-1, RUN-6, RUN-7, TG-4; the `statistics` block: REP-6, REP-7)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Literal, TypeAlias

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    JsonValue,
    SerializerFunctionWrapHandler,
    Tag,
    field_validator,
    model_serializer,
    model_validator,
)

from srbench.schemas.dataset import Evaluation
from srbench.schemas.generation import GenerationParams
from srbench.schemas.recovery import ParentSnapshot, RecoveryMode
from srbench.schemas.replay import ReplayReceipt
from srbench.schemas.sources import SourceLabel
from srbench.schemas.target import Target, check_generation_params, check_types
from srbench.schemas.text import LocalPath

CostPolicy = Literal["require_priced", "capability_only"]
# what a systematic failure (auth, unknown model, config-hash mismatch) stops: its target (absent) or the run
StopScope = Literal["target", "run"]
# a robustness preview's prompt perturbation (stages/dispatch/perturb.py, issue 43)
Perturbation = Literal["whitespace", "case", "punctuation", "typo", "preamble"]


class Limits(BaseModel):
    """Every limit is finite and > 0; idle ≤ total ≤ max_run_seconds; concurrency is per target."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    concurrency: int = Field(default=4, ge=1, le=64)
    total_timeout_s: float = Field(default=180, gt=0)
    idle_timeout_s: float = Field(default=30, gt=0)
    case_timeout_s: float = Field(default=600, gt=0)
    max_run_seconds: float = Field(default=1800, gt=0)
    max_output_tokens: int = Field(default=4096, ge=1)
    max_output_chars: int = Field(default=131072, ge=1)
    repetition_window: int = Field(default=128, ge=1)
    repetition_limit: int = Field(default=5, ge=2)
    max_cost_usd: float | None = Field(default=5.0, gt=0)
    max_calls_per_case: int | None = Field(default=None, ge=1, le=256, exclude_if=lambda v: v is None,
                                           description="the most model calls one case may make (upstream's "
                                                       "limit; absent: no cap beyond the benchmark's own)")
    grading_concurrency: dict[str, Annotated[int, Field(ge=1, le=1024)]] | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="the most cells of a benchmark graded at once in its sandbox, by benchmark id (absent: as "
                    "many as the grading host has cores; an absent field leaves the plan's digest unchanged)")

    @model_validator(mode="after")
    def _order(self) -> Limits:
        if self.idle_timeout_s > self.total_timeout_s:
            raise ValueError("limits.idle_timeout_s must not exceed limits.total_timeout_s")
        if self.total_timeout_s > self.max_run_seconds:
            raise ValueError("limits.total_timeout_s must not exceed limits.max_run_seconds")
        return self


class DatasetRef(BaseModel):
    """A frozen dataset named by the SHA-256 of its bytes; `path` is only a hint for reading (the
    store's registered copy is used when there is one), so a plan never depends on where it is."""

    model_config = ConfigDict(extra="forbid")
    path: LocalPath | None = Field(default=None)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class TargetRef(BaseModel):
    """A registered target by id (its registered fields are used unchanged)."""

    model_config = ConfigDict(extra="forbid")
    id: str


def _target_entry(value: object) -> str:
    """An entry with `kind` is an inline target; one without is a reference to a registered target."""
    if isinstance(value, dict):
        return "inline-target" if "kind" in value else "target-ref"
    return "target-ref" if isinstance(value, TargetRef) else "inline-target"


# Tags are stripped from error locations by stages.plan.pydantic_problems (UNION_TAGS).
TargetEntry = Annotated[Annotated[Target, Tag("inline-target")] | Annotated[TargetRef, Tag("target-ref")],
                        Discriminator(_target_entry)]
UNION_TAGS = frozenset({"inline-target", "target-ref"})


class PreviewContext(BaseModel):
    """Optional session/conversation context for session-dependent routing (IT-3, UI-2)."""

    model_config = ConfigDict(extra="forbid")
    session_id: str | None = Field(default=None, max_length=200)
    conversation_id: str | None = Field(default=None, max_length=200)
    sampling_seed: int | None = Field(default=None, ge=-(2**63), lt=2**63)


class Planning(BaseModel):
    """What sample-size planning assumes: the effect to detect, the share of tied pairs, the power."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    effect: float = Field(default=0.05, gt=0, le=1, description="improvement to detect (weighted-quality units)")
    tie_rate: float = Field(default=0.5, ge=0, lt=1, description="assumed share of cases where both agree")
    power: float = Field(default=0.8, ge=0.5, lt=1)


class EarlyStop(BaseModel):
    """Stop dispatch once the claim is settled or unreachable (needs the anytime-valid `betting` rule).

    The baseline is the strongest single target of this run (`baseline_run` absent), or the strongest
    single target of a finished run on the same cases (`baseline_run`)."""

    model_config = ConfigDict(extra="forbid")
    baseline_run: str | None = Field(default=None, min_length=1, max_length=200)


class Statistics(BaseModel):
    """What the claims rest on, declared before the run (REP-6, REP-7): the rule whose interval makes
    the claim, the non-inferiority margin, the primary benchmarks whose weighted difference makes the
    formal claim (the others are secondary), what sample-size planning assumes, early stopping, and
    whether claims hold across choosing the baseline as the strongest of K singles (`stages/selection`).
    Fields left at their defaults (claim_rule hoeffding unless a manifest chose it, baseline_selection ignored,
    planning, no early stop) are not serialised, so a plan that declares only a margin or primary benchmarks hashes as
    before they existed. These defaults are what a stored plan without the field means; a *new* plan
    gets `NEW_PLAN_STATISTICS` recorded explicitly (`Manifest`), so old plans keep their digests."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    claim_rule: Literal["hoeffding", "betting"] = "hoeffding"
    baseline_selection: Literal["ignored", "adjusted"] = Field(
        default="ignored", description="adjusted: a claim against the strongest of K measured single targets "
                                       "holds its error rate across that choice (issue 28)")
    margin: float | None = Field(default=None, ge=0, le=1, description="non-inferiority margin (REP-7)")
    primary_benchmarks: list[str] | None = Field(default=None, min_length=1,
                                                 description="benchmarks of the primary claim (default: all)")
    planning: Planning = Field(default_factory=Planning)
    early_stop: EarlyStop | None = None

    @field_validator("primary_benchmarks")
    @classmethod
    def _primary(cls, v: list[str] | None) -> list[str] | None:
        if v is not None and len(set(v)) != len(v):
            raise ValueError("primary_benchmarks lists a benchmark twice")
        return sorted(v) if v is not None else None

    @model_validator(mode="after")
    def _anytime(self) -> Statistics:
        if self.early_stop is not None and self.claim_rule != "betting":
            raise ValueError("statistics.early_stop needs claim_rule betting (anytime-valid); the Hoeffding "
                             "interval holds only at the planned size")
        return self

    @model_serializer(mode="wrap")
    def _without_defaults_of_later_fields(self, handler: SerializerFunctionWrapHandler) -> dict[str, JsonValue]:
        data: dict[str, JsonValue] = handler(self)
        if isinstance(data, dict):
            if data.get("claim_rule") == "hoeffding" and "claim_rule" not in self.model_fields_set:
                data.pop("claim_rule")      # a stored plan that never said; a manifest's explicit choice is written
            if data.get("baseline_selection") == "ignored":
                data.pop("baseline_selection")
            if data.get("planning") == Planning().model_dump(mode="json"):
                data.pop("planning")
            if data.get("early_stop") is None:
                data.pop("early_stop", None)
        return data


# What a new plan claims with when its manifest does not say (issue 28): the anytime-valid betting
# sequence (REP-6's Hoeffding interval is still computed and shown beside it) and selection-aware claims.
NEW_PLAN_STATISTICS: dict[str, str] = {"claim_rule": "betting", "baseline_selection": "adjusted"}


class Manifest(BaseModel):
    """What the user writes (YAML or JSON). `plan` validates it and freezes it into a Plan; the
    statistics fields it leaves out get `NEW_PLAN_STATISTICS`, recorded in the plan."""

    model_config = ConfigDict(extra="forbid")
    version: Literal["sr-bench-1.0"]
    name: str = Field(default="sr-bench", min_length=1, max_length=200)
    mode: Literal["live", "preview"] = "live"
    preview_context: PreviewContext | None = None
    perturbation: Perturbation | None = Field(default=None, exclude_if=lambda v: v is None)
    profile: Literal["smoke", "quick", "standard"]
    seed: int
    cost_policy: CostPolicy = "require_priced"
    stop_on_systematic: StopScope | None = Field(default=None, exclude_if=lambda v: v is None)
    dataset: DatasetRef
    targets: list[TargetEntry] = Field(min_length=1)
    sampling: GenerationParams = Field(default_factory=GenerationParams)
    limits: Limits = Field(default_factory=Limits)
    statistics: Statistics | None = Field(default=None, validate_default=True)

    @field_validator("sampling", mode="before")
    @classmethod
    def _sampling(cls, v: object) -> object:
        return check_types(check_generation_params(v, "sampling"), "sampling") if isinstance(v, dict) else v

    @field_validator("statistics", mode="before")
    @classmethod
    def _new_plan_defaults(cls, v: object) -> object:
        if v is None:
            return dict(NEW_PLAN_STATISTICS)
        return {**NEW_PLAN_STATISTICS, **v} if isinstance(v, dict) else v


class BenchmarkOptions(BaseModel):
    """One benchmark's entry of the store's benchmark-options.json (DEP-1)."""

    model_config = ConfigDict(extra="forbid")
    judge: str | None = Field(default=None, description="id of the registered judge target")
    grader_version: str | None = None
    grading: dict[str, JsonValue] | None = Field(default=None, description="code benchmarks: the frozen sandbox "
                                                 "grading options (timeouts, memory, test-data sha256; the "
                                                 "benchmark's own keys, open by design)")
    # multi-call benchmarks (benchmarks/conversation.py): the pinned target of each auxiliary role, and
    # benchmark settings; absent when unset, so a plan without them hashes as before they existed
    user_simulator: str | None = Field(default=None, exclude_if=lambda v: v is None,
                                       description="id of the registered user-simulator target")
    scaffolding: str | None = Field(default=None, exclude_if=lambda v: v is None,
                                    description="id of the registered agent-scaffolding target")
    attempts: int | None = Field(default=None, ge=1, le=2, exclude_if=lambda v: v is None,
                                 description="ARC-AGI-2: attempts per puzzle (2: pass@2, each a journaled call)")
    judge_response_format: Literal["json_schema"] | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="judged benchmarks whose official judge asks for a structured output (HLE): send it")


StoreOptions: TypeAlias = Mapping[str, JsonValue]
"""The store's benchmark-options.json as read (DEP-1): benchmark id → its entry, JSON as the operator wrote it;
planning checks each entry and freezes it as `BenchmarkOptions`."""


class PlannedTarget(BaseModel):
    """A target as the plan runs it: its snapshot and the parameters every call of it is sent with."""

    model_config = ConfigDict(extra="forbid")
    target: Target = Field(description="the target's fields as planned (a registered one's, unchanged)")
    effective_params: GenerationParams = Field(description="greedy and the output cap, then the plan's "
                                               "sampling, then the target's request_params")
    registered: bool = Field(description="whether the manifest named a registered target (else inline)")


ExperimentRole = Literal["smoke", "baseline", "initial", "preview", "candidate", "validation", "estimate", "recovery"]
"""What a run is to its experiment (upstream's roles)."""


class ExperimentLink(BaseModel):
    """The experiment a run joins, frozen in its plan (checked by the service: it exists and is the actor's)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    id: str
    """The experiment (`exp-` and 32 hex digits)."""
    role: ExperimentRole
    """What the run is to it."""
    hypothesis: str
    """What the run tests (stripped; empty when none was given)."""


class UpstreamPlan(BaseModel):
    """What a plan frozen by upstream's `vllm-sr benchmark plan` carried beyond sr-bench's manifest, kept with the
    plan sr-bench froze from it (`service.wire.upstream_plan`): its reviewed hash, and every field sr-bench checked
    against its own (case_sha256, benchmark_weights, adapter_versions, output_policy) or does not use."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    plan_sha256: str | None
    """Upstream's plan_sha256 of the submitted plan, checked by upstream's rule (None: sent without one)."""
    fields: dict[str, JsonValue]
    """The submitted fields sr-bench's plan does not hold, by dotted path (`limits.max_log_bytes`), as submitted."""


class PlanDataset(BaseModel):
    """The dataset a plan runs, by content (never a path: a plan is the same on every host)."""

    model_config = ConfigDict(extra="allow", frozen=True, use_attribute_docstrings=True)
    sha256: str
    """The SHA-256 of the dataset's bytes (its cases as canonical JSON lines)."""
    object: str
    """The dataset object's digest in the store."""
    id: str | None = None
    """The registered dataset's id (None for a dataset given by content only)."""
    case_count: int | None = None
    """Its cases."""
    benchmarks: list[str] = Field(default_factory=list)
    """The benchmarks its cases come from."""
    split: str | None = None
    """The profile's split (dev, holdout)."""
    custom_subset: bool | None = None
    """Whether its cases are a custom subset rather than the profile's selection."""
    sources: dict[str, SourceLabel] | None = None
    """The pinned sources' labels, by benchmark."""
    evaluation: dict[str, Evaluation] | None = None
    """Its evaluation roles and exclusions, when it has any."""

    @model_serializer(mode="wrap")
    def _as_given(self, handler: SerializerFunctionWrapHandler) -> dict[str, JsonValue]:
        """Only the keys the plan was made with (older plans lack the later ones): the same bytes."""
        data: dict[str, JsonValue] = handler(self)
        return {k: v for k, v in data.items() if k in self.model_fields_set or k not in type(self).model_fields}


class PlanRecovery(BaseModel):
    """A recovery child's scope, frozen in its plan: the parent, the mode, the cells it re-runs and the
    parent as it was when the recovery was planned."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    parent: str
    """The parent run's id."""
    mode: RecoveryMode
    """Which of the parent's cells it re-runs (never sent, or failed too)."""
    cells: list[str]
    """The selected cells' ids, sorted."""
    cells_sha256: str
    """The SHA-256 of the canonical JSON of `cells`."""
    snapshot: ParentSnapshot
    """The parent when the recovery was planned."""
    recovery_plan_sha256: str | None = None
    """The reviewed recovery plan this child was made from (absent in children made before it was kept)."""

    @model_serializer(mode="wrap")
    def _without_absent_review(self, handler: SerializerFunctionWrapHandler) -> dict[str, JsonValue]:
        """A child without a reviewed recovery plan serialises (and hashes) as before the field existed."""
        data: dict[str, JsonValue] = handler(self)
        if data.get("recovery_plan_sha256") is None:
            data.pop("recovery_plan_sha256", None)
        return data


class PlanReplay(ReplayReceipt):
    """A replay's receipt, frozen in its plan, with the replay object it made."""

    object: str
    """The replay object's digest (its cells: the baseline's answers along the preview's routes)."""


PlanMode = Literal["live", "preview", "replay"]
"""How a plan's cells are answered: called live, previewed (routing only), or replayed from a baseline."""


class Plan(BaseModel):
    """A frozen, validated manifest: everything a run needs, addressed by `plan_sha256`."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["plan"] = "plan"
    version: Literal["sr-bench-1.0"] = "sr-bench-1.0"
    name: str
    mode: PlanMode = "live"
    preview_context: PreviewContext | None = None
    perturbation: Perturbation | None = Field(default=None, exclude_if=lambda v: v is None,
                                              description="a robustness preview: how each prompt is perturbed "
                                                          "(stages/dispatch/perturb.py); absent: as it is")
    replay: PlanReplay | None = Field(default=None, description="baseline/preview runs and the receipt")
    recovery: PlanRecovery | None = Field(default=None, description="parent, mode, cells, cells_sha256, snapshot")
    execution_cells: list[list[str]] | None = Field(default=None, description="(case id, target id) pairs to run")
    profile: str
    seed: int
    cost_policy: CostPolicy
    stop_on_systematic: StopScope | None = Field(default=None, exclude_if=lambda v: v is None,
                                                 description="target (absent) or run")
    dataset: PlanDataset = Field(description="sha256, object digest, id, case_count, benchmarks, split "
                                             "(never a path: a plan is the same on every host)")
    case_sha256: str
    targets: list[PlannedTarget]
    sampling: GenerationParams
    limits: Limits
    benchmark_weights: dict[str, int]
    adapter_versions: dict[str, str]
    grader_versions: dict[str, str]
    total: int = Field(description="planned cells = cases × targets")
    auxiliary_targets: dict[str, PlannedTarget] = Field(default_factory=dict,
                                                        description="judges, by id (never scored)")
    benchmark_options: dict[str, BenchmarkOptions] = Field(default_factory=dict)
    notices: list[str] = Field(default_factory=list)
    statistics: Statistics | None = Field(default=None, description="absent: no margin declared in advance, "
                                                                   "Hoeffding makes claims, no early stop")
    experiment: ExperimentLink | None = Field(default=None, exclude_if=lambda v: v is None,
                                              description="the experiment the run joins: {id, role, hypothesis}")
    baseline_run_id: str | None = Field(default=None, exclude_if=lambda v: v is None,
                                        description="the baseline run a candidate plan was derived from")
    upstream: UpstreamPlan | None = Field(default=None, exclude_if=lambda v: v is None,
                                          description="a plan frozen by upstream's CLI: its hash and the fields "
                                                      "sr-bench kept from it (absent: sr-bench froze the manifest)")
    plan_sha256: str | None = None

    @field_validator("sampling", mode="before")
    @classmethod
    def _sampling(cls, v: object) -> object:
        return check_generation_params(v, "sampling") if isinstance(v, dict) else v

    def options_for(self, benchmark: str) -> dict[str, JsonValue] | None:
        """A benchmark's frozen options as the plan stores them (what its adapter reads), or None."""
        opt = self.benchmark_options.get(benchmark)
        return None if opt is None else opt.model_dump(mode="json")

    def as_json(self) -> dict[str, JsonValue]:
        """The plan as stored and sent (its canonical JSON, and so `plan_sha256`, is of this form)."""
        data: dict[str, JsonValue] = self.model_dump(mode="json", by_alias=True)
        return data

    @model_serializer(mode="wrap")
    def _without_absent_statistics(self, handler: SerializerFunctionWrapHandler) -> dict[str, JsonValue]:
        """A plan without a statistics block serialises (and hashes) as before the block existed."""
        data: dict[str, JsonValue] = handler(self)
        if isinstance(data, dict) and data.get("statistics") is None:
            data.pop("statistics", None)
        return data
