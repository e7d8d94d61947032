"""Team workflows over one shared object store (DC-5): shared dataset names, run push and pull.

- A store whose objects live on a team object store (``SR_BENCH_OBJECTS_URL``: S3 or S3-compatible,
  GCS, Azure, SSH, an NFS path — any fsspec URL) publishes each dataset it registers under the
  names ``datasets/<id>`` and ``datasets-sha256/<sha256>/<id>``, so a colleague's service (its own
  journal, the same objects) plans a manifest naming that sha256 to the same plan digest.
- `push` copies every object a finished run reaches to a remote object store (a no-op when that is
  the store's own), writes the run bundle (its journal rows, `schemas.bundle`) and binds the name
  ``runs/<run id>`` to it once (create-if-absent). Pushing again is a no-op; a different bundle
  under a bound name is refused.
- `pull` reads that name, checks the bundle and every object against its digest on arrival, and
  imports the rows into this store's journal in one transaction. Nothing is imported when any
  check fails. Pulling again is a no-op.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import aiohttp
from pydantic import ValidationError

from srbench import TERMINAL_STATUSES
from srbench.cas import ObjectStore
from srbench.cas.remote import open_filesystem
from srbench.errors import (
    Conflict,
    IntegrityError,
    InvalidInput,
    NotFound,
    SourceUnavailable,
    hide_credentials,
)
from srbench.schemas.bundle import CALL_COLUMNS, CELL_COLUMNS, RUN_COLUMNS, RunBundle
from srbench.schemas.dataset import FrozenDataset
from srbench.service.datasets.refs import publish_dataset, register_dataset
from srbench.service.journal import runs as jruns
from srbench.service.journal.bundles import (
    bundled_events,
    call_columns,
    cell_columns,
    import_rows,
    run_columns,
)
from srbench.service.journal.cell_rows import CallRow, CellRow
from srbench.service.journal.runs import RunRow
from srbench.service.store.references import digests_in, reach
from srbench.service.team.answers import Pulled, Pushed
from srbench.service.team.reach import cannot_reach, unreachable

if TYPE_CHECKING:
    from srbench.service.app import Service

CORRECTION_KINDS = ("correction", "price-correction")
COPY_THREADS = 8
FINISHING_WAIT_S = 30.0


def open_remote(url: Any, *, create: bool) -> ObjectStore:
    """An object store at `url` (an absolute path or a URL with a protocol; `create` only for a
    push), or one clear line saying why it cannot be used."""
    if not isinstance(url, str) or not url.strip() or len(url) > 2048 or "\x00" in url:
        raise InvalidInput("remote must be an object-store URL (e.g. s3://bucket/prefix) of at most 2048 characters")
    url = url.strip()
    if "://" not in url and not url.startswith("/"):
        raise InvalidInput("remote must be a URL with a protocol (s3://bucket/prefix, file:///path …) or an "
                           "absolute path, never a path relative to the service")
    local = url.startswith("/") or url.lower().startswith("file://")
    if local and not (url.startswith("/") or url.lower().startswith("file:///")):
        raise InvalidInput("a file:// remote needs an absolute path (file:///path): file://x would be relative "
                           "to the service's working folder")
    try:
        fs, root = open_filesystem(url)
        if not root.strip("/"):
            raise InvalidInput("remote must name a bucket or folder below the root (e.g. s3://bucket/prefix)")
        why = unreachable(url, fs)
        if why is not None:
            raise SourceUnavailable(cannot_reach(url, why))
        return ObjectStore(url, create=create)
    except (ImportError, ValueError) as exc:
        raise InvalidInput(hide_credentials(f"cannot use the remote object store: {str(exc).splitlines()[0][:200]}")
                           ) from None
    except OSError as exc:
        raise SourceUnavailable(hide_credentials(f"cannot reach the remote object store: {type(exc).__name__}: "
                                                 f"{str(exc).splitlines()[0][:200] if str(exc) else ''}")) from None
    except NotFound:
        raise NotFound(f"no object store at {hide_credentials(url)}: check the remote URL (push a run there "
                       "first)") from None


@contextmanager
def remote_failures() -> Iterator[None]:
    """A remote that fails once opened (a refused connection, an HTTP error, a permission lost mid-way) is one
    line naming it (424), never the service's 500: push and pull are idempotent, so the fix is to run again."""
    try:
        yield
    except (OSError, aiohttp.ClientError) as exc:
        first = hide_credentials(str(exc).splitlines()[0][:200] if str(exc) else "")
        raise SourceUnavailable(f"the remote object store failed: {type(exc).__name__}: {first}; nothing was "
                                "imported or bound: run the command again once it answers") from None


def remote_for(service: Service, url: Any, *, create: bool) -> ObjectStore:
    """The remote a push/pull names, else the store's own objects when they are shared."""
    if url is not None:
        return open_remote(url, create=create)
    if service.objects_shared:
        return service.objects
    raise InvalidInput("this store's objects are private to it: name a team object store with --remote URL "
                       "(or run the service with SR_BENCH_OBJECTS_URL set to it)")


# -- shared dataset names -------------------------------------------------------------------------
# -- push ----------------------------------------------------------------------------------------
def _closure(objects: ObjectStore, roots: set[str]) -> list[str]:
    """Every digest reachable from `roots` through the JSON objects of `objects`, each read verified."""
    def missing(digest: str) -> None:
        raise IntegrityError(f"object {digest} that the run names is not in this store; run "
                             "`sr-bench store verify`")
    return sorted(reach(objects, sorted(roots), set(), verify=True, missing=missing))


def make_bundle(service: Service, run_id: str) -> RunBundle:
    journal = service.journal
    first = run_columns(journal, run_id)
    if first is None:
        raise NotFound(f"no run {run_id!r}")
    if first["status"] not in TERMINAL_STATUSES:
        raise Conflict(f"run {run_id} is {first['status']}: push it once it has ended", code="run_active")
    deadline = time.monotonic() + FINISHING_WAIT_S
    while run_id in service.runs.tasks:          # terminal, and recording its final report
        if time.monotonic() > deadline:
            raise Conflict(f"run {run_id} is still recording its final report: push it in a moment",
                           code="run_active")
        time.sleep(0.05)
    got = run_columns(journal, run_id)
    if got is None:
        raise NotFound(f"no run {run_id!r}")
    run = got
    run["idem_key"] = None                      # a key binds submissions to one store, not across hosts
    extra = json.loads(str(run["extra"] or "{}"))
    extra.pop("pulled", None)
    run["extra"] = json.dumps(extra, sort_keys=True)
    cells, calls, events = cell_columns(journal, run_id), call_columns(journal, run_id), bundled_events(journal, run_id)
    b = jruns.budget(journal, run_id)
    budget = None if b is None else b._asdict()
    corrections = {k: v for k in CORRECTION_KINDS if (v := journal.get_ref(k, run_id))}
    plan = service.objects.get_json(str(run["plan"]), verify=True)
    datasets = []
    ds_id = plan["dataset"].get("id")
    manifest = journal.get_ref("dataset", ds_id) if ds_id else None
    if manifest is not None:
        datasets.append({k: v for k, v in manifest.items() if k != "path"})
    roots = {d for d, _ in digests_in({"run": run, "extra": extra, "cells": cells, "calls": calls,
                                       "corrections": corrections, "datasets": datasets})}
    return RunBundle.model_validate({"run": run, "cells": cells, "calls": calls, "events": events, "budget": budget,
                                     "corrections": corrections, "datasets": datasets,
                                     "objects": _closure(service.objects, roots)})


def _copy(source: ObjectStore, dest: ObjectStore, digests: list[str]) -> int:
    """Copy what `dest` lacks, each object checked against its digest as it is read. Returns the count."""
    def one(digest: str) -> int:
        if dest.has(digest):
            return 0
        try:
            data = source.get_bytes(digest, verify=True)
        except IntegrityError:
            raise IntegrityError(f"object {digest} does not match its digest at the source; nothing more was "
                                 "copied") from None
        except NotFound:
            raise IntegrityError(f"object {digest} is missing at the source") from None
        dest.put_bytes(data)
        return 1
    if source is dest or source.url == dest.url:
        return 0
    with ThreadPoolExecutor(COPY_THREADS) as pool:
        return sum(pool.map(one, digests))


@remote_failures()
def push(service: Service, run_id: str, remote_url: Any) -> Pushed:
    bundle = make_bundle(service, run_id)          # an unknown or unfinished run touches no remote
    remote = remote_for(service, remote_url, create=True)
    copied = _copy(service.objects, remote, bundle.objects)
    for manifest in bundle.datasets:
        publish_dataset(remote, FrozenDataset.model_validate(manifest))
    data = bundle.model_dump(mode="json", by_alias=True)
    if not data["calls"]:
        del data["calls"]                          # a run of single calls keeps the bundle it always had
    digest = remote.put_json(data)
    bound = remote.claim_name(f"runs/{run_id}", digest)
    if bound != digest:
        raise Conflict(f"run {run_id} was pushed before with other rows (bundle {bound}; this store's run now "
                       f"gives {digest}, e.g. after a correction): the pushed run is kept unchanged",
                       code="bundle_conflict")
    return Pushed(run_id=run_id, bundle=digest, objects=len(bundle.objects), copied=copied, cells=len(bundle.cells),
                  model_requests=0)


# -- pull ----------------------------------------------------------------------------------------
@remote_failures()
def pull(service: Service, run_id: str, remote_url: Any) -> Pulled:
    if not isinstance(run_id, str) or not run_id.startswith("run-") or len(run_id) > 64:
        raise InvalidInput("run id must look like run-<hex>")
    remote = remote_for(service, remote_url, create=False)
    digest = remote.read_name(f"runs/{run_id}")
    if digest is None:
        raise NotFound(f"run {run_id} was not pushed to that object store")
    try:
        raw = remote.get_bytes(digest, verify=True)
        bundle = RunBundle.model_validate_json(raw)
    except IntegrityError:
        raise IntegrityError(f"pull refused: the bundle of {run_id} does not match its digest {digest}; nothing "
                             "was imported") from None
    except NotFound:
        raise IntegrityError(f"pull refused: the bundle {digest} of {run_id} is missing; nothing was imported") from None
    except ValidationError as exc:
        raise IntegrityError(f"pull refused: {digest} is not a run bundle ({exc.error_count()} problems)") from None
    if bundle.run.get("id") != run_id or any(set(c) != set(CELL_COLUMNS) for c in bundle.cells) \
            or any(set(c) != set(CALL_COLUMNS) for c in bundle.calls) or set(bundle.run) != set(RUN_COLUMNS):
        raise IntegrityError(f"pull refused: the bundle {digest} does not hold the rows of {run_id}")
    try:        # the journal's row models (closed sets: a run's status, a cell's and a call's state)
        RunRow.model_validate(bundle.run)
        for cell in bundle.cells:
            CellRow.model_validate({"run_id": run_id, **cell})
        for call in bundle.calls:
            CallRow.model_validate({"run_id": run_id, **call})
    except ValidationError as exc:
        raise IntegrityError(f"pull refused: the bundle {digest} holds rows the journal cannot take "
                             f"({exc.error_count()} problems); nothing was imported") from None
    existing = jruns.run_row(service.journal, run_id)
    if existing is not None:
        pulled = existing.extras().pulled
        if pulled is not None and pulled.bundle == digest:
            return Pulled(run_id=run_id, bundle=digest, imported=False, copied=0, model_requests=0)
        raise Conflict(f"run {run_id} already exists in this store (not from bundle {digest}); nothing was "
                       "imported", code="run_exists")
    try:
        copied = _copy(remote, service.objects, bundle.objects)
    except IntegrityError as exc:
        raise IntegrityError(f"pull refused: {exc.message}; nothing was imported") from None
    reached = set(_closure(service.objects, {d for d, _ in digests_in(
        {"run": bundle.run, "cells": bundle.cells, "calls": bundle.calls, "corrections": bundle.corrections,
         "datasets": bundle.datasets})}))
    if not reached <= set(bundle.objects):
        raise IntegrityError(f"pull refused: the bundle {digest} does not list every object its rows name")
    kept = service.objects.put_bytes(raw)      # the bundle the run row names (pulled.bundle): a local object too
    assert kept == digest                      # raw was read with verify=True: it hashes to its name
    imported = _import(service, bundle, digest)
    for manifest in bundle.datasets:
        register_dataset(service, FrozenDataset.model_validate(manifest))
    return Pulled(run_id=run_id, bundle=digest, imported=imported, copied=copied, cells=len(bundle.cells),
                  model_requests=0)


def _import(service: Service, bundle: RunBundle, digest: str) -> bool:
    run = dict(bundle.run)
    extra = json.loads(str(run["extra"] or "{}"))
    extra["pulled"] = {"bundle": digest}
    run["extra"] = json.dumps(extra, sort_keys=True)
    corrections = {k: h for k, h in bundle.corrections.items() if k in CORRECTION_KINDS}

    def w(c: sqlite3.Connection) -> bool:
        return import_rows(c, run, bundle.cells, bundle.calls, bundle.events, bundle.budget, corrections, digest)
    return bool(service.journal.submit_sync(w))
