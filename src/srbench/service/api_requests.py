"""The request side of the API contract: one pydantic model per request body and per query string.

These models are the only validation of a request's shape (types, ranges, lengths, unknown fields);
the OpenAPI document is generated from them (`service.openapi`). What they leave to the stages is
meaning: a plan's hash, a dataset's sha256, whether a run exists. Text is checked at the edge too:
no lone surrogates anywhere (`http.body`), paths the filesystem can hold (`LocalPath`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from srbench import DEFAULT_SEED
from srbench.schemas.target import Target
from srbench.schemas.text import LocalPath, check_local_path

RunId = str   # checked by lookup: an unknown id is a 404 naming it
KEY = "idempotency key: the same key binds the same work"


class Body(BaseModel):
    """A request body: a JSON object with exactly these fields (strict types: "1" is not 1)."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


class Query(BaseModel):
    """A query string (values arrive as text, so numbers are parsed from it)."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)


# -- bodies ----------------------------------------------------------------------------------------
class RegisterTargets(Body):
    targets: list[Target] = Field(min_length=1, max_length=1000)


class PrepareDataset(Body):
    benchmark: str = Field(min_length=1, max_length=64)
    profile: Literal["smoke", "quick", "standard"]
    seed: int = Field(default=DEFAULT_SEED, ge=-(2**63), lt=2**63)
    limit: int | None = Field(default=None, ge=1, le=10**9)
    source_path: LocalPath | None = Field(default=None, description="a local copy laid out like upstream (DS-7)")
    revision: str | None = Field(default=None, min_length=1, max_length=200)
    source: Literal["auto", "download", "mirror"] | None = Field(
        default=None, description="where the pinned source comes from (default auto: download, else the mirror)")


class PrintedManifest(BaseModel):
    """A dataset manifest as `dataset prepare` printed it: its id and sha256 name a dataset of the store."""

    model_config = ConfigDict(extra="allow", strict=True)
    id: str = Field(min_length=1, max_length=200)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class CombineDatasets(Body):
    manifests: list[PrintedManifest] = Field(min_length=1, max_length=100,
                                             description="dataset manifests printed by `dataset prepare`")


# A manifest or a plan is a document with its own pydantic model (schemas.plan), validated by the stage
# that reads it, with messages naming the document's fields: the body only carries it.
class MakePlan(Body):
    manifest: Any = Field(description="a run manifest (RUN-1): an object, validated as schemas.plan.Manifest")


class SubmitRun(Body):
    plan: Any = Field(description="a frozen plan printed by `plan` (schemas.plan.Plan, checked by its hash)")
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=200, description=KEY)


class MakeComparison(Body):
    baseline_run_id: RunId = Field(min_length=1, max_length=200)
    candidate_run_id: RunId = Field(min_length=1, max_length=200)
    margin: float | None = Field(default=None, ge=0, le=1,
                                 description="non-inferiority margin in weighted-quality units, declared in advance")


class MakeReplay(Body):
    baseline_run_id: RunId = Field(min_length=1, max_length=200)
    preview_run_id: RunId = Field(min_length=1, max_length=200)


class RecoverPlan(Body):
    mode: Literal["undispatched", "failed"]


class RecoverRun(Body):
    plan: Any = Field(description="the reviewed recovery plan (`recover-plan`), checked by its hash")
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=200,
                                        description=KEY + " (required: recover refuses without one)")
    acknowledge_new_attempt: bool = False


class RepriceRun(Body):
    prices: dict[str, Any] = Field(description="{target id: {model: {input, cached_input, cache_write, output}}}")
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


# -- query strings -----------------------------------------------------------------------------------
class Page(Query):
    offset: int = Field(default=0, ge=0)
    limit: int = Field(default=100, ge=1, le=100)


class SeqPage(Page):
    after: int | None = Field(default=None, ge=-1, le=2**62,
                              description="keyset cursor: the last seq seen (an answer's next_cursor); "
                                          "O(page) wherever it points, unlike offset")


class RunsPage(Query):
    limit: int = Field(default=200, ge=1, le=500)
    after: str | None = Field(default=None, max_length=200,
                              description="keyset cursor: an answer's next_cursor (runs older than it)")


class CasesPage(Query):
    offset: int = Field(default=0, ge=0)
    limit: int = Field(default=25, ge=1, le=100)
    benchmark: str | None = Field(default=None, max_length=64)
    q: str | None = Field(default=None, max_length=500, description="text the last message contains")


class EventsAfter(Query):
    after: int = Field(default=0, ge=0, le=2**62, description="the last event sequence number seen")
