"""HTTP handlers for experiments (`service.experiments`) and candidate plans derived from a baseline."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Mapping

from aiohttp import web
from pydantic import JsonValue

from srbench import TERMINAL_STATUSES
from srbench.errors import InvalidInput
from srbench.schemas.plan import Plan
from srbench.schemas.target import Target
from srbench.service.api import requests as rq
from srbench.service.api import responses as rs
from srbench.service.api import workflow as wf
from srbench.service.api.actors import actor_of, check_visible
from srbench.service.api.bindings import Status, route
from srbench.service.api.http import svc
from srbench.service.api.policy import registry
from srbench.service.routes.core import _plan_sync, plan_answer
from srbench.service.runs import experiments
from srbench.service.runs.state import RunState
from srbench.service.wire import projections as wire


@route("GET", "/experiments", "Experiments, oldest first", query=rq.ExperimentPage, answer=wf.Experiments)
async def list_experiments(request: web.Request, q: rq.ExperimentPage) -> wf.Experiments:
    return experiments.page(svc(request).journal, actor_of(request), q.after, q.limit)


@route("POST", "/experiments", "Create an experiment (idempotent by key)", body=rq.CreateExperiment,
       answer=wf.Experiment, created=True)
async def create_experiment(request: web.Request, req: rq.CreateExperiment) -> Status:
    view, created = await asyncio.to_thread(experiments.create, svc(request).journal, req.name,
                                            req.idempotency_key, actor_of(request))
    return Status(view, 201 if created else 200)


@route("GET", "/experiments/{experiment_id}", "One experiment", answer=wf.Experiment)
async def get_experiment(request: web.Request) -> wf.Experiment:
    return experiments.get(svc(request).journal, request.match_info["experiment_id"], actor_of(request))


@route("DELETE", "/experiments/{experiment_id}", "Delete an experiment; its runs stay",
       answer=wf.ExperimentDeleted)
async def delete_experiment(request: web.Request) -> wf.ExperimentDeleted:
    if request.query or request.can_read_body:
        raise InvalidInput("Experiment deletion takes no body or filters")
    return await asyncio.to_thread(experiments.delete, svc(request).journal, request.match_info["experiment_id"],
                                   actor_of(request))


@route("GET", "/experiments/{experiment_id}/runs", "The runs of an experiment, by role",
       query=rq.ExperimentPage, answer=wf.ExperimentRuns)
async def experiment_runs(request: web.Request, q: rq.ExperimentPage) -> wf.ExperimentRuns:
    return experiments.runs(svc(request).journal, request.match_info["experiment_id"], actor_of(request),
                            q.after, q.limit)


@route("POST", "/experiments/{experiment_id}/runs", "Attach a run to an experiment in a role",
       body=rq.AttachRun, answer=wf.Experiment)
async def attach_run(request: web.Request, req: rq.AttachRun) -> wf.Experiment:
    service, actor = svc(request), actor_of(request)
    check_visible(service.journal, actor, req.run_id)
    run = service.runs.get(req.run_id)
    roles = wire.experiment_roles(service.runs.plans.get(run.plan))
    return await asyncio.to_thread(experiments.attach, service.journal, request.match_info["experiment_id"],
                                   req.run_id, req.role, req.hypothesis, actor, roles)


# -- candidate plans -------------------------------------------------------------------------------
PROTOCOL = ("case_sha256", "sampling", "limits", "profile", "seed", "cost_policy", "benchmark_options",
            "adapter_versions", "benchmark_weights", "grader_versions")


def candidate_manifest(run: RunState, plan: Plan, stored: Mapping[str, JsonValue], req: rq.CandidatePlan,
                       registry: dict[str, Target]) -> dict[str, JsonValue]:
    """A manifest (JSON, as a client would send it) on the baseline's questions and protocol with the chosen
    registered routers as subjects: `plan` is the baseline's frozen plan, `stored` its stored JSON, whose
    protocol blocks the manifest copies as they are."""
    if (run.status not in TERMINAL_STATUSES or plan.mode != "live"
            or not any(pt.target.kind == "single" for pt in plan.targets)):
        raise InvalidInput("Choose a terminal live single-model baseline", code="not_a_baseline")
    if plan.execution_cells is not None or plan.recovery is not None:
        raise InvalidInput("A recovery subset is not a complete reusable baseline", code="not_a_baseline")
    if len(set(req.target_ids)) != len(req.target_ids):
        raise InvalidInput("Select distinct configured MoM targets")
    missing = [t for t in req.target_ids if t not in registry]
    if missing:
        raise InvalidInput(f"Candidate target is not registered: {missing[0]}")
    if any(registry[t].kind != "mom" for t in req.target_ids):
        raise InvalidInput("Candidate plans require configured MoM targets")
    if set(req.target_ids) & set(plan.auxiliary_targets):
        raise InvalidInput("Candidate subjects cannot replace fixed auxiliary targets")
    manifest: dict[str, JsonValue] = {
        "version": plan.version, "profile": plan.profile, "seed": plan.seed,
        "cost_policy": plan.cost_policy, "mode": req.mode,
        "name": req.name or ("Routing check" if req.mode == "preview" else "Candidate evaluation"),
        "dataset": {"sha256": plan.dataset.sha256}, "sampling": copy.deepcopy(stored["sampling"]),
        "limits": copy.deepcopy(stored["limits"]), "targets": [{"id": t} for t in req.target_ids],
        "baseline_run_id": run.id}
    for key in ("statistics", "stop_on_systematic", "preview_context"):
        if stored.get(key) is not None:
            manifest[key] = copy.deepcopy(stored[key])
    if req.experiment is not None:
        manifest["experiment"] = req.experiment.model_dump()
    return manifest


def protocol_problems(baseline: Mapping[str, JsonValue], candidate: Mapping[str, JsonValue]) -> list[str]:
    """What differs in the protocol between the baseline's stored plan JSON and the candidate's."""
    if candidate["mode"] == "preview":
        keys: tuple[str, ...] = ("case_sha256", "profile", "seed")
    else:
        keys = PROTOCOL
    return [f"Baseline protocol changed ({k}); prepare a new baseline before comparing this configuration"
            for k in keys if candidate.get(k) != baseline.get(k)]


@route("POST", "/runs/{run_id}/candidate-plan",
       "A plan that swaps registered MoM targets into a finished baseline's protocol", body=rq.CandidatePlan,
       answer=rs.PlanAnswer)
async def candidate_plan(request: web.Request, req: rq.CandidatePlan) -> rs.PlanAnswer:
    service, actor = svc(request), actor_of(request)
    run = service.runs.get(request.match_info["run_id"])
    base = service.objects.get_json(run.plan)
    manifest = candidate_manifest(run, service.runs.plans.get(run.plan), base, req, registry(service))
    plan = await asyncio.to_thread(_plan_sync, service, manifest, actor)
    problems = protocol_problems(base, plan.as_json())
    if problems:
        raise InvalidInput(problems[0], code="baseline_protocol_changed")
    return await plan_answer(service, plan)
