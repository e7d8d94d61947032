"""HTTP handlers for team workflows: push a finished run to a team object store, pull one from it."""

from __future__ import annotations

import asyncio

from aiohttp import web

from srbench.service.api import requests as rq
from srbench.service.api.bindings import route
from srbench.service.api.http import svc
from srbench.service.team import sync as team
from srbench.service.team.answers import Pulled, Pushed


@route("POST", "/runs/{run_id}/push",
       "Copy a finished run's objects and its bundle to a team object store (idempotent)", body=rq.TeamRemote,
       answer=Pushed)
async def push_run(request: web.Request, req: rq.TeamRemote) -> Pushed:
    remote = req.remote
    service = svc(request)
    return await asyncio.to_thread(team.push, service, request.match_info["run_id"], remote)


@route("POST", "/runs/{run_id}/pull",
       "Import a pushed run from a team object store, every digest checked on arrival", body=rq.TeamRemote,
       answer=Pulled)
async def pull_run(request: web.Request, req: rq.TeamRemote) -> Pulled:
    remote = req.remote
    service = svc(request)
    return await asyncio.to_thread(team.pull, service, request.match_info["run_id"], remote)
