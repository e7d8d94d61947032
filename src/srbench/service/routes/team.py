"""HTTP handlers for team workflows: push a finished run to a team object store, pull one from it."""

from __future__ import annotations

import asyncio

from aiohttp import web

from srbench.service.api import requests as rq
from srbench.service.api.http import ok, parse, svc
from srbench.service.team import sync as team


async def push_run(request: web.Request) -> web.Response:
    remote = (await parse(request, rq.TeamRemote)).remote
    service = svc(request)
    return ok(await asyncio.to_thread(team.push, service, request.match_info["run_id"], remote))


async def pull_run(request: web.Request) -> web.Response:
    remote = (await parse(request, rq.TeamRemote)).remote
    service = svc(request)
    return ok(await asyncio.to_thread(team.pull, service, request.match_info["run_id"], remote))
