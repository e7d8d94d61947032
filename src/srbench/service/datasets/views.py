"""Datasets as upstream's Dashboard reads them: detail, the public case page, selection and compose.

- detail: coverage per benchmark and category, and provenance (sources, seed, selection) — never a
  reference answer;
- cases: the public view of each case (its question from the system/user/developer messages, its
  category = stratum), filtered by benchmark, category and text, paged by a string cursor;
- selection (per profile): for each catalog benchmark, the one prepared full-profile source a new
  evaluation would use, or why there is none (not_prepared, source_conflict: two different frozen
  versions, seed_conflict: the eligible benchmarks disagree on the seed);
- compose: one dataset from chosen benchmarks of prepared datasets of one profile, seed and split
  (registered like a prepared one; the same choice gives the same dataset).

Detail, cases and compose take a dataset by any of its names and answer its 64-hex id (`ids`: the one
upstream's Dashboard proxy lets through on ``/datasets/{id}``), its ``ds-`` id as ``ref``.
"""

from __future__ import annotations

import hashlib
from collections import Counter, OrderedDict
from typing import TYPE_CHECKING, NamedTuple

from srbench.benchmarks import all_benchmarks
from srbench.benchmarks.base import Benchmark
from srbench.cas import canonical_json
from srbench.cas.digest import JSONValue
from srbench.errors import InvalidInput
from srbench.schemas.dataset import Case, DatasetManifest, FrozenDataset, split_of
from srbench.service.api import responses as rs
from srbench.service.datasets.ids import on_wire, resolve, wire_id
from srbench.service.datasets.refs import all_registered, register_dataset
from srbench.stages.datasets.build import decode_cases, encode_cases, ref_of

if TYPE_CHECKING:
    from srbench.service.app import Service

PUBLIC_ROLES = ("system", "user", "developer")
MAX_CACHED = 16


class CaseCache:
    """Decoded cases of recently read datasets (by object digest: immutable)."""

    def __init__(self) -> None:
        self._cache: OrderedDict[str, list[Case]] = OrderedDict()

    def get(self, service: Service, obj: str) -> list[Case]:
        if obj not in self._cache:
            self._cache[obj] = decode_cases(service.objects.get_bytes(obj))
            while len(self._cache) > MAX_CACHED:
                self._cache.popitem(last=False)
        self._cache.move_to_end(obj)
        return self._cache[obj]


CASES = CaseCache()


def manifest_of(service: Service, dataset_id_: str) -> DatasetManifest:
    """The stored manifest of a dataset named by its 64-hex id, its ``ds-`` ref or its bytes' SHA-256."""
    return resolve(service, dataset_id_)


def _titles() -> dict[str, str]:
    return {b.id: b.title for b in all_benchmarks()}


def _public_messages(case: Case) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in case.messages
            if m.role in PUBLIC_ROLES and m.content.strip()]


def _question(messages: list[dict[str, str]]) -> str:
    return "\n\n".join(m["content"] for m in messages)


def public_case(case: Case) -> rs.CaseView:
    messages = _public_messages(case)
    question = _question(messages)
    notice = {} if question else {
        "input_notice": "This prepared task has no displayable input (its harness builds the prompt)."}
    return rs.CaseView(id=case.id, benchmark=case.benchmark, category=case.metadata.stratum, question=question,
                       messages=messages, input_status="available" if question else "unavailable",
                       metadata={"stratum": case.metadata.stratum, "split": case.metadata.split}, **notice)


def detail(service: Service, dataset_id_: str) -> rs.DatasetDetail:
    m = manifest_of(service, dataset_id_)
    cases = CASES.get(service, m.object)
    counts = Counter((c.benchmark, c.metadata.stratum) for c in cases)
    titles = _titles()
    benchmarks = []
    for b in sorted({c.benchmark for c in cases}):
        cats = [{"name": cat, "count": n} for (bb, cat), n in sorted(counts.items()) if bb == b]
        benchmarks.append(rs.DatasetBenchmark(id=b, title=titles.get(b, b), count=sum(n for (bb, _), n in
                                                                                     counts.items() if bb == b),
                                              categories=cats))
    sources = [{"benchmark": b, "url": s.url, "revision": s.revision, "normalizer": s.normalizer,
                **({"partition": s.partition} if s.partition else {}),
                "origin": s.origin, "license_url": s.license_url,
                "access_note": s.access_note or "Upstream access and license terms apply; answers are excluded "
                                                "from this view.",
                "file_count": len(s.files)} for b, s in sorted(m.sources.items())]
    dumped = m.model_dump(mode="json", include={"selection", "evaluation"})
    return rs.DatasetDetail(
        id=wire_id(m), ref=m.id, name=m.name, profile=m.profile, split=m.split, custom_subset=m.custom_subset,
        case_count=m.case_count, benchmarks=benchmarks,
        categories=[{"benchmark": b, "name": cat, "count": n} for (b, cat), n in sorted(counts.items())],
        provenance={"sha256": m.sha256, "seed": m.seed, "selection": dumped["selection"], "sources": sources,
                    **({"evaluation": dumped["evaluation"]} if m.evaluation else {})},
        manifest=on_wire(m))


def cases_page(service: Service, dataset_id_: str, *, start: int, limit: int, benchmark: str | None,
               category: str | None, text: str | None) -> rs.Cases:
    """One page of a dataset's public cases (the model; the route dumps it at the edge)."""
    m = manifest_of(service, dataset_id_)
    cases = CASES.get(service, m.object)
    needle = (text or "").casefold()
    chosen = cases if not (benchmark or category or needle) else [
        c for c in cases if (not benchmark or c.benchmark == benchmark)
        and (not category or c.metadata.stratum == category)
        and (not needle or needle in (c.id + "\n" + _question(_public_messages(c))).casefold())]
    part = [public_case(c) for c in chosen[start:start + limit]]     # views of the page's cases only
    following = start + len(part)
    return rs.Cases(dataset_id=wire_id(m), cases=part, total=len(chosen), dataset_total=len(cases),
                    next_cursor=str(following) if following < len(chosen) else None, limit=limit, offset=start)


def _proof(m: DatasetManifest, benchmark: str) -> str:
    """Two prepared datasets hold the same frozen cases of a benchmark when its pinned source, its
    selection, the seed and the split agree (datasets are functions of exactly these)."""
    source, chosen = m.sources.get(benchmark), m.selection.get(benchmark)
    named: dict[str, JSONValue] = {"source": source.model_dump(mode="json") if source else None,
                                   "selection": chosen.model_dump(mode="json") if chosen else None,
                                   "seed": m.seed, "split": m.split}
    evaluation = (m.evaluation or {}).get(benchmark)
    if evaluation:                  # an excluding cut holds other cases than the plain one
        named["evaluation"] = evaluation.model_dump(mode="json")
    return hashlib.sha256(canonical_json(named)).hexdigest()


class _Found(NamedTuple):
    """A prepared dataset holding a benchmark's plain full-profile cut."""

    proof: str
    width: int
    case_count: int
    ref: str
    seed: int
    wire: str


def _eligible(service: Service, bench: Benchmark, found: list[_Found]) -> tuple[rs.BenchmarkSelection, int | None]:
    """A benchmark's selection entry, and the seed of its source (None: not eligible)."""
    conflict = len({f.proof for f in found}) > 1
    chosen = min(found, key=lambda f: (f.width, f.case_count, f.ref)) if found else None
    if chosen is None or conflict:
        return rs.BenchmarkSelection(
            id=bench.id, title=bench.title, eligible=False, case_count=0, source_ids=[],
            reason_code="source_conflict" if conflict else "not_prepared",
            reason="Multiple frozen versions are available. Prepare one canonical collection or select a custom "
                   "dataset." if conflict else "Prepare this benchmark for the selected profile."), None
    m = manifest_of(service, chosen.ref)
    count = m.case_count if len(m.benchmarks) == 1 else sum(c.benchmark == bench.id for c in CASES.get(service, m.object))
    return rs.BenchmarkSelection(id=bench.id, title=bench.title, eligible=True, case_count=count,
                                 source_ids=[chosen.wire], reason_code=None, reason=None), chosen.seed


def selection(service: Service, profile: str) -> rs.DatasetSelection:
    split = split_of(profile)
    groups: dict[str, list[_Found]] = {}
    for m in all_registered(service):
        if m.profile != profile or m.custom_subset:
            continue
        for b in m.benchmarks:
            groups.setdefault(b, []).append(_Found(_proof(m, b), len(m.benchmarks), m.case_count, m.id, m.seed,
                                                   wire_id(m)))
    entries = [_eligible(service, bench, groups.get(bench.id, [])) for bench in all_benchmarks()]
    seeds = {seed for _, seed in entries if seed is not None}
    if len(seeds) > 1:
        for e, _ in entries:
            if e.eligible:
                e.eligible, e.source_ids, e.case_count, e.reason_code = False, [], 0, "seed_conflict"
                e.reason = "Prepared benchmarks use different seeds. Prepare them with one common seed."
    return rs.DatasetSelection(profile=profile, split=split, seed=next(iter(seeds)) if len(seeds) == 1 else None,
                               benchmarks=[e for e, _ in entries], model_requests=0)


def compose(service: Service, dataset_ids: list[str], benchmarks: list[str]) -> DatasetManifest:
    if len(set(benchmarks)) != len(benchmarks):
        raise InvalidInput("Compose requires distinct benchmark IDs")
    manifests = [manifest_of(service, d) for d in dict.fromkeys(dataset_ids)]
    keys = {(m.profile, m.seed, m.split) for m in manifests}
    if len(keys) > 1:
        raise InvalidInput("Composing datasets requires the same profile, seed, and split")
    if len(manifests) == 1 and sorted(manifests[0].benchmarks) == sorted(benchmarks):
        return manifests[0]
    holder: dict[str, DatasetManifest] = {}
    for b in benchmarks:
        having = [m for m in manifests if b in m.benchmarks]
        if not having:
            raise InvalidInput(f"no chosen dataset holds benchmark {b}")
        if len({_proof(m, b) for m in having}) > 1:
            raise InvalidInput(f"the chosen datasets hold different frozen versions of {b}", code="source_conflict")
        holder[b] = min(having, key=lambda m: m.id)
    cases: list[Case] = []
    for b in sorted(benchmarks):
        cases += [c for c in CASES.get(service, holder[b].object) if c.benchmark == b]
    data = encode_cases(cases)
    first, chosen = manifests[0], sorted(benchmarks)
    evaluation = {b: e for b in chosen if (e := (holder[b].evaluation or {}).get(b))}
    manifest = FrozenDataset(
        id="", name="+".join(chosen) + "/" + first.profile, sha256=hashlib.sha256(data).hexdigest(),
        object=service.objects.put_bytes(data), case_count=len(cases), profile=first.profile, seed=first.seed,
        split=first.split, benchmarks=chosen, sources={b: holder[b].sources[b] for b in chosen},
        selection={b: holder[b].selection[b] for b in chosen}, custom_subset=any(holder[b].custom_subset for b in chosen),
        notices=sorted({n for m in holder.values() for n in m.notices}), evaluation=evaluation or None)
    return register_dataset(service, manifest.model_copy(update={"id": ref_of(manifest)}))
