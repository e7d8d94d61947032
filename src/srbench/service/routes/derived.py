"""HTTP handlers for derived results of finished runs: compare, regrade, export, replay, reconcile,
recover, reprice — bare documents in upstream's shape (`service.wire`), run ids in bodies scoped to
the caller (`service.actors`)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, TypeVar

from aiohttp import web
from pydantic import BaseModel

from srbench.errors import InvalidInput, StorageFull
from srbench.service.api import requests as rq
from srbench.service.api import responses as rs
from srbench.service.api import workflow as wf
from srbench.service.api.actors import actor_of, check_visible
from srbench.service.api.bindings import Status, route
from srbench.service.api.http import svc
from srbench.service.journal.cells import cell_id
from srbench.service.runs import corrections, recovery
from srbench.service.runs.replays import create_replay
from srbench.service.wire import projections as wire
from srbench.service.wire import upstream
from srbench.stages.derived import rules as derived
from srbench.stages.derived.diagnose import diagnosis
from srbench.stages.derived.robustness import robustness

if TYPE_CHECKING:
    from srbench.service.app import Service


_Answer = TypeVar("_Answer", bound=BaseModel)


def _rule_answer(service: Service, model: type[_Answer], digest: str, hit: bool, why: Any) -> _Answer:
    """A derived rule's stored output as its route answers it: the object, its digest and how it was had."""
    return model.model_validate({**service.objects.get_json(digest), "digest": digest, "cache_hit": hit,
                                 "explain": why})


@route("POST", "/comparisons", "Paired comparison of a baseline and a candidate run", body=rq.MakeComparison,
       answer=rs.Comparison)
async def make_comparison(request: web.Request, req: rq.MakeComparison) -> rs.Comparison:
    b, c, margin = req.baseline_run_id, req.candidate_run_id, req.margin
    service, actor = svc(request), actor_of(request)
    for run_id in (b, c):
        check_visible(service.journal, actor, run_id)

    def run() -> rs.Comparison:
        bdig, cdig = service.runs.report_digest(b)[0], service.runs.report_digest(c)[0]
        brep, crep = service.objects.get_json(bdig), service.objects.get_json(cdig)
        digest, hit, why = derived.compare(service.engine, bdig, cdig, margin, subject=f"{b}..{c}")
        figures = (service.figures.of(bdig, brep), service.figures.of(cdig, crep))
        return rs.Comparison.model_validate(wire.wire_comparison(service.objects.get_json(digest), brep, crep,
                                                                 digest, hit, why, figures))
    return await asyncio.to_thread(run)


@route("GET", "/runs/{run_id}/diagnose", "Routing diagnostics of a run's routers against a baseline run's singles",
       query=rq.DiagnoseQuery, answer=wf.Diagnosed)
async def diagnose_run(request: web.Request, q: rq.DiagnoseQuery) -> wf.Diagnosed:
    service, actor = svc(request), actor_of(request)
    c = request.match_info["run_id"]
    b = q.baseline or c
    for run_id in (b, c):
        check_visible(service.journal, actor, run_id)

    def go() -> wf.Diagnosed:
        bdig, cdig = service.runs.report_digest(b)[0], service.runs.report_digest(c)[0]
        digest, hit, why = diagnosis(service.engine, bdig, cdig, subject=f"{b}..{c}")
        return _rule_answer(service, wf.Diagnosed, digest, hit, why)
    return await asyncio.to_thread(go)


@route("GET", "/runs/{run_id}/robustness", "A preview run's routers' decision flip rate under perturbed previews",
       query=rq.RobustnessQuery, answer=wf.RobustnessMeasured)
async def robustness_run(request: web.Request, q: rq.RobustnessQuery) -> wf.RobustnessMeasured:
    service, actor = svc(request), actor_of(request)
    original = request.match_info["run_id"]
    perturbed = [p.strip() for p in q.perturbed.split(",") if p.strip()]
    for run_id in (original, *perturbed):
        check_visible(service.journal, actor, run_id)

    def go() -> wf.RobustnessMeasured:
        digests = [service.runs.report_digest(r)[0] for r in (original, *perturbed)]
        digest, hit, why = robustness(service.engine, digests[0], digests[1:], subject=f"{original}~robustness")
        return _rule_answer(service, wf.RobustnessMeasured, digest, hit, why)
    return await asyncio.to_thread(go)


@route("POST", "/runs/{run_id}/regrade", "Offline regrade of saved MCQ/grid answers", answer=wf.Regraded)
async def regrade_run(request: web.Request) -> wf.Regraded:
    service = svc(request)
    run_id = request.match_info["run_id"]

    def go() -> wf.Regraded:
        run = service.runs.get(run_id)
        original = service.runs.final_report(run_id)
        digest, hit, why = derived.regrade(service.engine, run, original)
        return _rule_answer(service, wf.Regraded, digest, hit, why)
    return await asyncio.to_thread(go)


@route("POST", "/runs/{run_id}/export", "Dev-only training matrix of a completed run", answer=wf.Exported)
async def export_run(request: web.Request) -> wf.Exported:
    service = svc(request)
    run_id = request.match_info["run_id"]

    def go() -> wf.Exported:
        run = service.runs.get(run_id)
        digest, hit, why = derived.export(service.engine, run, service.runs.report_digest(run_id)[0])
        return _rule_answer(service, wf.Exported, digest, hit, why)
    return await asyncio.to_thread(go)


@route("POST", "/replays", "Replay saved single-model answers along previewed routes", body=rq.MakeReplay,
       answer=rs.ReplayCreated, created=True)
async def make_replay(request: web.Request, req: rq.MakeReplay) -> Status:
    b, p = req.baseline_run_id, req.preview_run_id
    service, actor = svc(request), actor_of(request)
    for run_id in (b, p):
        check_visible(service.journal, actor, run_id)
    run, created = await asyncio.to_thread(create_replay, service.runs, b, p, actor.owner)
    return Status(rs.extend(service.views.one(run), rs.ReplayCreated, created=created, model_requests=0),
                  201 if created else 200)


@route("POST", "/runs/{run_id}/reconcile-usage", "Append a usage correction from retained SSE",
       body=rq.ReconcileUsage, answer=wf.Reconciled, optional=True)
async def reconcile_usage(request: web.Request, req: rq.ReconcileUsage) -> wf.Reconciled:
    service = svc(request)
    routers = req.routers
    body_, hit, why, appended = await asyncio.to_thread(corrections.reconcile, service.runs,
                                                        request.match_info["run_id"], routers)
    return wf.Reconciled.model_validate({**wire.wire_correction(body_), "cache_hit": hit, "explain": why,
                                         "appended": appended, "model_requests": 0})


async def _settled(service: Service, run_id: str) -> None:
    """The run's end recorded before its cells are read: right after a full disk has space again, the
    end that waits for its retry is written now (its in-flight cells turn ambiguous), so a recovery plan
    made now is still the plan `recover` finds; if the store still refuses it, a named 507."""
    if not await service.runs.endings.settle(run_id):
        raise StorageFull(f"run {run_id} has ended but the store cannot record its end yet (it is full or "
                          "failing); free space and retry: a recovery plan made before would change once it is")


@route("POST", "/runs/{run_id}/recover-plan", "Review which cells a recovery may continue",
       body=rq.RecoverPlan, answer=wf.RecoveryPlan, optional=True)
async def recover_plan(request: web.Request, req: rq.RecoverPlan) -> wf.RecoveryPlan:
    mode = req.mode
    service, run_id = svc(request), request.match_info["run_id"]
    await _settled(service, run_id)

    def go() -> wf.RecoveryPlan:
        plan = recovery.recovery_plan(service.runs, run_id, mode).model_dump(mode="json")
        parent = service.runs.get(run_id)
        return wf.RecoveryPlan.model_validate(wire.wire_recovery_plan(
            plan, parent.progress, None if parent.budget is None else parent.budget.cap_usd))
    return await asyncio.to_thread(go)


def _submitted_recovery(service: Service, run_id: str, req: rq.RecoverRun) -> Any:
    """sr-bench's whole reviewed plan, or upstream's (mode, plan_sha256, cells) as that plan."""
    if req.plan is not None:
        return req.plan
    if req.cells == []:
        raise recovery.no_cells()
    if req.mode is None or req.plan_sha256 is None or not req.cells:
        raise InvalidInput("recover needs the reviewed recovery plan: mode, plan_sha256 and cells (or plan)",
                           code="recovery_plan_required", details={"dispatch_started": False})
    return {"kind": "recovery-plan", "parent": run_id, "mode": req.mode, "plan_sha256": req.plan_sha256,
            "selected_cells": [c if isinstance(c, str) else cell_id(c["case_id"], c["target_id"]) for c in req.cells]}


@route("POST", "/runs/{run_id}/recover", "Create a recovery child run over selected cells",
       body=rq.RecoverRun, answer=rs.RunCreated, created=True)
async def recover_run(request: web.Request, req: rq.RecoverRun) -> Status:
    service, actor = svc(request), actor_of(request)
    run_id = request.match_info["run_id"]
    submitted = await asyncio.to_thread(_submitted_recovery, service, run_id, req)   # 150k cell ids: ~1 s
    await _settled(service, run_id)
    parent_plan = service.objects.get_json(service.runs.get(run_id).plan)
    hook = upstream.derived_hook(service, actor, parent_plan, "recovery")
    run, created = await asyncio.to_thread(recovery.recover, service.runs, run_id, submitted,
                                           wire.scoped_key(actor.owner, req.idempotency_key),
                                           req.acknowledge_new_attempt, hook)
    if created:
        service.runs.start(run.id)
    return Status(rs.extend(service.views.one(run), rs.RunCreated, created=created), 201 if created else 200)


@route("POST", "/runs/{run_id}/reprice", "Append a price correction (zero model calls)", body=rq.RepriceRun,
       answer=wf.Repriced)
async def reprice_run(request: web.Request, req: rq.RepriceRun) -> wf.Repriced:
    correction, digest, appended = await asyncio.to_thread(corrections.reprice, svc(request).runs,
                                                           request.match_info["run_id"], req.prices, req.reason)
    stored = wf.StoredPriceCorrection.model_validate({**correction.model_dump(mode="json", by_alias=True),
                                                      "digest": digest})
    return wf.Repriced(correction=stored, appended=appended, model_requests=0)
