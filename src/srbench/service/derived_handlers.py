"""HTTP handlers for derived results of finished runs: compare, regrade, export."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from srbench.errors import InvalidInput
from srbench.service import corrections, recovery
from srbench.service.http import body, ok, only, svc
from srbench.service.replays import create_replay
from srbench.stages import derived


def _margin(data: dict[str, Any]) -> float | None:
    m = data.get("margin")
    if m is None:
        return None
    if isinstance(m, bool) or not isinstance(m, int | float) or not 0 <= m <= 1:
        raise InvalidInput("margin must be a number within [0, 1] (weighted-quality units, declared in advance)")
    return float(m)


async def make_comparison(request: web.Request) -> web.Response:
    data = await body(request)
    only(data, {"baseline_run_id", "candidate_run_id", "margin"})
    b, c = data.get("baseline_run_id"), data.get("candidate_run_id")
    if not isinstance(b, str) or not isinstance(c, str):
        raise InvalidInput("baseline_run_id and candidate_run_id are required run ids")
    margin = _margin(data)
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
    data = await body(request)
    only(data, {"baseline_run_id", "preview_run_id"})
    b, p = data.get("baseline_run_id"), data.get("preview_run_id")
    if not isinstance(b, str) or not isinstance(p, str):
        raise InvalidInput("baseline_run_id and preview_run_id are required run ids")
    run, created = await asyncio.to_thread(create_replay, svc(request).runs, b, p)
    return ok({"run": run, "created": created, "model_requests": 0}, status=201 if created else 200)


async def reconcile_usage(request: web.Request) -> web.Response:
    service = svc(request)
    data = await body(request) if request.can_read_body else {}
    only(data, {"routers"})
    body_, hit, why, appended = await asyncio.to_thread(corrections.reconcile, service.runs,
                                                        request.match_info["run_id"], data.get("routers"))
    return ok({"correction": body_, "cache_hit": hit, "explain": why, "appended": appended, "model_requests": 0})


async def recover_plan(request: web.Request) -> web.Response:
    data = await body(request)
    only(data, {"mode"})
    mode = data.get("mode")
    if not isinstance(mode, str):
        raise InvalidInput("mode is required: undispatched or failed")
    return ok(await asyncio.to_thread(recovery.recovery_plan, svc(request).runs, request.match_info["run_id"], mode))


async def recover_run(request: web.Request) -> web.Response:
    data = await body(request)
    only(data, {"plan", "idempotency_key", "acknowledge_new_attempt"})
    ack = data.get("acknowledge_new_attempt", False)
    key = data.get("idempotency_key")
    if not isinstance(ack, bool) or (key is not None and not isinstance(key, str)):
        raise InvalidInput("acknowledge_new_attempt must be a boolean and idempotency_key a string")
    service = svc(request)
    run, created = await asyncio.to_thread(recovery.recover, service.runs, request.match_info["run_id"],
                                           data.get("plan"), key, ack)
    if created:
        service.runs.start(run["id"])
    return ok({"run": run, "created": created}, status=201 if created else 200)


async def reprice_run(request: web.Request) -> web.Response:
    data = await body(request)
    only(data, {"prices", "reason"})
    reason = data.get("reason")
    if reason is not None and (not isinstance(reason, str) or len(reason) > 500):
        raise InvalidInput("reason must be text of at most 500 characters")
    correction, appended = await asyncio.to_thread(corrections.reprice, svc(request).runs, request.match_info["run_id"],
                                                   data.get("prices"), reason)
    return ok({"correction": correction, "appended": appended, "model_requests": 0})
