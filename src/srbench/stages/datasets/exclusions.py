"""Named-history exclusions: canonical task identities, exclusion snapshots and their checks.

Task identity (``sr-bench-task-identity-v1``): the SHA-256 of the canonical JSON of
``{"benchmark", "source": {url, revision, normalizer, partition, files: [{name, sha256}]}, "task"}``,
where ``task`` is the source's native task id (`Benchmark.native_ids`: MMLU-Pro's question id, τ³'s
``domain/task``, GPQA's full digest of the unformatted question). It names exact source bytes: the
same task read from another revision, normalizer, partition or file set is another identity, and no
identity is ever derived from a prompt's text. A dataset prepared with ``--source-partition`` carries
it per case (``metadata.task_identity``); one prepared without it has none and cannot be named.

An exclusion snapshot (`compile_snapshot`) lists, per benchmark and source, the identities of every
case of the explicitly named prepared datasets and frozen run plans — every membership, whether a
model answered or not — with the named items' digests and the source provenance; never a question or
an answer. It is addressed by ``sha256`` (of its canonical JSON without that field), checked on every
read (`check_snapshot`). Reads are bounded (names, bytes, identities): an oversized input fails before
anything is stored. The claim it supports is finite and local: disjoint from what was named.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from typing import Literal, NamedTuple, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from srbench.benchmarks import get as get_benchmark
from srbench.cas import ObjectStore, canonical_json
from srbench.cas.digest import JSONValue
from srbench.errors import InvalidInput
from srbench.schemas.dataset import (
    Case,
    DatasetManifest,
    Evaluation,
    Role,
    SourceFile,
    SourceRecord,
    decode_cases,
)

ROLES: tuple[str, ...] = get_args(Role)
MAX_NAMES = 64                        # datasets, and runs, one snapshot may name
MAX_IDENTITIES = 100_000              # a snapshot of these fits a request body (8 MiB) inline
MAX_BYTES = 512 * 1024 * 1024         # dataset bytes read for one snapshot, all named items together
LIMITATION = ("Named-history exclusion is a finite, local provenance claim: the tasks are disjoint from the "
              "datasets and runs the exclusion snapshot names, and from nothing else; it does not certify that "
              "they are free of contamination.")
SHA256 = r"^[0-9a-f]{64}$"


class SourceIdentity(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    url: str
    revision: str
    normalizer: str
    partition: str
    files: list[SourceFile]


class Family(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    benchmark: str = Field(min_length=1, max_length=64)
    source: SourceIdentity
    source_sha256: str = Field(pattern=SHA256)
    count: int = Field(ge=0)
    task_identities: list[str] = Field(description="sorted, distinct sha256 hex")


class DatasetReference(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    id: str
    sha256: str = Field(pattern=SHA256)
    name: str
    case_count: int


class RunReference(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    id: str
    plan_sha256: str = Field(pattern=SHA256)
    dataset_sha256: str = Field(pattern=SHA256)
    case_count: int = Field(description="cases the plan holds (planned, answered or failed alike)")


class References(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    datasets: list[DatasetReference]
    runs: list[RunReference]


class SnapshotBody(BaseModel):
    """An exclusion snapshot's content: what its sha256 is the SHA-256 of (as canonical JSON)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    kind: Literal["sr-bench-exclusion-snapshot"]
    version: Literal[1]
    identity: Literal["sr-bench-task-identity-v1"]
    references: References
    families: list[Family]
    limitation: str


class Snapshot(SnapshotBody):
    """An exclusion snapshot as stored, answered and written to a file."""

    sha256: str = Field(pattern=SHA256, description="SHA-256 of the canonical JSON of every other field")


class NamedRun(BaseModel):
    """A run a snapshot names: what of its frozen plan and registered dataset the snapshot reads."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(description="the run's id")
    plan_sha256: str = Field(description="the sha256 of its frozen plan")
    dataset_sha256: str = Field(description="the sha256 of its dataset's bytes")
    dataset_object: str = Field(description="the object digest of its dataset's bytes")
    case_ids: frozenset[str] | None = Field(description="the cases its plan holds (None: every case)")
    manifest: DatasetManifest = Field(description="the registered manifest of its dataset (its sources)")


def source_identity(record: SourceRecord) -> SourceIdentity:
    """The identity part of a dataset's source record (its partition set: callers check it is set)."""
    assert record.partition is not None, "a source identity names a partition"
    return SourceIdentity(url=record.url, revision=record.revision, normalizer=record.normalizer,
                          partition=record.partition, files=sorted(
                              (SourceFile(name=f.name, sha256=f.sha256) for f in record.files), key=lambda f: f.name))


def _sha256(value: JSONValue | BaseModel) -> str:
    return hashlib.sha256(canonical_json(value.model_dump(mode="json") if isinstance(value, BaseModel) else value)
                          ).hexdigest()


def task_identity(benchmark: str, source: SourceIdentity, native_id: str) -> str:
    return _sha256({"benchmark": benchmark, "source": source.model_dump(mode="json"), "task": native_id})


def identities(benchmark: str, source: SourceIdentity, native: dict[str, str]) -> dict[str, str]:
    """{case id: task identity} from {case id: native task id}."""
    return {cid: task_identity(benchmark, source, nid) for cid, nid in native.items()}


def with_identities(cases: list[Case], idents: dict[str, str]) -> list[Case]:
    """Copies of `cases`, each with its ``metadata.task_identity``."""
    return [c.model_copy(update={"metadata": c.metadata.model_copy(update={"task_identity": idents[c.id]})})
            for c in cases]


def with_role(cases: list[Case], role: str, snapshot_sha256: str | None) -> list[Case]:
    """Copies of `cases` that carry the evaluation role (and the snapshot's sha256) in their metadata, so
    datasets that differ only there never share bytes (a plan resolves its dataset by sha256)."""
    extra: dict[str, str] = {"evaluation_role": role}
    if snapshot_sha256 is not None:
        extra["exclusion_snapshot_sha256"] = snapshot_sha256
    return [c.model_copy(update={"metadata": c.metadata.model_copy(update=extra)}) for c in cases]


def no_identity(what: str, benchmark: str) -> InvalidInput:
    try:
        partition = get_benchmark(benchmark).source_partition
    except InvalidInput:
        partition = "<partition>"
    return InvalidInput(f"{what} was prepared without a canonical task identity for {benchmark} (no "
                        f"--source-partition): named-history exclusion needs the exact source revision, normalizer, "
                        f"partition and native task ids, and never matches tasks by their text; prepare it again "
                        f"with --source-partition {partition}", code="no_task_identity")


def _bounded_bytes(store: ObjectStore, digest: str, budget: list[int], what: str) -> bytes:
    try:
        size = os.path.getsize(store.path_of(digest)) if store.local else int(store.fs.size(store.path_of(digest)))
    except OSError:
        size = 0                       # the read below names a missing object
    if size > budget[0]:
        raise InvalidInput(f"{what}: reading it would pass the snapshot's bound of {MAX_BYTES} dataset bytes; "
                           "name fewer or smaller datasets and runs (nothing was stored)", code="too_large")
    data = store.get_bytes(digest, verify=True)
    budget[0] -= len(data)
    return data


class Member(NamedTuple):
    """A dataset a snapshot reads: named for errors, its sources, its object and the cases counted (None: all)."""

    what: str
    sources: dict[str, SourceRecord]
    obj: str
    only: frozenset[str] | None


def compile_snapshot(store: ObjectStore, datasets: Sequence[DatasetManifest], runs: Sequence[NamedRun]) -> Snapshot:
    """The snapshot of the named `datasets` (registered manifests) and `runs`. Raises InvalidInput; stores
    nothing (the caller does)."""
    if not datasets and not runs:
        raise InvalidInput("name at least one prepared dataset (--dataset) or run (--run)")
    if len(datasets) > MAX_NAMES or len(runs) > MAX_NAMES:
        raise InvalidInput(f"a snapshot names at most {MAX_NAMES} datasets and {MAX_NAMES} runs", code="too_large")
    members = [Member(f"dataset {m.id} ({m.name})", m.sources, m.object, None) for m in datasets]
    members += [Member(f"run {r.id}'s dataset {r.manifest.id} ({r.manifest.name})", r.manifest.sources,
                       r.dataset_object, r.case_ids) for r in runs]
    families, counts = _families(store, members)
    body = SnapshotBody(
        kind="sr-bench-exclusion-snapshot", version=1, identity="sr-bench-task-identity-v1",
        references=References(
            datasets=sorted((DatasetReference(id=m.id, sha256=m.sha256, name=m.name, case_count=m.case_count)
                             for m in datasets), key=lambda d: d.id),
            runs=sorted((RunReference(id=r.id, plan_sha256=r.plan_sha256, dataset_sha256=r.dataset_sha256,
                                      case_count=counts[len(datasets) + i]) for i, r in enumerate(runs)),
                        key=lambda r: r.id)),
        families=[Family(benchmark=b, source=src, source_sha256=s, count=len(ids), task_identities=sorted(ids))
                  for (b, s), (src, ids) in sorted(families.items())],
        limitation=LIMITATION)
    return Snapshot(**dict(body), sha256=_sha256(body))


def _families(store: ObjectStore, members: list[Member]) -> tuple[dict[tuple[str, str], tuple[SourceIdentity, set[str]]],
                                                                  list[int]]:
    """Per (benchmark, source sha256): its source identity and the task identities of the members' cases;
    and how many cases each member holds."""
    budget = [MAX_BYTES]
    families: dict[tuple[str, str], tuple[SourceIdentity, set[str]]] = {}
    counts: list[int] = []
    total = 0
    for what, sources, obj, only in members:
        n = 0
        for case in decode_cases(_bounded_bytes(store, obj, budget, what)):
            if only is not None and case.id not in only:
                continue
            record = sources.get(case.benchmark)
            ident = getattr(case.metadata, "task_identity", None)
            if record is None or record.partition is None or not isinstance(ident, str):
                raise no_identity(what, case.benchmark)
            src = source_identity(record)
            fam = families.setdefault((case.benchmark, _sha256(src)), (src, set()))
            if ident not in fam[1]:
                total += 1
                if total > MAX_IDENTITIES:
                    raise InvalidInput(f"the named history holds more than {MAX_IDENTITIES} task identities; name "
                                       "fewer datasets and runs (nothing was stored)", code="too_large")
                fam[1].add(ident)
            n += 1
        counts.append(n)
    return families, counts


def check_snapshot(raw: object) -> Snapshot:
    """A snapshot as read from a file or a request, validated and checked against its sha256."""
    if not isinstance(raw, dict):
        raise InvalidInput("exclusion snapshot: not a JSON object (write it with `dataset exclusions --output`)")
    try:
        snap = Snapshot.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top)"
        raise InvalidInput(f"exclusion snapshot: {where}: {first['msg']} (write it with `dataset exclusions`)"
                           ) from None
    if _sha256(snap.model_dump(mode="json", exclude={"sha256"})) != snap.sha256:
        raise InvalidInput("exclusion snapshot: its sha256 does not match its content (was it edited?); compile it "
                           "again with `dataset exclusions`", code="snapshot_mismatch")
    total = 0
    for fam in snap.families:
        ids = fam.task_identities
        canonical = fam.source.model_copy(update={"files": sorted(fam.source.files, key=lambda f: f.name)})
        if len(ids) != fam.count or ids != sorted(set(ids)) or _sha256(canonical) != fam.source_sha256:
            raise InvalidInput(f"exclusion snapshot: the {fam.benchmark} family is not sorted, distinct and counted")
        total += len(ids)
    if total > MAX_IDENTITIES:
        raise InvalidInput(f"exclusion snapshot: more than {MAX_IDENTITIES} task identities", code="too_large")
    return snap


def history_of(snapshot: Snapshot, benchmark: str, source: SourceIdentity) -> set[str]:
    """The snapshot's identities of `benchmark` read from exactly `source`. Raises InvalidInput when it holds
    the benchmark from another source (revision, normalizer, partition or files): never mapped across."""
    found: set[str] = set()
    for fam in snapshot.families:
        if fam.benchmark != benchmark:
            continue
        if fam.source != source:
            theirs, ours = fam.source, source
            diff = [k for k in ("url", "revision", "normalizer", "partition", "files")
                    if getattr(theirs, k) != getattr(ours, k)]
            raise InvalidInput(
                f"the exclusion snapshot holds {benchmark} tasks of another source ({', '.join(diff)} differ: "
                f"revision {theirs.revision}, partition {theirs.partition}; this source is revision "
                f"{ours.revision}, partition {ours.partition}): task identities are never mapped across "
                "sources or revisions; prepare from the same source or name a history of it", code="source_mismatch")
        found.update(fam.task_identities)
    return found


def retest_families(evaluation: Mapping[str, Evaluation] | None) -> list[str]:
    return sorted(b for b, e in (evaluation or {}).items() if e.role == "retest")


def evaluation_notices(evaluation: Mapping[str, Evaluation] | None) -> list[str]:
    """What a dataset, plan or report says about its evaluation roles (nothing without them)."""
    if not evaluation:
        return []
    out = []
    if any(e.snapshot_sha256 for e in evaluation.values()):
        out.append(LIMITATION)
    retest = retest_families(evaluation)
    if retest:
        out.append(f"retest families (not claimed disjoint from earlier runs): {', '.join(retest)}")
    return out
