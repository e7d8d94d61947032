"""Dataset preparation jobs (upstream's `/dataset-preparations`): prepare in the background, shared.

A job (``prep-<32 hex>``) prepares one benchmark × profile × seed (× limit, × source partition,
evaluation role and exclusion snapshot, named by its sha256) from its pinned source, as `dataset prepare` does, on the service host; its record is kept in the journal (`refs`, kind
``preparation``) and read by every client. A job for several ``benchmarks`` (upstream's newer
Dashboard) reuses each benchmark already prepared for that profile and seed, prepares the others, and
composes them into one dataset (its ``items`` say, per benchmark, what happened). The same request
while a job is active, or after one completed whose dataset is still registered, answers that job;
one job runs at a time (409 ``preparation_busy`` otherwise). Upstream's answer shape: POST answers
``202 {"preparation": job}``, GET of one job ``{"preparation": job}``. Jobs still active when the
service stops are failed on the next start ("retry explicitly"): a preparation is never resumed by itself.
A job's dataset and items name datasets by their 64-hex ids in answers (`ids`); the journal keeps refs.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from typing import TYPE_CHECKING

from srbench.benchmarks import all_benchmarks
from srbench.benchmarks import get as get_benchmark
from srbench.cas.digest import JSONValue
from srbench.errors import Conflict, SrBenchError
from srbench.schemas.dataset import PROFILES
from srbench.service.api import priority
from srbench.service.api import requests as rq
from srbench.service.api import workflow as wf
from srbench.service.datasets.jobs import PreparationJob, all_jobs, read_job, write_job
from srbench.service.datasets.prepare import prepare_registered
from srbench.service.datasets.refs import all_registered
from srbench.service.datasets.snapshots import SnapshotRef, resolve_snapshot
from srbench.service.datasets.views import compose
from srbench.service.wire.projections import iso
from srbench.stages.datasets.build import check_evaluation
from srbench.stages.datasets.exclusions import ROLES

if TYPE_CHECKING:
    from srbench.service.app import Service
    from srbench.service.journal.writer import Journal

log = logging.getLogger("srbench.service")


def fail_interrupted(journal: Journal) -> int:
    """At start-up: jobs a stopped service left active are failed (never resumed)."""
    n = 0
    for job in all_jobs(journal):
        if job.active:
            write_job(journal, job.model_copy(update={
                "status": "failed", "phase": "failed", "updated_at": iso(time.time()),
                "error": "Service restarted before preparation completed. Retry explicitly."}))
            n += 1
    return n


def _update(journal: Journal, job_id: str, **changes: object) -> None:
    """Store the job with these changes (and the time of them)."""
    job = read_job(journal, job_id)
    assert job is not None, f"preparation job {job_id} vanished"
    write_job(journal, job.model_copy(update={**changes, "updated_at": iso(time.time())}))


def options() -> wf.PreparationOptions:
    """What the preparation form offers: every benchmark, its profiles, source and access terms."""
    return wf.PreparationOptions(benchmarks=[wf.PreparableBenchmark(
        id=b.id, name=b.title, profiles={p: b.profiles.get(p) for p in PROFILES},
        source_url=b.source.url, revision=b.source.revision, available=b.available,
        unavailable_reason=None if b.available else b.unavailable_reason,
        access_note=("Downloads the pinned source revision (or reads the offline mirror). Source access and "
                     "license terms apply; set HF_TOKEN on the service for gated sources." if b.source.gated else
                     "Downloads the pinned source revision (or reads the offline mirror)."),
        dependencies=[], source_partition=b.source_partition,
        evaluation_roles=list(ROLES)) for b in all_benchmarks()])


def _still_there(journal: Journal, job: PreparationJob) -> bool:
    return job.status == "completed" and journal.get_ref("dataset", job.dataset.id if job.dataset else "") is not None


async def _work(service: Service, job_id: str, req: rq.PrepareJob, snapshot: str | None) -> None:
    journal = service.journal
    try:
        await asyncio.to_thread(_update, journal, job_id, status="running", phase="downloading")
        manifest = await asyncio.to_thread(prepare_registered, service, rq.PrepareDataset(
            benchmark=str(req.benchmark), profile=req.profile, seed=req.seed, limit=req.limit, source=req.source,
            source_partition=req.source_partition, evaluation_role=req.evaluation_role,
            exclusion_snapshot=snapshot))
        await asyncio.to_thread(_update, journal, job_id, status="completed", phase="completed", dataset=manifest)
    except Exception as exc:  # noqa: BLE001 - a job ends failed with a readable reason, whatever went wrong
        await _failed(journal, job_id, exc)


def _reusable(service: Service, benchmark: str, profile: str, seed: int) -> str | None:
    """A dataset already prepared for this benchmark, profile and seed (the plain cut), or None."""
    found = [m.id for m in all_registered(service) if m.profile == profile and m.seed == seed
             and m.benchmarks == [benchmark] and not m.custom_subset and not m.evaluation]
    return min(found) if found else None


async def _work_many(service: Service, job_id: str, req: rq.PrepareJob) -> None:
    """Each benchmark reused or prepared, in order, then one composed dataset."""
    journal = service.journal
    benchmarks = list(req.benchmarks or [])
    items = _queued(benchmarks)
    try:
        for item in items:
            item.status, item.phase = "running", "downloading"
            await asyncio.to_thread(_update, journal, job_id, status="running", phase="downloading", items=items)
            found = await asyncio.to_thread(_reusable, service, item.benchmark, req.profile, req.seed)
            item.reused = found is not None
            if found is None:
                manifest = await asyncio.to_thread(prepare_registered, service, rq.PrepareDataset(
                    benchmark=item.benchmark, profile=req.profile, seed=req.seed, source=req.source))
                found = manifest.id
            item.status, item.phase, item.source_ids = "completed", "completed", [found]
        await asyncio.to_thread(_update, journal, job_id, phase="composing", items=items)
        ids = [i.source_ids[0] for i in items]
        dataset = await asyncio.to_thread(compose, service, ids, benchmarks)
        await asyncio.to_thread(_update, journal, job_id, status="completed", phase="completed", items=items,
                                dataset=dataset)
    except Exception as exc:  # noqa: BLE001 - a job ends failed with a readable reason, whatever went wrong
        await _failed(journal, job_id, exc, items)


def _queued(benchmarks: list[str]) -> list[wf.PreparationItem]:
    return [wf.PreparationItem(benchmark=b, status="queued", phase="queued", reused=False, source_ids=[])
            for b in benchmarks]


async def _failed(journal: Journal, job_id: str, exc: Exception, items: list[wf.PreparationItem] | None = None
                  ) -> None:
    message = exc.message if isinstance(exc, SrBenchError) else "Dataset preparation failed; see the service log."
    if not isinstance(exc, SrBenchError):
        log.exception("preparation %s failed", job_id)
    for item in items or []:
        if item.status == "running":
            item.status, item.phase = "failed", "failed"
    try:
        await asyncio.to_thread(_update, journal, job_id, status="failed", phase="failed", error=message,
                                **({"items": items} if items is not None else {}))
    except Exception:  # noqa: BLE001 - the journal is closing: the next start fails the job
        pass


def _wanted(req: rq.PrepareJob, snapshot: SnapshotRef | None) -> dict[str, JSONValue]:
    """The job's request as stored (what deduplicates it)."""
    first: dict[str, JSONValue] = {"benchmarks": list(req.benchmarks)} if req.benchmarks is not None else {"benchmark": req.benchmark}
    return {**first, "profile": req.profile, "seed": req.seed,
            **({"limit": req.limit} if req.limit is not None else {}),
            **({"source": req.source} if req.source is not None else {}),
            **({"source_partition": req.source_partition} if req.source_partition is not None else {}),
            **({"evaluation_role": req.evaluation_role} if req.evaluation_role is not None else {}),
            **({"exclusion_snapshot": snapshot.sha256} if snapshot is not None else {})}


async def submit(service: Service, req: rq.PrepareJob, owner: str | None) -> wf.PreparationAnswer:
    """A preparation job for `req`: an equal one still running or whose dataset is still there, else a new
    one started in the background (Conflict while another job is active)."""
    snapshot = None
    if req.benchmarks is not None:
        req = req.model_copy(update={"benchmarks": [get_benchmark(b).id for b in req.benchmarks]})
    else:
        bench = get_benchmark(str(req.benchmark))
        req = req.model_copy(update={"benchmark": bench.id})
        check_evaluation(bench, req.source_partition, req.evaluation_role, req.exclusion_snapshot)
        snapshot = await asyncio.to_thread(resolve_snapshot, service, req.exclusion_snapshot)
    wanted = _wanted(req, snapshot)
    jobs = all_jobs(service.journal)
    for job in jobs:
        if job.request == wanted and (job.active or _still_there(service.journal, job)):
            return wf.PreparationAnswer(preparation=job.answer(service))
    if any(job.active for job in jobs):
        raise Conflict("Another dataset is being prepared; wait for it to finish", code="preparation_busy")
    now = iso(time.time())
    new = PreparationJob.model_validate({
        "id": "prep-" + uuid.uuid4().hex, **wanted, "request": wanted, "status": "queued", "phase": "queued",
        "created_at": now, "updated_at": now, "owner": owner,
        **({"items": _queued(req.benchmarks)} if req.benchmarks is not None else {})})
    await asyncio.to_thread(write_job, service.journal, new)
    tasks = service.preparing
    work = (_work_many(service, new.id, req) if req.benchmarks is not None
            else _work(service, new.id, req, snapshot.object if snapshot else None))
    jid = new.id
    tasks[jid] = asyncio.get_running_loop().create_task(work, context=priority.background())   # not served first
    tasks[jid].add_done_callback(lambda _t: tasks.pop(jid, None))
    return wf.PreparationAnswer(preparation=new.answer(service))
