"""HTTP handlers: the basics, targets, plans and runs (upstream's wire shapes, `service.wire`)."""

from __future__ import annotations

import asyncio
import json
import os
from collections import Counter
from typing import TYPE_CHECKING, Any

from aiohttp import web

from srbench import VERSION
from srbench.benchmarks import catalog as catalog_doc
from srbench.cas import is_digest
from srbench.discovery import read_benchmark_options
from srbench.errors import Conflict, InvalidInput, NotFound, hide_credentials
from srbench.schemas.cell import wire_status
from srbench.schemas.estimate import PlanEstimate
from srbench.schemas.intervals import Planning
from srbench.schemas.plan import Plan
from srbench.schemas.target_checks import KeyState, TargetCheck
from srbench.service.api import policy
from srbench.service.api import requests as rq
from srbench.service.api import responses as rs
from srbench.service.api import workflow as wf
from srbench.service.api.actors import Actor, actor_of
from srbench.service.api.bindings import Status, route
from srbench.service.api.catalog import SetupChecks
from srbench.service.api.http import svc
from srbench.service.datasets.refs import find_datasets
from srbench.service.runs.early_stop import check_baseline_run
from srbench.service.runs.recipes import recipes_view
from srbench.service.store import benchmark_options, maintenance, target_registry
from srbench.service.store import gc as upkeep
from srbench.service.store.env_file import env_file_path, load_env_file
from srbench.service.store.maintenance_answers import Collected, Verified
from srbench.service.store.setup_checks import checks
from srbench.service.wire import projections as wire
from srbench.service.wire import upstream, upstream_plan
from srbench.stages.datasets.build import decode_cases
from srbench.stages.plan.estimate import cost_per_case, plan_estimate
from srbench.stages.plan.freeze import check_frozen
from srbench.stages.plan.problems import fail
from srbench.stages.plan.submitted import PlanInputs, freeze_manifest
from srbench.stages.stats.planning import available_cases, planning_for
from srbench.targets import routers
from srbench.targets.pricing import price_problem
from srbench.targets.probe import probe_all

if TYPE_CHECKING:
    from srbench.service.app import Service


# -- basics --------------------------------------------------------------------------------------
@route("GET", "/health", "Readiness and store identity (the token is needed, as upstream)", answer=rs.Health,
       aliases=("/health",))
async def health(request: web.Request) -> rs.Health:
    return rs.Health(version=VERSION, status="ready", store_id=svc(request).store_id)


@route("GET", "/catalog", "The installed suite, its nine benchmarks, profiles and modes", answer=rs.Catalog)
async def catalog(request: web.Request) -> rs.Catalog:
    return rs.Catalog.model_validate({**catalog_doc(), "profiles": wire.PROFILES, "modes": wire.MODES})


@route("POST", "/shutdown", "Stop the service; every result is kept", answer=wf.Stopping)
async def shutdown(request: web.Request) -> wf.Stopping:
    asyncio.get_running_loop().call_later(0.05, svc(request).stopping.set)
    return wf.Stopping(status="stopping", results="kept")


# Objects the API serves: JSON records without reference answers. Frozen datasets, cases and SSE
# blobs are never returned (UI-3); datasets are browsed through /datasets/{id}/cases. A
# `trajectory` is an agent trial's stored record (messages, commands, outputs, verifier log).
SERVED_KINDS = frozenset({"call", "request", "report", "results", "results_page", "plan", "grade", "trajectory"})


@route("GET", "/objects/{digest}", "An object by digest (JSON records only; verified)")
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


@route("GET", "/setup", "What each benchmark needs on the service host (check only)", answer=SetupChecks)
async def setup_check(request: web.Request) -> SetupChecks:
    service = svc(request)
    await asyncio.to_thread(target_registry.sync, service)      # reads a file: off the event loop
    registered = {name for name, _ in service.journal.list_refs("target")}
    return checks(service.store_dir, registered)


@route("GET", "/benchmark-options", "The store's benchmark options (judges, simulators, grading options)",
       answer=rs.StoreBenchmarkOptions)
async def get_benchmark_options(request: web.Request) -> rs.StoreBenchmarkOptions:
    options = await asyncio.to_thread(read_benchmark_options, svc(request).store_dir)
    return rs.StoreBenchmarkOptions(options=dict(options), file=benchmark_options.FILE)


@route("POST", "/benchmark-options", "Set and unset one benchmark's options (the operator; checked, then "
       "benchmark-options.json is rewritten whole)", body=rq.SetBenchmarkOptions, answer=rs.StoreBenchmarkOptions)
async def set_benchmark_options(request: web.Request, req: rq.SetBenchmarkOptions) -> rs.StoreBenchmarkOptions:
    options = await asyncio.to_thread(benchmark_options.update, svc(request).store_dir, req.benchmark, req.set,
                                      req.unset)
    return rs.StoreBenchmarkOptions(options=dict(options), file=benchmark_options.FILE)


# -- targets -------------------------------------------------------------------------------------
@route("GET", "/targets", "The target registry", answer=rs.Targets)
async def list_targets(request: web.Request) -> rs.Targets:
    service = svc(request)
    registered = await asyncio.to_thread(policy.registry, service)   # the store's targets.json too, as upstream
    return rs.Targets(targets=list(registered.values()))


@route("POST", "/targets", "Register or replace targets (the operator)", body=rq.RegisterTargets,
       answer=rs.Registered)
async def register_targets(request: web.Request, req: rq.RegisterTargets) -> rs.Registered:
    parsed = req.targets
    problems = [f"targets[{i}].router: {bad}" for i, t in enumerate(parsed)
                if (bad := routers.router_problem(t)) is not None]
    problems += [f"targets[{i}].{bad}" for i, t in enumerate(parsed) if (bad := price_problem(t)) is not None]
    ids = [t.id for t in parsed]
    dupes = sorted(i for i, n in Counter(ids).items() if n > 1)
    if dupes:
        problems.append(f"duplicate target id(s): {', '.join(dupes)}")
    if problems:
        raise fail(problems, "targets file")
    journal = svc(request).journal
    for t in parsed:
        journal.set_ref_sync("target", t.id, t.model_dump(mode="json"))
    return rs.Registered(registered=ids)


@route("POST", "/targets/check", "Whether the service holds each target's key and, asked, one probe of each "
       "(GET <base_url>/models; no prompt is sent)", body=rq.CheckTargets, answer=rs.TargetChecks)
async def check_targets(request: web.Request, req: rq.CheckTargets) -> rs.TargetChecks:
    store_dir = svc(request).store_dir
    await asyncio.to_thread(load_env_file, store_dir)      # what `sr-bench env set` wrote since it started
    env_file = str(env_file_path(store_dir))
    unique = list({t.id: t for t in req.targets}.values())
    probes = await probe_all(unique) if req.probe else {}
    return rs.TargetChecks(targets=[TargetCheck(
        target_id=t.id, probe=probes.get(t.id),
        key=None if not t.api_key_env else KeyState(env=t.api_key_env, set=bool(os.environ.get(t.api_key_env)),
                                                    env_file=env_file)) for t in unique])


# -- plans and runs ------------------------------------------------------------------------------
def _plan_sync(service: Service, manifest: Any, actor: Actor) -> Plan:
    """Freeze a manifest (sr-bench's fields and upstream's, translated first: `service.wire.upstream`; a plan
    frozen by upstream's CLI checked and translated before that: `service.wire.upstream_plan`): what only the
    service holds is gathered first, then planned in one call (`stages.plan.submitted`)."""
    registered = policy.registry(service)
    kept = None
    if upstream_plan.is_upstream_frozen(manifest):
        manifest, kept = upstream_plan.translate(manifest)
    if actor.named and isinstance(manifest, dict):
        manifest = policy.resolve_inline(manifest, registered)
    req = upstream.translate(service, manifest, actor)
    named = req.manifest.get("dataset") if isinstance(req.manifest, dict) else None
    sha = named.get("sha256") if isinstance(named, dict) else None
    inputs = PlanInputs(targets=registered, auxiliary=req.auxiliary_targets,
                        datasets=find_datasets(service, sha) if isinstance(sha, str) else [],
                        options=dict(read_benchmark_options(service.store_dir) if req.options is None else req.options),
                        links=req.links if kept is None else req.links.model_copy(update={"upstream": kept}))
    return freeze_manifest(req.manifest, service.objects, inputs)


def _planning_sync(service: Service, plan: Plan) -> Planning | None:
    """Sample-size planning for a live plan (stages.power.planning_for); its baseline run checked."""
    if plan.mode != "live":
        return None
    check_baseline_run(service.runs, plan)
    counts: dict[str, int] = {}
    cases = decode_cases(service.objects.get_bytes(plan.dataset.object))
    for case in cases:
        counts[case.benchmark] = counts.get(case.benchmark, 0) + 1
    available = available_cases(counts)
    # served as its `dump` (the binding: the fields set); sized by cost when every benchmark's is bounded
    return planning_for(plan, counts, available, cost_per_case(plan, cases))


def _estimate_sync(service: Service, plan: Plan) -> PlanEstimate:
    """Planned requests (judge calls included) and the upper cost estimate (stages.estimate)."""
    return plan_estimate(plan, decode_cases(service.objects.get_bytes(plan.dataset.object)))


async def plan_answer(service: Service, plan: Plan) -> rs.PlanAnswer:
    planning = await asyncio.to_thread(_planning_sync, service, plan)
    estimate = await asyncio.to_thread(_estimate_sync, service, plan)
    return rs.PlanAnswer(manifest=wire.wire_manifest(plan), plan_sha256=plan.plan_sha256, total=plan.total,
                         status="validated", model_requests=0, planning=planning, estimate=estimate)


@route("POST", "/plans", "Validate and freeze a manifest (no model call)", body=rq.MakePlan,
       answer=rs.PlanAnswer)
async def make_plan(request: web.Request, req: rq.MakePlan) -> rs.PlanAnswer:
    service = svc(request)
    plan = await asyncio.to_thread(_plan_sync, service, req.manifest, actor_of(request))
    return await plan_answer(service, plan)


def _submitted_plan(service: Service, manifest: Any, actor: Actor) -> Plan:
    """A frozen manifest as it was reviewed (its hash checked; one sent without its plan_sha256 is
    re-frozen: validated and hashed anew, as upstream does), or a manifest frozen now; a reviewed
    plan_sha256 the manifest carries must match what it freezes to (upstream's reviewed_plan_changed)."""
    if not isinstance(manifest, dict):
        raise InvalidInput("manifest must be an object")
    if manifest.get("kind") == "plan":
        plan = check_frozen(wire.plan_from_wire(manifest), refreeze="plan_sha256" not in manifest)
        if actor.named:
            policy.check_plan(plan, policy.registry(service), read_benchmark_options(service.store_dir))
        return plan
    if upstream_plan.is_upstream_frozen(manifest):      # its reviewed hash is upstream's, checked by its rule
        return _plan_sync(service, manifest, actor)
    reviewed = manifest.get("plan_sha256")
    plan = _plan_sync(service, {k: v for k, v in manifest.items() if k != "plan_sha256"}, actor)
    if reviewed is not None and reviewed != plan.plan_sha256:
        raise InvalidInput(f"the reviewed plan changed: it freezes to {plan.plan_sha256} now, the manifest says "
                           f"{reviewed}; review the plan again (nothing was dispatched)", code="reviewed_plan_changed",
                           details={"dispatch_started": False, "model_requests": 0})
    return plan


@route("POST", "/runs", "Start a run of a frozen manifest (idempotent by key)", body=rq.SubmitRun,
       answer=rs.RunCreated, created=True)
async def submit_run(request: web.Request, req: rq.SubmitRun) -> Status:
    service, actor = svc(request), actor_of(request)
    plan = await asyncio.to_thread(_submitted_plan, service, req.manifest, actor)
    hook = upstream.creation_hook(service, plan, actor)
    try:
        run, created = await asyncio.to_thread(service.runs.submit, plan, wire.scoped_key(actor.owner,
                                                                                          req.idempotency_key), hook)
    except Conflict as exc:      # upstream answers a key bound to another plan with a 400
        if exc.code != "idempotency_conflict":
            raise
        raise InvalidInput(exc.message, code=exc.code, details=exc.details) from None
    if created:
        service.runs.start(run.id)
    # upstream answers every accepted submission with 201 and the run; `created` says whether this one made it
    return Status(rs.extend(service.views.one(run), rs.RunCreated, created=created), 201)


@route("GET", "/runs", "Run summaries, newest first (keyset pages)", query=rq.RunsPage, answer=rs.Runs)
async def list_runs(request: web.Request, q: rq.RunsPage) -> rs.Runs:
    service = svc(request)
    return await asyncio.to_thread(service.views.list, actor_of(request), q.limit, q.after)


@route("GET", "/runs/{run_id}", "One run with progress", answer=rs.RunView)
async def get_run(request: web.Request) -> rs.RunView:
    service = svc(request)
    return service.views.one(service.runs.get(request.match_info["run_id"]))


@route("POST", "/runs/{run_id}/cancel", "Stop the work of a run", answer=rs.RunView)
async def cancel_run(request: web.Request) -> rs.RunView:
    service = svc(request)
    return service.views.one(await service.runs.cancel(request.match_info["run_id"]))


@route("GET", "/runs/{run_id}/report", "The report (a cached rule output)", answer=rs.Report)
async def run_report(request: web.Request) -> rs.Report:
    service = svc(request)

    def go() -> rs.Report:
        run_id = request.match_info["run_id"]
        digest, hit, why = service.runs.report_digest(run_id)
        report = service.objects.get_json(digest)
        context = report_context(service, run_id)
        judges = sorted(context.manifest.get("auxiliary_targets") or {})      # the plan's judges (none: no judge cost)
        return rs.Report.model_validate({**wire.wire_report(report, digest, hit, why, service.figures.of(digest, report),
                                                            context), "judges": judges})
    return await asyncio.to_thread(go)


def report_context(service: Service, run_id: str) -> wire.ReportContext:
    """The run's wire manifest and its recovery children (upstream's `child_attempts`) for its report."""
    run = service.runs.get(run_id)
    children = [service.runs.get(c) for c in (run.lineage.children if run.lineage else [])]
    return wire.ReportContext(service.views.manifest(run.plan), [
        {"id": c.id, "status": wire_status(c.status), "progress": c.progress.model_dump(mode="json")} for c in children])


@route("GET", "/runs/{run_id}/recipes", "The router recipes captured for the run (UI-7)", answer=wf.Recipes)
async def run_recipes(request: web.Request) -> wf.Recipes:
    service = svc(request)
    run = service.runs.get(request.match_info["run_id"])
    plan = await asyncio.to_thread(service.runs.plans.get, run.plan)
    found = await asyncio.to_thread(recipes_view, service.journal, service.objects, run.id, plan)
    return wf.Recipes(run_id=run.id, recipes=found,
                      note="captured from the router's own config API before the run (secrets and connection "
                           "details redacted); a run without a capture never borrows a later one (UI-7)")


# -- store maintenance ---------------------------------------------------------------------------
@route("POST", "/store/verify",
       "Re-hash every object and check journal → object references (repair: copy good objects from "
       "SR_BENCH_REPAIR_FROM)",
       body=rq.StoreVerify, answer=Verified, optional=True)
async def store_verify(request: web.Request, req: rq.StoreVerify) -> Verified:
    service = svc(request)
    if not req.repair:
        return await asyncio.to_thread(maintenance.verify, service.objects, service.journal)
    res = await asyncio.to_thread(maintenance.verify_and_repair, service.objects, service.journal,
                                  maintenance.repair_sources())
    for digest in res.repaired or []:
        service.damage.forget(digest)
    return res


@route("POST", "/store/gc",
       "Remove objects no reference reaches, older than a grace period (dry run unless apply; refused while "
       "runs are active)",
       body=rq.StoreGc, answer=Collected, optional=True)
async def store_gc(request: web.Request, req: rq.StoreGc) -> Collected:
    apply, grace = req.apply, req.grace_s
    service = svc(request)
    active = sorted(set(service.runs.tasks) | set(upkeep.active_runs(service.journal)))
    if active:
        raise Conflict(f"store gc refused: {len(active)} run(s) are queued, running or finishing "
                       f"({', '.join(active[:5])}); wait for them to finish or cancel them", code="runs_active")
    if apply and service.objects.url != str(service.store_dir / "cas").rstrip("/"):
        # SR_BENCH_OBJECTS_URL: the objects may be shared with other stores whose journals this one cannot see
        raise Conflict(f"store gc --apply refused: the objects live at {hide_credentials(service.objects.url)}, outside this store, "
                       "where other stores' journals may reference them; only a dry run is allowed",
                       code="objects_shared")
    return await asyncio.to_thread(upkeep.gc, service.objects, service.journal, dry_run=not apply,
                                   grace_s=float(grace))
