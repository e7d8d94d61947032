"""Dataset stages: prepare (source files → frozen dataset), combine, and load by path + sha256.

`prepare` is a rule over the digests of the source files it read, so the same source, profile,
seed and limit give the same dataset bytes on any host (DS-2) and asking again is a cache hit.
A frozen dataset is JSON Lines: one canonical-JSON case a line, in selection order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from srbench import VERSION
from srbench.benchmarks import get as get_benchmark
from srbench.benchmarks.base import Benchmark
from srbench.benchmarks.pins import CheckMethod
from srbench.benchmarks.selection import VERSION as ALGORITHM_VERSION
from srbench.benchmarks.selection import select, select_excluding
from srbench.benchmarks.sources import Origin
from srbench.cas import ObjectStore, canonical_json, digest_json, files, sha256_bytes, short
from srbench.cas.digest import JSONValue
from srbench.errors import IntegrityError, InvalidInput
from srbench.rules import Engine, Rule, RuleInputs, RuleParams
from srbench.schemas.dataset import (
    Case,
    DatasetManifest,
    Evaluation,
    FrozenDataset,
    Profile,
    Role,
    Selection,
    SourceFile,
    SourceRecord,
    split_of,
)
from srbench.schemas.dataset import decode_cases as decode_cases  # re-exported: its old home
from srbench.schemas.text import shorten
from srbench.stages.datasets import exclusions as ex


class PrepareParams(BaseModel):
    """The prepare rule's parameters as `prepare` names them (its action key: a key absent unless asked for
    keeps the key of a plain preparation)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    benchmark: str = Field(description="the benchmark's id")
    adapter: str = Field(description="the benchmark adapter's version (a new one prepares again)")
    profile: Profile = Field(description="the profile cut")
    seed: int = Field(description="the selection seed")
    limit: int | None = Field(description="a custom subset's size (None: the full profile)")
    revision: str = Field(description="the source revision read")
    url: str = Field(description="the source's pinned location")
    origin: Origin = Field(description="where the source files came from")
    normalizer: str = Field(description="how file bytes became the hashed content")
    sha256: dict[str, str] = Field(description="file name -> SHA-256 of the file bytes given")
    partition: str | None = Field(default=None, description="the upstream partition read (cases get identities)")
    check: CheckMethod | None = Field(default=None, description="how the files were held to their pin")
    role: Role | None = Field(default=None, description="the evaluation role recorded with the cases")


class PrepareInputs(BaseModel):
    """The prepare rule's inputs: object digests."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    sources: dict[str, str] = Field(description="file name -> object digest of its bytes")
    snapshot: str | None = Field(default=None, description="object digest of a checked exclusion snapshot")


class CombineInputs(BaseModel):
    """The combine rule's inputs: the object digests of the stored manifests combined (sorted)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    manifests: list[str] = Field(description="object digests of the manifests (without path)")


def encode_cases(cases: list[Case]) -> bytes:
    return b"".join(canonical_json(c.model_dump(mode="json")) + b"\n" for c in cases)


def dataset_digest(cases_sha256: str, sources: Mapping[str, JSONValue], profile: str, seed: int, custom: bool,
                   selection: Mapping[str, JSONValue], evaluation: Mapping[str, JSONValue] | None = None) -> str:
    """The 64 hex digits that name a dataset (what it is a function of, as upstream names its datasets);
    its evaluation roles and exclusions are part of it when there are any. The parts are hashed as the JSON
    given (a manifest's: `naming`)."""
    named: dict[str, JSONValue] = {"cases_sha256": cases_sha256, "sources": sources, "profile": profile,
                                   "seed": seed, "custom_subset": custom, "selection": selection}
    if evaluation:
        named["evaluation"] = evaluation
    return short(digest_json(named), 64)


def dataset_id(cases_sha256: str, sources: Mapping[str, JSONValue], profile: str, seed: int, custom: bool,
               selection: Mapping[str, JSONValue], evaluation: Mapping[str, JSONValue] | None = None) -> str:
    """A dataset's id (frozen plans name it): ``ds-`` and the first 32 hex digits of its digest."""
    return "ds-" + dataset_digest(cases_sha256, sources, profile, seed, custom, selection, evaluation)[:32]


def naming(m: DatasetManifest) -> str:
    """The 64 hex digits `dataset_digest` gives over a manifest's own fields (as stored); a dataset frozen by
    upstream keeps upstream's id (`service.wire.upstream_dataset` checks it by upstream's rule on import)."""
    if m.upstream is not None:
        return m.upstream.id
    dumped = m.model_dump(mode="json", include={"sources", "selection", "evaluation"})
    return dataset_digest(m.sha256, dumped["sources"], m.profile, m.seed, m.custom_subset, dumped["selection"],
                          dumped.get("evaluation"))


def ref_of(m: DatasetManifest) -> str:
    """The ``ds-`` id a manifest's fields give it (`dataset_id` over the manifest as stored)."""
    return "ds-" + naming(m)[:32]


def _named(m: FrozenDataset) -> FrozenDataset:
    """The new manifest `m` (its id not yet set) with the id its fields give and its evaluation's notices."""
    if m.evaluation:
        m.notices += [n for n in ex.evaluation_notices(m.evaluation) if n not in m.notices]
    else:
        m.evaluation = None
    return m.model_copy(update={"id": ref_of(m)})


def _prepare(store: ObjectStore, inputs: RuleInputs, params: RuleParams) -> dict[str, JSONValue]:
    p, given = PrepareParams.model_validate(params), PrepareInputs.model_validate(inputs)
    bench = get_benchmark(p.benchmark)
    files = {name: store.get_bytes(d, verify=True) for name, d in given.sources.items()}
    all_cases = bench.load(files, seed=p.seed, revision=p.revision)
    record = SourceRecord(
        url=p.url, revision=p.revision, origin=p.origin,
        files=[SourceFile(name=n, sha256=s) for n, s in sorted(p.sha256.items())],
        license_url=bench.source.license_url, access_note=bench.source.access_note, normalizer=p.normalizer,
        partition=p.partition, check=p.check)
    idents: dict[str, str] = {}
    if p.partition is not None:           # a canonical task identity per case (stages.exclusions)
        source = ex.source_identity(record)
        idents = ex.identities(bench.id, source, bench.native_ids(all_cases, files))
    snapshot, named, out = None, set(), 0
    if given.snapshot is not None:
        snapshot = ex.check_snapshot(store.get_json(given.snapshot))
        history = ex.history_of(snapshot, bench.id, source)
        named = {cid for cid, ident in idents.items() if ident in history}
        chosen, out = select_excluding(all_cases, p.profile, bench.profiles, p.seed, named, p.limit,
                                       benchmark=bench.id, algorithm=bench.selection_algorithm)
    else:
        chosen = select(all_cases, p.profile, bench.profiles, p.seed, limit=p.limit, benchmark=bench.id,
                        algorithm=bench.selection_algorithm)
    snapshot_sha256 = snapshot.sha256 if snapshot else None
    evaluation = None if p.role is None else {bench.id: Evaluation(
        role=p.role, snapshot_sha256=snapshot_sha256, excluded=out, history=len(named),
        claims_disjoint=p.role == "holdout")}
    if idents:
        chosen = ex.with_identities(chosen, idents)
    if p.role is not None:                # in the bytes too: a plan names its dataset by sha256 alone
        chosen = ex.with_role(chosen, p.role, snapshot_sha256)
    data = encode_cases(chosen)
    custom = p.limit is not None
    notices = list(bench.notices())
    tag, labels = bench.dataset_label(p.revision, p.origin)
    notices += labels
    if custom:
        notices.append(f"custom subset: the first {p.limit} tasks of the {p.profile} profile, not the full profile")
    name = (f"{bench.id}{'@' + tag if tag else ''}/{p.profile}" + (f"/{p.role}" if p.role is not None else "")
            + (f"/limit-{p.limit}" if custom else ""))
    return _named(FrozenDataset(
        version=VERSION, id="", name=name, sha256=sha256_bytes(data), object=store.put_bytes(data),
        case_count=len(chosen), profile=p.profile, seed=p.seed, split=split_of(p.profile), benchmarks=[bench.id],
        sources={bench.id: record}, custom_subset=custom, notices=notices, evaluation=evaluation,
        selection={bench.id: Selection(algorithm=bench.selection_algorithm, version=ALGORITHM_VERSION,
                                       strata=bench.strata, limit=p.limit, custom_subset=custom)},
    )).model_dump(mode="json")


PREPARE = Rule("prepare", "1", _prepare)


def prepare(engine: Engine, benchmark: str, profile: str, seed: int, limit: int | None,
            files: dict[str, bytes], *, revision: str, url: str, origin: str, partition: str | None = None,
            role: str | None = None, snapshot: str | None = None, check: str | None = None) -> tuple[FrozenDataset, bool]:
    """Freeze a dataset from source file bytes. Returns (manifest without `path`, cache hit).

    `partition` (the upstream partition the files are) gives every case its canonical task identity;
    `snapshot` (the object digest of a checked exclusion snapshot) excludes its tasks of this source;
    `role` is the evaluation role recorded with them. Without the three the dataset is as before.
    `check` records how the files were held to their pin (`acquire.verify_paths`); None: not checked."""
    bench = get_benchmark(benchmark)
    if not bench.available:
        raise InvalidInput(f"benchmark {benchmark} is not available: {bench.unavailable_reason}")
    if profile not in bench.profiles:
        raise InvalidInput(f"unknown profile {profile!r}; use smoke, quick or standard")
    if limit is not None and limit < 1:
        raise InvalidInput("--limit must be a positive number of tasks")
    if not files:
        raise InvalidInput(f"no source files for {benchmark}")
    check_evaluation(bench, partition, role, snapshot)
    digests = {name: engine.store.put_bytes(data) for name, data in sorted(files.items())}
    params: RuleParams = {"benchmark": bench.id, "adapter": bench.adapter_version, "profile": profile, "seed": seed,
              "limit": limit, "revision": revision, "url": url, "origin": origin, "normalizer": bench.normalizer,
              "sha256": {name: sha256_bytes(data) for name, data in files.items()}}
    inputs: RuleInputs = {"sources": digests}
    if partition is not None:           # absent unless asked for: the rule key of a plain preparation is unchanged
        params["partition"] = partition
    if check is not None:
        params["check"] = check
    if role is not None:
        params["role"] = role
    if snapshot is not None:
        inputs["snapshot"] = snapshot
    result = engine.build(PREPARE, inputs, params, subject=f"{bench.id}/{profile}/{seed}")
    return FrozenDataset.model_validate(engine.store.get_json(result.output)), result.hit


def check_evaluation(bench: Benchmark, partition: str | None, role: str | None, snapshot: object) -> None:
    """The evaluation options agree with each other and with the benchmark (before any source is read)."""
    if partition is not None and partition != bench.source_partition:
        raise InvalidInput(f"--source-partition {partition!r}: {bench.id} reads the upstream partition "
                           f"{bench.source_partition!r} (its pinned files); name that one")
    if role is not None and role not in ex.ROLES:
        raise InvalidInput(f"--evaluation-role {role!r}: choose one of {', '.join(ex.ROLES)}")
    if snapshot is not None and partition is None:
        raise InvalidInput("--exclusion-snapshot needs --source-partition: tasks are excluded by their canonical "
                           "identity, which names the source partition")
    if snapshot is not None and role is None:
        raise InvalidInput("--exclusion-snapshot needs --evaluation-role (development, holdout or retest)")
    if role == "holdout" and snapshot is None:
        raise InvalidInput("--evaluation-role holdout claims disjointness from a named history: give "
                           "--exclusion-snapshot (compile one with `dataset exclusions`), or use --evaluation-role "
                           "retest, which claims none")


def _combine(store: ObjectStore, inputs: RuleInputs, params: RuleParams) -> dict[str, JSONValue]:
    """Order-free: cases are grouped by benchmark id (sorted), each benchmark's cases keeping their
    selection order, so the same cases give the same bytes whatever order the inputs came in (and
    whether they were combined at once or in steps)."""
    manifests = [FrozenDataset.model_validate(store.get_json(d)) for d in CombineInputs.model_validate(inputs).manifests]
    cases: list[Case] = []
    seen: set[str] = set()
    for m in manifests:
        for case in decode_cases(store.get_bytes(m.object, verify=True)):
            if case.id in seen:
                raise InvalidInput(f"case {case.id} appears in more than one dataset; combine refuses duplicates")
            seen.add(case.id)
            cases.append(case)
    cases.sort(key=lambda c: c.benchmark)          # stable: each benchmark keeps its selection order
    manifests.sort(key=lambda m: sorted(m.benchmarks))
    data = encode_cases(cases)
    sources: dict[str, SourceRecord] = {}
    selection: dict[str, Selection] = {}
    notices: list[str] = []
    evaluation: dict[str, Evaluation] = {}
    for m in manifests:
        sources.update(m.sources)
        selection.update(m.selection)
        evaluation.update(m.evaluation or {})
        notices += [n for n in m.notices if n not in notices]
    first = manifests[0]
    benchmarks = sorted(b for m in manifests for b in m.benchmarks)
    return _named(FrozenDataset(
        version=VERSION, id="", name="+".join(benchmarks) + "/" + first.profile, sha256=sha256_bytes(data),
        object=store.put_bytes(data), case_count=len(cases), profile=first.profile, seed=first.seed,
        split=first.split, benchmarks=benchmarks, sources=sources, selection=selection,
        custom_subset=any(m.custom_subset for m in manifests), notices=notices, evaluation=evaluation,
    )).model_dump(mode="json")


COMBINE = Rule("combine", "2", _combine)


def combine(engine: Engine, manifests: Sequence[DatasetManifest]) -> tuple[FrozenDataset, bool]:
    """Combine frozen datasets of one profile, seed and split (DS-9); anything else is refused."""
    if len(manifests) < 2:
        raise InvalidInput("combine needs at least two dataset manifests")
    keys = {(m.profile, m.seed, m.split) for m in manifests}
    if len(keys) > 1:
        desc = ", ".join(f"{m.id} {m.name} (profile {m.profile}, seed {m.seed}, split {m.split})" for m in manifests)
        raise InvalidInput(f"datasets differ in profile, seed or split and are never merged: {desc}")
    benches = [b for m in manifests for b in m.benchmarks]
    dupes = sorted({b for b in benches if benches.count(b) > 1})
    if dupes:
        raise InvalidInput(f"benchmark(s) {', '.join(dupes)} appear in more than one dataset")
    digests = sorted(engine.store.put_json(m.model_dump(mode="json", exclude={"path"})) for m in manifests)
    result = engine.build(COMBINE, {"manifests": digests}, {}, subject="+".join(sorted(benches)))
    return FrozenDataset.model_validate(engine.store.get_json(result.output)), result.hit


def with_path(store: ObjectStore, manifest: DatasetManifest) -> DatasetManifest:
    """The manifest as printed: `path` names the frozen JSONL file: on a local store a ``.jsonl`` name of the
    object's own file (`cas/files.py`: a reader that parses by suffix reads it), elsewhere the object's URL."""
    path = files.suffixed(store, manifest.object, ".jsonl") if store.local else f"{store.url}#{manifest.object}"
    return DatasetManifest.model_validate({**manifest.model_dump(exclude={"path"}), "path": path})


def read_dataset_file(store: ObjectStore, path: str, sha256: str) -> tuple[bytes, str]:
    """Read a dataset by path (on this host) and check its declared sha256. Returns (bytes, b3 digest)."""
    data: bytes
    if "#b3:" in path:
        data = store.get_bytes(path.split("#", 1)[1], verify=True)
    else:
        p = Path(path)
        try:
            if not p.is_file():
                raise InvalidInput(f"dataset.path: the file {path} does not exist on the service host")
            data = p.read_bytes()
        except (OSError, ValueError) as exc:        # a path the filesystem refuses, or cannot read
            raise InvalidInput(f"dataset.path: cannot read {shorten(path)}: {getattr(exc, 'strerror', None) or exc}"
                               ) from None
    return _checked(data, sha256, f"the dataset file {path}"), store.put_bytes(data)


def read_dataset_object(store: ObjectStore, digest: str, sha256: str) -> bytes:
    """The bytes of a frozen dataset kept in the store, checked against the sha256 that names it."""
    return _checked(store.get_bytes(digest, verify=True), sha256, f"the stored dataset {digest}")


def _checked(data: bytes, sha256: str, what: str) -> bytes:
    actual = sha256_bytes(data)
    if actual != sha256:
        raise IntegrityError(f"dataset.sha256 {sha256} does not match {what} (its sha256 is {actual})")
    return data
