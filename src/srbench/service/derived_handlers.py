"""HTTP handlers for derived results of finished runs: compare, regrade, export."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from srbench.service import api_requests as rq
from srbench.service import corrections, recovery
from srbench.service.http import ok, parse, svc
from srbench.service.replays import create_replay
from srbench.stages import derived


async def make_comparison(request: web.Request) -> web.Response:
    req = await parse(request, rq.MakeComparison)
    b, c, margin = req.baseline_run_id, req.candidate_run_id, req.margin
    service = svc(request)

    def run() -> dict[str, Any]:
        brep, _, _ = service.runs.report(b)
        crep, _, _ = service.runs.report(c)
        digest, hit, why = derived.compare(service.engine, brep["report"], crep["report"], margin,
                                           subject=f"{b}..{c}")
        return {"comparison": service.objects.get_json(digest), "digest": digest, "cache_hit": hit, "explain": why}
    return ok(await asyncio.to_thread(run))


async def regrade_run(request: web.Request) -> web.Response:
    service = svc(request)
    run_id = request.match_info["run_id"]

    def go() -> dict[str, Any]:
        run = service.runs.get(run_id)
        original = service.runs.final_report(run_id)
        digest, hit, why = derived.regrade(service.engine, run, original)
        return {"regrade": service.objects.get_json(digest), "digest": digest, "cache_hit": hit, "explain": why}
    return ok(await asyncio.to_thread(go))


async def export_run(request: web.Request) -> web.Response:
    service = svc(request)
    run_id = request.match_info["run_id"]

    def go() -> dict[str, Any]:
        run = service.runs.get(run_id)
        rep, _, _ = service.runs.report(run_id)
        digest, hit, why = derived.export(service.engine, run, rep["report"])
        return {"export": service.objects.get_json(digest), "digest": digest, "cache_hit": hit, "explain": why}
    return ok(await asyncio.to_thread(go))


async def make_replay(request: web.Request) -> web.Response:
    req = await parse(request, rq.MakeReplay)
    b, p = req.baseline_run_id, req.preview_run_id
    run, created = await asyncio.to_thread(create_replay, svc(request).runs, b, p)
    return ok({"run": run, "created": created, "model_requests": 0}, status=201 if created else 200)


async def reconcile_usage(request: web.Request) -> web.Response:
    service = svc(request)
    routers = (await parse(request, rq.ReconcileUsage, optional=True)).routers
    body_, hit, why, appended = await asyncio.to_thread(corrections.reconcile, service.runs,
                                                        request.match_info["run_id"], routers)
    return ok({"correction": body_, "cache_hit": hit, "explain": why, "appended": appended, "model_requests": 0})


async def recover_plan(request: web.Request) -> web.Response:
    mode = (await parse(request, rq.RecoverPlan)).mode
    return ok(await asyncio.to_thread(recovery.recovery_plan, svc(request).runs, request.match_info["run_id"], mode))


async def recover_run(request: web.Request) -> web.Response:
    req = await parse(request, rq.RecoverRun)
    service = svc(request)
    run, created = await asyncio.to_thread(recovery.recover, service.runs, request.match_info["run_id"],
                                           req.plan, req.idempotency_key, req.acknowledge_new_attempt)
    if created:
        service.runs.start(run["id"])
    return ok({"run": run, "created": created}, status=201 if created else 200)


async def reprice_run(request: web.Request) -> web.Response:
    req = await parse(request, rq.RepriceRun)
    correction, appended = await asyncio.to_thread(corrections.reprice, svc(request).runs, request.match_info["run_id"],
                                                   req.prices, req.reason)
    return ok({"correction": correction, "appended": appended, "model_requests": 0})
