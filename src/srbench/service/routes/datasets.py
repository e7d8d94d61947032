"""HTTP handlers for datasets: prepare (on the service host), import (a dataset frozen by upstream), combine,
list, and upstream's detail, public case page, selection and compose (`service.dataset_views`)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from aiohttp import web

from srbench.benchmarks import get as get_benchmark
from srbench.benchmarks.acquire import acquire
from srbench.discovery import cache_home
from srbench.errors import InvalidInput, NotFound, storage_fault
from srbench.schemas.dataset import DatasetManifest
from srbench.schemas.text import shorten
from srbench.service.api import requests as rq
from srbench.service.api import responses as rs
from srbench.service.api.bindings import route
from srbench.service.api.http import MAX_OFFSET, svc
from srbench.service.datasets import views as dataset_views
from srbench.service.datasets.ids import as_named, on_wire, resolve
from srbench.service.datasets.imports import import_upstream
from srbench.service.datasets.refs import all_registered, register_dataset
from srbench.service.routes.exclusions import remember_snapshot, resolve_snapshot
from srbench.stages.datasets.build import check_evaluation, combine, prepare
from srbench.stages.datasets.source_labels import dataset_notices

if TYPE_CHECKING:
    from srbench.service.app import Service


def _prepare_sync(service: Service, req: rq.PrepareDataset) -> DatasetManifest:
    bench = get_benchmark(req.benchmark)
    profile, seed, limit, src, rev = req.profile, req.seed, req.limit, req.source_path, req.revision
    if (src is None) != (rev is None):
        raise InvalidInput("--source-path and --revision are required together (DS-7)")
    if not bench.available:
        raise InvalidInput(f"benchmark {bench.id} is not available: {bench.unavailable_reason}")
    if rev is not None and not rev.strip():
        raise InvalidInput("revision must not be blank")
    check_evaluation(bench, req.source_partition, req.evaluation_role, req.exclusion_snapshot)
    snapshot = resolve_snapshot(service, req.exclusion_snapshot)
    try:
        got = acquire(bench, mode=req.source or "auto", cache_dir=cache_home() / "sources",
                      source_path=src, revision=rev)
    except (OSError, ValueError) as exc:     # a local copy the filesystem refuses or cannot read
        if src is None or storage_fault(exc) is not None:
            raise
        raise InvalidInput(f"source_path: cannot read {shorten(src)}: {getattr(exc, 'strerror', None) or exc}"
                           ) from None
    manifest, _hit = prepare(service.engine, bench.id, str(profile), seed, limit, got.files,
                             revision=got.revision, url=bench.source.url, origin=got.origin,
                             partition=req.source_partition, role=req.evaluation_role,
                             snapshot=snapshot.object if snapshot else None, check=got.check)
    if snapshot is not None:
        remember_snapshot(service, snapshot)
    notices = list(got.notices) + dataset_notices(bench.id, got.revision, got.origin, got.check)
    if notices:
        manifest = manifest.model_copy(update={"notices": [*manifest.notices, *notices]})
    return register_dataset(service, manifest)


@route("POST", "/datasets/prepare", "Freeze a dataset from a pinned or local source", body=rq.PrepareDataset,
       answer=rs.WireDataset)
async def prepare_dataset(request: web.Request, req: rq.PrepareDataset) -> rs.WireDataset:
    return on_wire(await asyncio.to_thread(_prepare_sync, svc(request), req))


@route("POST", "/datasets/import", "Import a dataset frozen by upstream's vllm-sr, unchanged (its folder on the "
       "service host)", body=rq.ImportDataset, answer=rs.WireDataset)
async def import_dataset(request: web.Request, req: rq.ImportDataset) -> rs.WireDataset:
    return on_wire(await asyncio.to_thread(import_upstream, svc(request), req.path))


def _known_manifest(service: Service, m: rq.PrintedManifest) -> DatasetManifest:
    try:
        stored = resolve(service, m.id)
    except NotFound:
        raise NotFound(f"dataset {m.id} is not a dataset of this store") from None
    if stored.sha256 != m.sha256:
        raise InvalidInput(f"dataset {m.id}: sha256 {m.sha256} does not match the stored {stored.sha256}")
    return stored


@route("POST", "/datasets/combine", "Combine datasets of one profile, seed and split",
       body=rq.CombineDatasets, answer=rs.WireDataset)
async def combine_datasets(request: web.Request, req: rq.CombineDatasets) -> rs.WireDataset:
    service = svc(request)
    stored = [_known_manifest(service, m) for m in req.manifests]

    def run() -> rs.WireDataset:
        try:
            manifest, _ = combine(service.engine, stored)
        except InvalidInput as exc:         # name the datasets as the request did, not by their refs
            raise as_named(exc, [(given.id, m) for given, m in zip(req.manifests, stored, strict=True)]) from None
        return on_wire(register_dataset(service, manifest))
    return await asyncio.to_thread(run)


@route("GET", "/datasets", "Frozen datasets of this store", query=rq.Page, answer=rs.Datasets)
async def list_datasets(request: web.Request, q: rq.Page) -> rs.Datasets:
    offset, limit = min(q.offset, MAX_OFFSET), q.limit
    items = all_registered(svc(request))
    return rs.Datasets(datasets=[on_wire(v) for v in items[offset:offset + limit]], total=len(items))


@route("GET", "/datasets/{dataset_id}", "One dataset: coverage, categories, provenance",
       answer=rs.DatasetDetail)
async def get_dataset(request: web.Request) -> rs.DatasetDetail:
    return await asyncio.to_thread(dataset_views.detail, svc(request), request.match_info["dataset_id"])


@route("GET", "/datasets/{dataset_id}/cases", "Public case view, without reference answers",
       query=rq.CasesPage, answer=rs.Cases)
async def dataset_cases(request: web.Request, q: rq.CasesPage) -> rs.Cases:
    start = min(int(q.cursor) if q.cursor is not None else q.offset, MAX_OFFSET)
    page = await asyncio.to_thread(dataset_views.cases_page, svc(request), request.match_info["dataset_id"],
                                   start=start, limit=q.limit, benchmark=q.benchmark, category=q.category, text=q.q)
    return page


@route("GET", "/datasets/selection",
       "Per benchmark: the one prepared source a profile would use, or why none", query=rq.Selection,
       answer=rs.DatasetSelection)
async def dataset_selection(request: web.Request, q: rq.Selection) -> rs.DatasetSelection:
    return await asyncio.to_thread(dataset_views.selection, svc(request), q.profile)


@route("POST", "/datasets/compose", "One dataset from chosen benchmarks of prepared datasets",
       body=rq.ComposeDatasets, answer=rs.Composed)
async def compose_datasets(request: web.Request, req: rq.ComposeDatasets) -> rs.Composed:
    composed = await asyncio.to_thread(dataset_views.compose, svc(request), req.dataset_ids, req.benchmarks)
    return rs.Composed(dataset=on_wire(composed))
