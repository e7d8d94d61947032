"""HTTP handlers for what a saved run can be paired with and a running run's figures: upstream's
`/replay-options` and `/comparison-options` (`service.runs.options`), a run's baselines
(`service.runs.baselines`) and its live figures (`service.runs.live`)."""

from __future__ import annotations

import asyncio

from aiohttp import web

from srbench import TERMINAL_STATUSES
from srbench.service.api import requests as rq
from srbench.service.api import workflow as wf
from srbench.service.api.actors import actor_of, check_visible
from srbench.service.api.bindings import route
from srbench.service.api.http import svc
from srbench.service.runs.baselines import baseline_options
from srbench.service.runs.live import live_figures
from srbench.service.runs.options import run_options


async def _answer(request: web.Request, kind: str, q: rq.RunOptions) -> wf.RunOptions:
    baseline = request.match_info.get("run_id") or q.baseline_run_id
    return await asyncio.to_thread(run_options, svc(request), kind, actor_of(request), baseline,
                                   int(q.after or 0), q.limit)


@route("GET", "/replay-options", "Baselines, or previews a baseline can be replayed with",
       query=rq.RunOptions, answer=wf.RunOptions, aliases=("/api/sr-bench/v1/runs/{run_id}/replay-options",))
async def replay_options(request: web.Request, q: rq.RunOptions) -> wf.RunOptions:
    return await _answer(request, "replay", q)


@route("GET", "/comparison-options", "Baselines, or runs a baseline can be compared with",
       query=rq.RunOptions, answer=wf.RunOptions)
async def comparison_options(request: web.Request, q: rq.RunOptions) -> wf.RunOptions:
    return await _answer(request, "comparison", q)


@route("GET", "/runs/{run_id}/baselines", "Runs that can be this run's baseline, and why the others cannot",
       answer=wf.BaselineOptions)
async def run_baselines(request: web.Request) -> wf.BaselineOptions:
    service, actor = svc(request), actor_of(request)
    run_id = request.match_info["run_id"]
    check_visible(service.journal, actor, run_id)
    return await asyncio.to_thread(baseline_options, service, run_id, actor.scope)


@route("GET", "/runs/{run_id}/live", "A running run's figures so far, maintained as its cells finish",
       answer=wf.LiveFigures)
async def run_live(request: web.Request) -> wf.LiveFigures:
    service = svc(request)
    run_id = request.match_info["run_id"]
    check_visible(service.journal, actor_of(request), run_id)
    run = service.runs.get(run_id)
    if run.status not in TERMINAL_STATUSES:
        return live_figures(service, run)           # O(1) reads: on the loop, as GET /runs/{id} answers
    return await asyncio.to_thread(live_figures, service, run)        # an ended run: its report (built once)
