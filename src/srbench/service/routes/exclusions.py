"""Exclusion snapshots on the service: `POST /datasets/exclusions` compiles one from named datasets and
runs (stored as an object, registered by its sha256), and a preparation names one inline or by digest.

Datasets are shared; a run is named only by an actor that may see it (another owner's run is a 404),
and the read role cannot compile (the access middleware refuses its POST). A snapshot that fails a
bound, names a dataset without task identities, or a run the store cannot resolve is refused before
anything is stored.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from aiohttp import web

from srbench.errors import InvalidInput
from srbench.schemas.dataset import DatasetManifest
from srbench.schemas.plan import Plan
from srbench.service.api import exclusions as ex
from srbench.service.api.actors import Actor, actor_of, check_visible
from srbench.service.api.bindings import route
from srbench.service.api.exclusions import CompileExclusions
from srbench.service.api.http import svc
from srbench.service.datasets.ids import as_named, wire_id
from srbench.service.datasets.refs import find_datasets
from srbench.service.datasets.snapshots import store_snapshot
from srbench.service.datasets.views import manifest_of
from srbench.stages.datasets.exclusions import (
    NamedRun,
    Snapshot,
    compile_snapshot,
    no_identity,
)

if TYPE_CHECKING:
    from srbench.service.app import Service

def _run_dataset(service: Service, run_id: str, plan: Plan) -> DatasetManifest:
    ref = plan.dataset
    found = find_datasets(service, ref.sha256)
    found.sort(key=lambda m: m.id != ref.id)
    if not found:
        raise InvalidInput(f"run {run_id}: its dataset {ref.sha256[:16]} is not a dataset of this store, so its "
                           "source provenance is unknown; pull or prepare it first", code="dataset_unknown")
    with_identity = [m for m in found if all(_partitioned(m, b) for b in m.benchmarks)]
    if not with_identity:
        m = found[0]
        missing = next(b for b in m.benchmarks if not _partitioned(m, b))
        raise no_identity(f"run {run_id}'s dataset {wire_id(m)} ({m.name})", missing)
    return with_identity[0]


def _partitioned(m: DatasetManifest, benchmark: str) -> bool:
    source = m.sources.get(benchmark)
    return bool(source and source.partition)


def compile_named(service: Service, actor: Actor, dataset_ids: list[str], run_ids: list[str]) -> Snapshot:
    named = [(d, manifest_of(service, d)) for d in dict.fromkeys(dataset_ids)]
    datasets = [m for _, m in named]
    runs = []
    for run_id in dict.fromkeys(run_ids):
        check_visible(service.journal, actor, run_id)
        plan = service.runs.plans.get(service.runs.get(run_id).plan)
        assert plan.plan_sha256 is not None, f"run {run_id}'s stored plan names its sha256"
        runs.append(NamedRun(id=run_id, plan_sha256=plan.plan_sha256, dataset_sha256=plan.dataset.sha256,
                             dataset_object=plan.dataset.object, manifest=_run_dataset(service, run_id, plan),
                             case_ids=frozenset(c[0] for c in plan.execution_cells) if plan.execution_cells else None))
    try:
        snapshot = compile_snapshot(service.objects, datasets, runs)   # it records each dataset's ref
    except InvalidInput as exc:
        raise as_named(exc, named) from None
    store_snapshot(service, snapshot)
    return snapshot


@route("POST", "/datasets/exclusions",
       "An exclusion snapshot of named datasets and runs (task identities and digests only; stored)",
       body=ex.CompileExclusions, answer=ex.Snapshot)
async def compile_exclusions(request: web.Request, req: CompileExclusions) -> ex.Snapshot:
    service, actor = svc(request), actor_of(request)
    return await asyncio.to_thread(compile_named, service, actor, req.dataset_ids, req.run_ids)
