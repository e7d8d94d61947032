"""HTTP handlers: parse and check the request, call a stage or the run manager, return JSON."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp import web

from srbench import VERSION
from srbench.benchmarks import catalog as catalog_doc
from srbench.cas import is_digest
from srbench.errors import DamagedObject, InvalidInput, NotFound
from srbench.schemas.target import Target
from srbench.service import api_requests as rq
from srbench.service import pages
from srbench.service.dataset_refs import find_datasets
from srbench.service.discovery import read_benchmark_options
from srbench.service.faults import record_damage
from srbench.service.http import MAX_OFFSET, ok, parse, query, svc
from srbench.stages.plan import build_plan, fail
from srbench.stages.results import page as results_page
from srbench.targets import routers


# -- basics --------------------------------------------------------------------------------------
async def health(request: web.Request) -> web.Response:
    return ok({"version": VERSION, "status": "ready", "store_id": svc(request).store_id})


async def catalog(request: web.Request) -> web.Response:
    return ok(catalog_doc())


async def shutdown(request: web.Request) -> web.Response:
    asyncio.get_running_loop().call_later(0.05, svc(request).stopping.set)
    return ok({"status": "stopping", "results": "kept"})


# Objects the API serves: JSON records without reference answers. Frozen datasets, cases and SSE
# blobs are never returned (UI-3); datasets are browsed through /datasets/{id}/cases.
SERVED_KINDS = frozenset({"call", "request", "report", "results", "results_page", "plan", "grade"})


async def get_object(request: web.Request) -> web.Response:
    digest = request.match_info["digest"]
    if not is_digest(digest):
        raise InvalidInput("not an object digest (expected b3:<64 hex>)")
    data = await asyncio.to_thread(svc(request).objects.get_bytes, digest)
    try:
        value = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        value = None
    if not isinstance(value, dict) or value.get("kind") not in SERVED_KINDS:
        raise NotFound(f"object {digest} is not a record this API serves (datasets and cases, which hold "
                       "reference answers, are browsed through /datasets/{id}/cases)")
    return web.Response(body=data, content_type="application/json")


async def setup_check(request: web.Request) -> web.Response:
    from srbench.service.setup_checks import checks

    service = svc(request)
    registered = {name for name, _ in service.journal.list_refs("target")}
    return ok(checks(service.store_dir, registered))


# -- targets -------------------------------------------------------------------------------------
async def list_targets(request: web.Request) -> web.Response:
    return ok({"targets": [v for _, v in svc(request).journal.list_refs("target")]})


async def register_targets(request: web.Request) -> web.Response:
    parsed = (await parse(request, rq.RegisterTargets)).targets
    problems = [f"targets[{i}].router: {bad}" for i, t in enumerate(parsed)
                if (bad := routers.router_problem(t)) is not None]
    ids = [t.id for t in parsed]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        problems.append(f"duplicate target id(s): {', '.join(dupes)}")
    if problems:
        raise fail(problems, "targets file")
    journal = svc(request).journal
    for t in parsed:
        journal.set_ref_sync("target", t.id, t.model_dump(mode="json"))
    return ok({"registered": ids})


# -- plans and runs ------------------------------------------------------------------------------
def _plan_sync(service: Any, manifest: Any) -> dict[str, Any]:
    def resolve(tid: str) -> Target | None:
        v = service.journal.get_ref("target", tid)
        return None if v is None else Target.model_validate(v)

    return build_plan(manifest, service.objects, resolve_target=resolve,
                      find_datasets=lambda sha: find_datasets(service, sha),
                      options=read_benchmark_options(service.store_dir))


def _planning_sync(service: Any, plan: dict[str, Any]) -> dict[str, Any] | None:
    """Sample-size planning for a live plan (stages.power.planning_for); its baseline run checked."""
    from srbench.service.early_stop import check_baseline_run
    from srbench.stages.datasets import decode_cases
    from srbench.stages.power import planning_for

    if plan["mode"] != "live":
        return None
    check_baseline_run(service.runs, plan)
    counts: dict[str, int] = {}
    for case in decode_cases(service.objects.get_bytes(plan["dataset"]["object"])):
        counts[case.benchmark] = counts.get(case.benchmark, 0) + 1
    return planning_for(plan, counts)


async def make_plan(request: web.Request) -> web.Response:
    req = await parse(request, rq.MakePlan)
    service = svc(request)
    plan = await asyncio.to_thread(_plan_sync, service, req.manifest)
    planning = await asyncio.to_thread(_planning_sync, service, plan)
    return ok({"plan": plan, "plan_sha256": plan["plan_sha256"], "total": plan["total"], "status": "validated",
               "model_requests": 0, "planning": planning})


async def submit_run(request: web.Request) -> web.Response:
    req = await parse(request, rq.SubmitRun)
    service = svc(request)
    run, created = await asyncio.to_thread(service.runs.submit, req.plan, req.idempotency_key)
    if created:
        service.runs.start(run["id"])
    return ok({"run": run, "created": created}, status=201 if created else 200)


async def list_runs(request: web.Request) -> web.Response:
    q = query(request, rq.RunsPage)
    runs = svc(request).runs.list(q.limit, pages.runs_before(q.after))
    return ok({"runs": runs, "next_cursor": pages.runs_cursor(runs, q.limit)})


async def get_run(request: web.Request) -> web.Response:
    return ok(svc(request).runs.get(request.match_info["run_id"]))


async def cancel_run(request: web.Request) -> web.Response:
    return ok(await svc(request).runs.cancel(request.match_info["run_id"]))


async def run_report(request: web.Request) -> web.Response:
    service = svc(request)
    rep, hit, why = await asyncio.to_thread(service.runs.report, request.match_info["run_id"])
    return ok({"report": rep, "cache_hit": hit, "explain": why})


async def run_results(request: web.Request) -> web.Response:
    service = svc(request)
    q = query(request, rq.SeqPage)
    offset, limit = min(q.offset, MAX_OFFSET), q.limit
    digest = await asyncio.to_thread(service.runs.results_digest, request.match_info["run_id"])
    rows, total = await asyncio.to_thread(results_page, service.objects, digest, after=q.after, offset=offset,
                                          limit=limit)
    return ok({"results": rows, "total": total, "offset": offset, "next_cursor": pages.seq_cursor(rows, limit)})


def _call_summary(service: Any, row: Any) -> dict[str, Any]:
    out = {"cell_id": row["cell_id"], "seq": row["seq"], "case_id": row["case_id"], "target_id": row["target_id"],
           "state": row["state"], "error_class": row["error_class"], "error": row["error"],
           "request": row["request"], "call": row["call"], "damaged": False}
    if row["call"]:
        try:
            c = service.objects.get_json(row["call"])
        except (DamagedObject, NotFound) as exc:    # one bad object marks its row, never the whole page
            if isinstance(exc, DamagedObject):
                record_damage(service, exc, row["run_id"], f"call of cell {row['cell_id']}")
            out.update(damaged=True, damage=exc.message)
            return out
        out.update(status=c["status"], http_status=c.get("http_status"), finish_reason=c.get("finish_reason"),
                   usage=c.get("usage"), latency_s=c["timings"].get("latency_s"), ttft_s=c["timings"].get("ttft_s"),
                   response_model=c.get("response_model"),
                   selected_model=(c.get("headers") or {}).get("x-vsr-selected-model"))
    return out


async def run_calls(request: web.Request) -> web.Response:
    service = svc(request)
    run_id = request.match_info["run_id"]
    service.runs.get(run_id)
    q = query(request, rq.SeqPage)
    offset, limit = min(q.offset, MAX_OFFSET), q.limit
    rows, total = pages.calls(service.journal, service.runs.counts(run_id), run_id, q.after, offset, limit)
    calls = await asyncio.to_thread(lambda: [_call_summary(service, r) for r in rows])
    return ok({"calls": calls, "total": total, "offset": offset, "next_cursor": pages.seq_cursor(calls, limit)})


async def run_call(request: web.Request) -> web.Response:
    service = svc(request)
    run_id, cid = request.match_info["run_id"], request.match_info["cell_id"]
    row = service.journal.one("SELECT * FROM cells WHERE run_id=? AND cell_id=?", (run_id, cid))
    if row is None:
        raise NotFound(f"no cell {cid!r} in run {run_id!r}")
    out = _call_summary(service, row)
    if row["call"]:
        out["record"] = service.objects.get_json(row["call"])
    if row["request"]:
        out["request_object"] = service.objects.get_json(row["request"])
    return ok(out)


async def run_events(request: web.Request) -> web.Response:
    service = svc(request)
    run_id = request.match_info["run_id"]
    service.runs.get(run_id)
    after = query(request, rq.EventsAfter).after
    events, total = pages.events(service.journal, run_id, after, 100)
    return ok({"events": events, "total": total, "next_cursor": pages.seq_cursor(events, 100)})


# -- store maintenance ---------------------------------------------------------------------------
async def store_verify(request: web.Request) -> web.Response:
    from srbench.service import maintenance

    service = svc(request)
    if not (await parse(request, rq.StoreVerify, optional=True)).repair:
        return ok(await asyncio.to_thread(maintenance.verify, service.objects, service.journal))
    res = await asyncio.to_thread(maintenance.verify_and_repair, service.objects, service.journal,
                                  maintenance.repair_sources())
    for digest in res["repaired"]:
        service.damage.forget(digest)
    return ok(res)


async def store_gc(request: web.Request) -> web.Response:
    from srbench.errors import Conflict
    from srbench.service import maintenance

    req = await parse(request, rq.StoreGc, optional=True)
    apply, grace = req.apply, req.grace_s
    service = svc(request)
    active = sorted(set(service.runs.tasks) | set(maintenance.active_runs(service.journal)))
    if active:
        raise Conflict(f"store gc refused: {len(active)} run(s) are queued, running or finishing "
                       f"({', '.join(active[:5])}); wait for them to finish or cancel them", code="runs_active")
    if apply and service.objects.url != str(service.store_dir / "cas").rstrip("/"):
        # SR_BENCH_OBJECTS_URL: the objects may be shared with other stores whose journals this one cannot see
        raise Conflict(f"store gc --apply refused: the objects live at {service.objects.url}, outside this store, "
                       "where other stores' journals may reference them; only a dry run is allowed",
                       code="objects_shared")
    return ok(await asyncio.to_thread(maintenance.gc, service.objects, service.journal, dry_run=not apply,
                                      grace_s=float(grace)))
