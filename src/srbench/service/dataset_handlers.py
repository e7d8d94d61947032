"""HTTP handlers for datasets: prepare (on the service host), combine, list, show, public case view."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from srbench.benchmarks import get as get_benchmark
from srbench.benchmarks.acquire import acquire
from srbench.errors import InvalidInput, NotFound, storage_fault
from srbench.schemas.text import shorten
from srbench.service import api_requests as rq
from srbench.service.dataset_refs import register_dataset
from srbench.service.discovery import cache_home
from srbench.service.http import MAX_OFFSET, ok, parse, query, svc
from srbench.stages.datasets import combine, decode_cases, prepare


def _prepare_sync(service: Any, req: rq.PrepareDataset) -> dict[str, Any]:
    bench = get_benchmark(req.benchmark)
    profile, seed, limit, src, rev = req.profile, req.seed, req.limit, req.source_path, req.revision
    if (src is None) != (rev is None):
        raise InvalidInput("--source-path and --revision are required together (DS-7)")
    if not bench.available:
        raise InvalidInput(f"benchmark {bench.id} is not available: {bench.unavailable_reason}")
    if rev is not None and not rev.strip():
        raise InvalidInput("revision must not be blank")
    try:
        got = acquire(bench, mode=req.source or "auto", cache_dir=cache_home() / "sources",
                      source_path=src, revision=rev)
    except (OSError, ValueError) as exc:     # a local copy the filesystem refuses or cannot read
        if src is None or storage_fault(exc) is not None:
            raise
        raise InvalidInput(f"source_path: cannot read {shorten(src)}: {getattr(exc, 'strerror', None) or exc}"
                           ) from None
    manifest, _hit = prepare(service.engine, bench.id, str(profile), seed, limit, got.files,
                             revision=got.revision, url=bench.source.url, origin=got.origin)
    notices = list(got.notices)
    if got.revision != bench.source.revision:
        what = "imported" if got.origin == "local-import" else "source"
        notices.append(f"{what} revision {got.revision} is not the pinned revision {bench.source.revision}")
    if notices:
        manifest = dict(manifest)
        manifest["notices"] = [*manifest["notices"], *notices]
    return register_dataset(service, manifest)


async def prepare_dataset(request: web.Request) -> web.Response:
    req = await parse(request, rq.PrepareDataset)
    return ok(await asyncio.to_thread(_prepare_sync, svc(request), req))


def _known_manifest(service: Any, m: rq.PrintedManifest) -> dict[str, Any]:
    stored = service.journal.get_ref("dataset", m.id)
    if stored is None:
        raise NotFound(f"dataset {m.id} is not a dataset of this store")
    if stored["sha256"] != m.sha256:
        raise InvalidInput(f"dataset {m.id}: sha256 {m.sha256} does not match the stored {stored['sha256']}")
    return stored


async def combine_datasets(request: web.Request) -> web.Response:
    req = await parse(request, rq.CombineDatasets)
    service = svc(request)
    stored = [_known_manifest(service, m) for m in req.manifests]

    def run() -> dict[str, Any]:
        manifest, _ = combine(service.engine, stored)
        return register_dataset(service, manifest)
    return ok(await asyncio.to_thread(run))


async def list_datasets(request: web.Request) -> web.Response:
    q = query(request, rq.Page)
    offset, limit = min(q.offset, MAX_OFFSET), q.limit
    items = [v for _, v in svc(request).journal.list_refs("dataset")]
    return ok({"datasets": items[offset:offset + limit], "total": len(items)})


async def get_dataset(request: web.Request) -> web.Response:
    m = svc(request).journal.get_ref("dataset", request.match_info["dataset_id"])
    if m is None:
        raise NotFound(f"no dataset {request.match_info['dataset_id']!r}")
    return ok(m)


async def dataset_cases(request: web.Request) -> web.Response:
    service = svc(request)
    m = service.journal.get_ref("dataset", request.match_info["dataset_id"])
    if m is None:
        raise NotFound(f"no dataset {request.match_info['dataset_id']!r}")
    q = query(request, rq.CasesPage)
    offset, limit = min(q.offset, MAX_OFFSET), q.limit
    cases = decode_cases(await asyncio.to_thread(service.objects.get_bytes, m["object"]))
    bench = q.benchmark
    text = (q.q or "").lower()
    chosen = [c for c in cases if (not bench or c.benchmark == bench)
              and (not text or text in c.messages[-1].content.lower())]
    view = [{"id": c.id, "benchmark": c.benchmark, "messages": [x.model_dump() for x in c.messages],
             "metadata": {"stratum": c.metadata.stratum, "split": c.metadata.split}}
            for c in chosen[offset:offset + limit]]
    return ok({"cases": view, "total": len(chosen), "offset": offset})
