"""HTTP handlers for upstream's dataset preparation jobs (`service.datasets.preparations`): the jobs, what can
be prepared, one job, and a new job started in the background."""

from __future__ import annotations

from aiohttp import web

from srbench.errors import NotFound
from srbench.service.api import requests as rq
from srbench.service.api import workflow as wf
from srbench.service.api.actors import actor_of
from srbench.service.api.bindings import route
from srbench.service.api.http import svc
from srbench.service.datasets.jobs import all_jobs, read_job
from srbench.service.datasets.preparations import options, submit


@route("GET", "/dataset-preparations", "Dataset preparation jobs, newest first", answer=wf.Preparations)
async def list_preparations(request: web.Request) -> wf.Preparations:
    service = svc(request)
    return wf.Preparations(preparations=[j.answer(service) for j in all_jobs(service.journal)[:100]])


@route("GET", "/dataset-preparations/options", "What can be prepared, per profile",
       answer=wf.PreparationOptions)
async def preparation_options(request: web.Request) -> wf.PreparationOptions:
    return options()


@route("GET", "/dataset-preparations/{prep_id}", "One preparation job", answer=wf.PreparationAnswer)
async def get_preparation(request: web.Request) -> wf.PreparationAnswer:
    job = read_job(svc(request).journal, request.match_info["prep_id"])
    if job is None:
        raise NotFound(f"no dataset preparation {request.match_info['prep_id']!r}")
    return wf.PreparationAnswer(preparation=job.answer(svc(request)))


@route("POST", "/dataset-preparations", "Prepare a dataset in the background (deduplicated)",
       body=rq.PrepareJob, answer=wf.PreparationAnswer, accepted=True)
async def submit_preparation(request: web.Request, req: rq.PrepareJob) -> wf.PreparationAnswer:
    return await submit(svc(request), req, actor_of(request).owner)
