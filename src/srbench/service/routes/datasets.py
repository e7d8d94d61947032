"""HTTP handlers for datasets: prepare (on the service host), import (a dataset frozen by upstream), combine,
list, and upstream's detail, public case page, selection and compose (`service.dataset_views`)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from aiohttp import web

from srbench.errors import InvalidInput, NotFound
from srbench.schemas.dataset import DatasetManifest
from srbench.service.api import requests as rq
from srbench.service.api import responses as rs
from srbench.service.api.bindings import route
from srbench.service.api.http import MAX_OFFSET, svc
from srbench.service.datasets import views as dataset_views
from srbench.service.datasets.ids import as_named, on_wire, resolve
from srbench.service.datasets.imports import import_upstream
from srbench.service.datasets.prepare import prepare_registered
from srbench.service.datasets.refs import all_registered, register_dataset
from srbench.stages.datasets.build import combine

if TYPE_CHECKING:
    from srbench.service.app import Service


@route("POST", "/datasets/prepare", "Freeze a dataset from a pinned or local source", body=rq.PrepareDataset,
       answer=rs.WireDataset)
async def prepare_dataset(request: web.Request, req: rq.PrepareDataset) -> rs.WireDataset:
    return on_wire(await asyncio.to_thread(prepare_registered, svc(request), req))


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
