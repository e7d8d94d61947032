"""The request side of the API contract: one pydantic model per request body and per query string.

These models are the only validation of a request's shape (types, ranges, lengths, unknown fields);
the OpenAPI document is generated from them (`service.openapi`). What they leave to the stages is
meaning: a plan's hash, a dataset's sha256, whether a run exists. Text is checked at the edge too:
no lone surrogates anywhere (`http.decode_body`), paths the filesystem can hold (`LocalPath`).
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails
from typing_extensions import TypedDict

from srbench import DEFAULT_SEED
from srbench.schemas.plan import ExperimentRole
from srbench.schemas.target import Target
from srbench.schemas.text import LocalPath, check_local_path
from srbench.schemas.wire import JSONObject

RunId = str   # checked by lookup: an unknown id is a 404 naming it
SnapshotRef = Annotated[str, Field(pattern=r"^(b3:)?[0-9a-f]{64}$")]   # an exclusion snapshot's sha256 or object
KEY = "idempotency key: the same key binds the same work"
SLICE = 10_000          # list items validated in one step (`RecoverRun._in_slices`)


class Body(BaseModel):
    """A request body: a JSON object with exactly these fields (strict types: "1" is not 1)."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)
    max_body: ClassVar[int] = 64 * 1024      # bytes the route reads (`service.http.parse`): a few named fields
    max_members: ClassVar[int] = 2_000       # object members in all its JSON (validation errors are bounded by it)
    max_lists: ClassVar[int] = 20_000        # arrays in all its JSON
    max_objects: ClassVar[int] = 50_000      # objects in all its JSON
    max_object_members: ClassVar[int] = 10_000   # members of any one object
    max_values: ClassVar[int] = 250_000      # values in all its JSON (these budgets: `service.api.http.Budget`)


class Query(BaseModel):
    """A query string (values arrive as text, so numbers are parsed from it)."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)


# -- bodies ----------------------------------------------------------------------------------------
class RegisterTargets(Body):
    targets: list[Target] = Field(min_length=1, max_length=1000)
    max_body: ClassVar[int] = 1024 * 1024     # up to 1000 targets
    max_members: ClassVar[int] = 20_000


class SetBenchmarkOptions(Body):
    """Set and unset keys of one benchmark's entry of the store's benchmark-options.json (DEP-1)."""

    benchmark: str = Field(min_length=1, max_length=64, description="a benchmark id (see /catalog)")
    set: JSONObject = Field(default_factory=dict, description="keys to set, JSON values (e.g. judge: a target id)")
    unset: list[Annotated[str, Field(min_length=1, max_length=64)]] = Field(
        default_factory=list, max_length=64, description="keys to remove from the entry")


class CheckTargets(Body):
    """Targets about to be planned or run: does the service hold the keys they name, and (`probe`) does each
    answer GET <base_url>/models with its key and list its model (no prompt is sent)."""

    targets: list[Target] = Field(min_length=1, max_length=1000)
    probe: bool = Field(default=False, description="also probe each target once (GET <base_url>/models)")
    max_body: ClassVar[int] = 1024 * 1024
    max_members: ClassVar[int] = 20_000


class HistoryOptions(Body):
    """Named-history options of a preparation (README: "Named-history exclusions")."""

    source_partition: str | None = Field(default=None, min_length=1, max_length=64,
                                         description="the upstream partition the source is (e.g. test): every case "
                                                     "then carries its canonical task identity")
    exclusion_snapshot: JSONObject | SnapshotRef | None = Field(
        default=None, description="an exclusion snapshot (`POST /datasets/exclusions`), or its sha256 or object "
                                  "digest when this store holds it")
    evaluation_role: Literal["development", "holdout", "retest"] | None = Field(
        default=None, description="holdout needs a snapshot; retest claims no disjointness")


class PrepareDataset(HistoryOptions):
    benchmark: str = Field(min_length=1, max_length=64)
    profile: Literal["smoke", "quick", "standard"]
    seed: int = Field(default=DEFAULT_SEED, ge=-(2**63), lt=2**63)
    limit: int | None = Field(default=None, ge=1, le=10**9)
    source_path: LocalPath | None = Field(default=None, description="a local copy laid out like upstream (DS-7)")
    revision: str | None = Field(default=None, min_length=1, max_length=200)
    source: Literal["auto", "download", "mirror"] | None = Field(
        default=None, description="where the pinned source comes from (default auto: download, else the mirror)")


class ImportDataset(Body):
    """A dataset frozen by upstream's vllm-sr, by its folder on the service host (issue 39, item 6)."""

    path: LocalPath = Field(description="the folder `vllm-sr benchmark dataset prepare --local` wrote "
                                        "(<store>/datasets/<id>/, holding manifest.json and cases.jsonl) or its "
                                        "manifest.json")


class PrintedManifest(BaseModel):
    """A dataset manifest as `dataset prepare` printed it: its id and sha256 name a dataset of the store."""

    model_config = ConfigDict(extra="allow", strict=True)
    id: str = Field(min_length=1, max_length=200)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class CombineDatasets(Body):
    manifests: list[PrintedManifest] = Field(min_length=1, max_length=100,
                                             description="dataset manifests printed by `dataset prepare`")
    max_body: ClassVar[int] = 1024 * 1024     # up to 100 printed dataset manifests
    max_members: ClassVar[int] = 20_000


# A manifest or a plan is a document with its own pydantic model (schemas.plan), validated by the stage
# that reads it, with messages naming the document's fields: the body only carries it.
class MakePlan(Body):
    manifest: Any = Field(description="a run manifest (RUN-1): an object, validated as schemas.plan.Manifest")
    max_body: ClassVar[int] = 1024 * 1024     # a manifest with its inline targets and options
    max_members: ClassVar[int] = 20_000


class SubmitRun(Body):
    manifest: Any = Field(description="the frozen manifest `POST /plans` answered (checked by its plan_sha256), "
                                      "or a manifest to freeze now (a plan_sha256 it carries must still match)")
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=200, description=KEY)
    max_body: ClassVar[int] = 2 * 1024 * 1024     # a frozen plan (a recovery child's lists the cells it retries)
    max_members: ClassVar[int] = 20_000           # (each cell a [case, target] pair: no members)
    max_lists: ClassVar[int] = 100_000            # those pairs, ~50k in 2 MiB


class Experiment(BaseModel):
    """A run's experiment membership (upstream's `experiment` manifest field)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    id: str = Field(pattern=r"^exp-[0-9a-f]{32}$")
    role: ExperimentRole
    hypothesis: str = Field(default="", max_length=2000)


class CandidatePlan(Body):
    target_ids: list[Annotated[str, Field(min_length=1, max_length=200)]] = Field(
        min_length=1, max_length=32, description="registered MoM targets that replace the baseline's subjects")
    mode: Literal["live", "preview"] = "live"
    name: str | None = Field(default=None, min_length=1, max_length=200)
    experiment: Experiment | None = None


class MakeComparison(Body):
    baseline_run_id: RunId = Field(min_length=1, max_length=200)
    candidate_run_id: RunId = Field(min_length=1, max_length=200)
    margin: float | None = Field(default=None, ge=0, le=1,
                                 description="non-inferiority margin in weighted-quality units, declared in advance")


class MakeReplay(Body):
    baseline_run_id: RunId = Field(min_length=1, max_length=200)
    preview_run_id: RunId = Field(min_length=1, max_length=200)
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=200,
                                        description="accepted for upstream clients; the (baseline, preview) pair "
                                                    "itself binds one replay run")


class RecoverPlan(Body):
    mode: Literal["undispatched", "failed"] = Field(default="undispatched", description="upstream's default: "
                                                    "undispatched")


# A cell of upstream's recover body: a typed dict, since 150k of them validate in ~40 ms and as models in
# ~500 ms, time the parse holds the interpreter (issue 38, item 6).
class Cell(TypedDict):
    __pydantic_config__ = ConfigDict(extra="forbid", strict=True)     # type: ignore[misc]
    case_id: Annotated[str, Field(min_length=1, max_length=512)]
    target_id: Annotated[str, Field(min_length=1, max_length=200)]


class RecoverRun(Body):
    """Upstream's form (mode, plan_sha256, cells) or sr-bench's (the reviewed plan sent back whole)."""

    plan: Any = Field(default=None, description="the reviewed recovery plan (`recover-plan`), checked by its hash")
    mode: Literal["undispatched", "failed"] | None = None
    plan_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    cells: list[Cell | Annotated[str, Field(min_length=1, max_length=200)]] | None = Field(
        default=None, max_length=10**6, fail_fast=True,
        description="the reviewed cells: {case_id, target_id} objects, or the plan's selected_cells ids as given "
                    "(at least one: an empty list is refused naming the rule)")
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=200,
                                        description=KEY + " (required: recover refuses without one)")
    acknowledge_new_attempt: bool = False
    max_body: ClassVar[int] = 8 * 1024 * 1024     # the reviewed recovery plan or its cells
    max_members: ClassVar[int] = 400_000          # upstream's cells: {case_id, target_id}, ~160k in 8 MiB
    max_objects: ClassVar[int] = 160_000          # upstream's cells, one object each
    max_object_members: ClassVar[int] = 1_000     # its objects are small: a cell 2, a reviewed plan ~20
    max_values: ClassVar[int] = 600_000           # a reviewed plan: ~35k cells of ~12 values; 150k cells: 300k

    @field_validator("cells", mode="wrap")
    @classmethod
    def _in_slices(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """Upstream's cells validated SLICE at a time: each slice one uninterrupted step of a few ms where
        150k cells at once hold the interpreter ~100 ms; a problem keeps its index in the whole list."""
        if not isinstance(value, list) or len(value) <= SLICE:
            return handler(value)
        out: list[Any] = []
        for start in range(0, len(value), SLICE):
            try:
                out.extend(handler(value[start:start + SLICE]))
            except ValidationError as exc:
                raise ValidationError.from_exception_data(exc.title, [
                    InitErrorDetails(type=e["type"], loc=(e["loc"][0] + start, *e["loc"][1:]) if e["loc"] and
                                     isinstance(e["loc"][0], int) else e["loc"], input=e["input"],
                                     ctx=e.get("ctx", {})) for e in exc.errors()]) from None
        return out


class RepriceRun(Body):
    prices: JSONObject = Field(description="{target id: {model: {input, cached_input, cache_write, output}}}")
    reason: str | None = Field(default=None, max_length=500)


def _remote(value: str | None) -> str | None:
    """An object-store URL or an absolute path: a relative one would land in the service's working folder."""
    if value is None:
        return None
    if "://" in value:
        if any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
            raise ValueError("must not contain control characters")
        return value
    if not value.startswith("/"):
        raise ValueError("must be an object-store URL (e.g. s3://bucket/prefix) or an absolute path")
    return check_local_path(value)


class TeamRemote(Body):
    remote: Annotated[str | None, AfterValidator(_remote)] = Field(
        default=None, max_length=2048, description="the team object store: a URL or an absolute path "
                                                   "(default: the store's shared objects)")


class ReconcileUsage(Body):
    routers: dict[str, str] | None = Field(default=None, max_length=64,
                                           description="{MoM target id: router kind}: re-attribute those targets' "
                                                       "calls from their stored headers")


class StoreVerify(Body):
    repair: bool = Field(default=False, description="copy good objects from SR_BENCH_REPAIR_FROM")


class StoreGc(Body):
    apply: bool = False
    grace_s: float = Field(default=3600.0, ge=0, le=10**9)


class CreateExperiment(Body):
    name: str = Field(min_length=1, max_length=160)
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=128,
                                        description="binds one experiment of this name, never reusable")


class AttachRun(Body):
    run_id: RunId = Field(min_length=1, max_length=200)
    role: ExperimentRole
    hypothesis: str = Field(default="", max_length=2000)


class PrepareJob(HistoryOptions):
    """One benchmark (`benchmark`, with its limit and history options) or several (`benchmarks`: each
    prepared or reused, then composed into one dataset — upstream's newer Dashboard)."""

    benchmark: str | None = Field(default=None, min_length=1, max_length=64)
    benchmarks: list[Annotated[str, Field(min_length=1, max_length=64)]] | None = Field(
        default=None, min_length=1, max_length=32)
    profile: Literal["smoke", "quick", "standard"] = "quick"
    seed: int = Field(default=DEFAULT_SEED, ge=0, le=2**53 - 1)
    limit: int | None = Field(default=None, ge=1, le=10**6)
    source: Literal["auto", "download", "mirror"] | None = Field(
        default=None, description="sr-bench's own: where the pinned files come from (default auto)")

    @model_validator(mode="after")
    def _one_form(self) -> PrepareJob:
        if (self.benchmark is None) == (self.benchmarks is None):
            raise ValueError("give either benchmark or benchmarks (a list), not both or neither")
        if self.benchmarks is not None:
            if len(set(self.benchmarks)) != len(self.benchmarks):
                raise ValueError("benchmarks: each benchmark once")
            extra = [k for k in ("limit", "source_partition", "evaluation_role", "exclusion_snapshot")
                     if getattr(self, k) is not None]
            if extra:
                raise ValueError(f"{', '.join(extra)}: only with a single benchmark")
        return self


class ComposeDatasets(Body):
    dataset_ids: list[Annotated[str, Field(min_length=1, max_length=200)]] = Field(min_length=1, max_length=32)
    benchmarks: list[Annotated[str, Field(min_length=1, max_length=64)]] = Field(min_length=1, max_length=32)


# -- query strings -----------------------------------------------------------------------------------
class Page(Query):
    offset: int = Field(default=0, ge=0)
    limit: int = Field(default=1000, ge=1, le=4096)


class After(Query):
    """Upstream's evidence page: rows after the cursor a previous page answered as `next_cursor`."""

    after: int = Field(default=0, ge=0, le=2**62, description="`next_cursor` of the previous page (0: the start)")
    limit: int = Field(default=100, ge=1, le=500)
    offset: int | None = Field(default=None, ge=0,
                               description="sr-bench's own: skip this many rows (used when no `after` is given)")


class DiagnoseQuery(Query):
    baseline: RunId | None = Field(default=None, min_length=1, max_length=200,
                                   description="the run whose singles the routers are diagnosed against (absent: the "
                                               "candidate run itself, which then holds singles and routers)")


class RobustnessQuery(Query):
    perturbed: str = Field(min_length=1, max_length=2000,
                           description="the perturbed preview runs' ids, comma-separated (one per perturbation kind)")


class CallsAfter(After):
    active: Literal["true", "false"] = Field(default="false", description="only calls in flight")


class RunsPage(Query):
    limit: int | None = Field(default=None, ge=1, le=500,
                              description="a keyset page of this many runs; with neither limit nor after every run "
                                          "is answered (upstream's clients read one answer and follow no cursor)")
    after: str | None = Field(default=None, max_length=200,
                              description="keyset cursor: an answer's next_cursor (runs older than it)")


class CasesPage(Query):
    cursor: str | None = Field(default=None, pattern=r"^[0-9]{1,12}$", description="`next_cursor` of the last page")
    offset: int = Field(default=0, ge=0, description="sr-bench's position (used when no cursor is given)")
    limit: int = Field(default=25, ge=1, le=100)
    benchmark: str | None = Field(default=None, max_length=64)
    category: str | None = Field(default=None, max_length=200)
    q: str | None = Field(default=None, max_length=500, description="text the case's id or messages contain")


class EventsAfter(Query):
    after: int = Field(default=0, ge=0, le=2**62, description="the last event sequence number seen")
    limit: int = Field(default=1000, ge=1, le=1000)


class ExperimentPage(Query):
    after: int = Field(default=0, ge=0, le=2**62)
    limit: int = Field(default=20, ge=1, le=50)


class Selection(Query):
    profile: Literal["smoke", "quick", "standard"]


class RunOptions(Query):
    baseline_run_id: str | None = Field(default=None, min_length=1, max_length=200)
    after: str | None = Field(default=None, pattern=r"^[0-9]{1,19}$", description="`next_cursor` of the last page")
    limit: int = Field(default=10, ge=1, le=25)
