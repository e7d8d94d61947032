"""Freeze a dataset on the service host and register it (`POST /datasets/prepare`, and each benchmark of a
preparation job: `service.datasets.preparations`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from srbench.benchmarks import get as get_benchmark
from srbench.benchmarks.acquire import acquire
from srbench.discovery import cache_home
from srbench.errors import InvalidInput, storage_fault
from srbench.schemas.dataset import DatasetManifest
from srbench.schemas.text import shorten
from srbench.service.api import requests as rq
from srbench.service.datasets.refs import register_dataset
from srbench.service.datasets.snapshots import remember_snapshot, resolve_snapshot
from srbench.stages.datasets.build import check_evaluation, prepare
from srbench.stages.datasets.source_labels import dataset_notices

if TYPE_CHECKING:
    from srbench.service.app import Service


def prepare_registered(service: Service, req: rq.PrepareDataset) -> DatasetManifest:
    """The dataset `req` asks for, frozen from its source (pinned, mirrored or local) and registered."""
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
