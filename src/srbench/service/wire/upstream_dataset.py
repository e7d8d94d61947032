"""A dataset frozen by upstream's `vllm-sr benchmark dataset prepare`, translated once at the wire edge (issue 39,
item 6).

Upstream writes a dataset as a folder `<store>/datasets/<id>/` holding `manifest.json` and `cases.jsonl`; its
64-hex `id` is the SHA-256 of the canonical JSON of `{cases_sha256, sources, profile, seed, custom_subset,
selection[, preparation]}` (upstream's `dataset_identity`). sr-bench imports it unchanged: the cases file's
bytes become the dataset object as they are (so its sha256, case ids, option orders and prompts are upstream's),
upstream's id is checked by that rule and kept as the dataset's wire id (its ``ds-`` ref is the id's first 32
hex digits), and upstream's manifest is kept verbatim (`DatasetManifest.upstream`). Anything that does not hold
— an edited manifest, bytes that are not the ones it names, a case sr-bench cannot read, a benchmark sr-bench
does not have — is refused in one error naming every problem.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from srbench import VERSION
from srbench.benchmarks import REGISTRY
from srbench.errors import InvalidInput
from srbench.schemas.dataset import (
    Case,
    FrozenDataset,
    Profile,
    Selection,
    SourceFile,
    SourceRecord,
    Split,
    UpstreamFrozen,
    decode_cases,
    split_of,
)
from srbench.schemas.text import shorten
from srbench.schemas.wire import WireJSON
from srbench.stages.plan.problems import fail, pydantic_problems

HEX64 = r"^[0-9a-f]{64}$"
MANIFEST, CASES = "manifest.json", "cases.jsonl"     # the files of upstream's dataset folder
LOCAL = "local-import"      # upstream's source url for an operator-supplied file (`--source-path`)


class UpstreamSource(BaseModel):
    """One source record of upstream's manifest: what sr-bench reads of it (the rest is kept verbatim)."""

    model_config = ConfigDict(extra="allow", use_attribute_docstrings=True)
    url: str
    """The pinned download, or ``local-import`` for an operator-supplied file."""
    revision: str
    """The source revision read."""
    files: list[SourceFile] = Field(default_factory=list)
    """Every file read, with its sha256."""
    access_note: str | None = None
    """Upstream's note on access and licence."""
    normalizer: str = "sr-bench-normalizer-v1"
    """How the files' bytes became the hashed content."""


class UpstreamDatasetManifest(BaseModel):
    """Upstream's `manifest.json` of a prepared dataset: the fields sr-bench checks and reads."""

    model_config = ConfigDict(extra="allow", use_attribute_docstrings=True)
    version: str
    """Upstream's protocol version (``sr-bench-1.0``)."""
    id: str = Field(pattern=HEX64)
    """Upstream's dataset id (its identity rule over the fields below)."""
    name: str
    """``bench[+bench]/profile``."""
    sha256: str = Field(pattern=HEX64)
    """The SHA-256 of `cases.jsonl`."""
    case_count: int = Field(ge=1)
    """Its lines."""
    profile: Profile
    """smoke, quick or standard."""
    seed: int
    """The selection seed."""
    split: Split
    """dev, or holdout for standard."""
    benchmarks: list[str] = Field(min_length=1)
    """The benchmarks of its cases, sorted."""
    sources: dict[str, UpstreamSource]
    """Per benchmark, what its cases were built from."""
    selection: str
    """Upstream's selection algorithm."""
    custom_subset: bool = False
    """A `--limit` cut (not a full profile)."""
    preparation: dict[str, JsonValue] | None = None
    """Upstream's per-benchmark preparation provenance, when it recorded one."""


def upstream_identity(raw: WireJSON) -> str:
    """Upstream's `dataset_identity`: the SHA-256 of the canonical JSON of the fields that name a dataset."""
    content = {"cases_sha256": raw.get("sha256"), "sources": raw.get("sources"), "profile": raw.get("profile"),
               "seed": raw.get("seed"), "custom_subset": raw.get("custom_subset", False),
               "selection": raw.get("selection")}
    if "preparation" in raw:
        content["preparation"] = raw["preparation"]
    encoded = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(encoded.encode()).hexdigest()


def translate(raw: Any, data: bytes, obj: str) -> FrozenDataset:
    """sr-bench's manifest of upstream's dataset `raw` whose cases file holds `data` (stored as object `obj`)."""
    if not isinstance(raw, dict):
        raise InvalidInput("upstream dataset manifest.json must be a JSON object (as `vllm-sr benchmark dataset "
                           "prepare --local` writes it)")
    try:
        m = UpstreamDatasetManifest.model_validate(raw)
    except ValidationError as exc:
        raise fail(pydantic_problems(exc), "upstream dataset manifest.json") from None
    problems = _problems(m, raw, data)
    if problems:
        raise fail(problems, f"upstream dataset {m.id}")
    kept = cast(dict[str, JsonValue], {k: v for k, v in raw.items() if k != "path"})
    selection = Selection(algorithm=f"upstream:{m.selection}", version=1, strata="upstream",
                          custom_subset=m.custom_subset)
    return FrozenDataset(
        id="ds-" + m.id[:32], name=m.name, sha256=m.sha256, object=obj, case_count=m.case_count,
        profile=m.profile, seed=m.seed, split=m.split, benchmarks=m.benchmarks,
        sources={b: _source(s) for b, s in m.sources.items()}, selection={b: selection for b in m.benchmarks},
        custom_subset=m.custom_subset, upstream=UpstreamFrozen(id=m.id, manifest=kept),
        notices=[f"frozen by upstream's vllm-sr (dataset {m.id}) and imported unchanged: its cases, case ids and "
                 "sha256 are upstream's; sr-bench grades them with its own adapters"])


def _source(s: UpstreamSource) -> SourceRecord:
    return SourceRecord(url=s.url, revision=s.revision, files=s.files, origin="local-import" if s.url == LOCAL
                        else "download", access_note=s.access_note, normalizer=s.normalizer)


def _problems(m: UpstreamDatasetManifest, raw: WireJSON, data: bytes) -> list[str]:
    problems = []
    if m.version != VERSION:            # another protocol's dataset may lay its cases out otherwise
        problems.append(f"version {shorten(m.version)!r}: sr-bench imports {VERSION} datasets only")
    identity = upstream_identity(raw)
    if identity != m.id:
        problems.append(f"id: its content gives {identity} by upstream's identity rule (the manifest was edited); "
                        "import the folder `vllm-sr benchmark dataset prepare --local` wrote")
    actual = hashlib.sha256(data).hexdigest()
    if actual != m.sha256:
        problems.append(f"sha256: cases.jsonl hashes to {actual}, not the manifest's {m.sha256}")
    if m.split != split_of(m.profile):
        problems.append(f"split {m.split} does not fit profile {m.profile} ({split_of(m.profile)})")
    if m.benchmarks != sorted(m.sources):
        problems.append(f"benchmarks {m.benchmarks} are not its sources' {sorted(m.sources)}")
    problems += [f"benchmark {b!r}: not a benchmark of sr-bench (known: {', '.join(REGISTRY)})"
                 for b in m.benchmarks if b not in REGISTRY]
    try:
        cases = decode_cases(data)
    except InvalidInput as exc:
        return [*problems, f"cases.jsonl: {exc.message}"]
    return problems + _case_problems(m, cases)


def _case_problems(m: UpstreamDatasetManifest, cases: list[Case]) -> list[str]:
    problems = []
    if len(cases) != m.case_count:
        problems.append(f"case_count {m.case_count}: cases.jsonl holds {len(cases)} cases")
    ids = [c.id for c in cases]
    if len(set(ids)) != len(ids):
        problems.append("cases.jsonl: duplicate case ids")
    stray = sorted({c.benchmark for c in cases} - set(m.benchmarks))
    if stray:
        problems.append(f"cases.jsonl: cases of {', '.join(stray)}, which the manifest does not name")
    return problems


def upstream_manifest(m: WireJSON, path: str) -> WireJSON:
    """Upstream's `manifest.json` of a dataset as sr-bench answers it (`m`, a `WireDataset`), its cases file at
    `path`: a dataset imported from upstream gets its own manifest back (its id unchanged); one frozen by sr-bench
    gets a manifest in upstream's form — sr-bench's sources as its source records, its selection named
    ``sr-bench:<algorithm>`` — whose id upstream's identity rule gives."""
    if isinstance(m.get("upstream"), dict):
        return {**m["upstream"]["manifest"], "path": path}
    algorithms = sorted({str(s.get("algorithm")) for s in (m.get("selection") or {}).values()})
    out: WireJSON = {
        "version": m.get("version", "sr-bench-1.0"), "id": "", "name": m["name"], "path": path,
        "sha256": m["sha256"], "case_count": m["case_count"], "profile": m["profile"],
        "custom_subset": bool(m.get("custom_subset")), "benchmarks": m["benchmarks"], "sources": m["sources"],
        "seed": m["seed"], "selection": "sr-bench:" + "+".join(algorithms), "split": m["split"]}
    return {**out, "id": upstream_identity(out)}
