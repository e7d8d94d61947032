"""One probe of a target before any paid call (issue 40): ``GET <base_url>/models`` with the target's key.

It tells, in one line each: the endpoint does not answer (refused, unknown host, no answer in
`timeout_s`); it refuses the key (HTTP 401/403); the path is wrong (HTTP 404); a single model is not
among the ones it lists (a router's virtual model name need not be listed). An endpoint that answers but lists no models in OpenAI's shape (``{"data": [{"id"}]}``)
is ``unlisted``: nothing to check, nothing said. A key the service lacks is not sent: ``no_key`` (the
caller says so once per variable). Listing models is free at every OpenAI-compatible endpoint: the probe
never sends a prompt.
"""

from __future__ import annotations

import asyncio
import json
import os

import aiohttp

from srbench.schemas.target import Target
from srbench.schemas.target_checks import Probe
from srbench.targets.failures import failure_hint

BODY_LIMIT = 1 << 20


def _listed(body: bytes) -> list[str] | None:
    """The model ids of an OpenAI-shaped list, or None (not such a list)."""
    try:
        doc = json.loads(body)
    except ValueError:
        return None
    data = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(data, list):
        return None
    return [str(m["id"]) for m in data if isinstance(m, dict) and "id" in m]


def _answered(target: Target, url: str, status: int, body: bytes) -> Probe:
    env = target.api_key_env
    if status in (401, 403):
        return Probe(outcome="refused_key", url=url, http_status=status,
                     problem=f"target {target.id}: {failure_hint(f'http_{status}', '', target.base_url, target.model, env)}")
    if status == 404:
        return Probe(outcome="not_found", url=url, http_status=status,
                     problem=f"target {target.id}: HTTP 404 at {url} — wrong path? (an OpenAI-compatible base_url "
                             "usually ends in /v1)")
    if status != 200:
        return Probe(outcome="error", url=url, http_status=status,
                     problem=f"target {target.id}: GET {url} answered HTTP {status}")
    listed = _listed(body)
    if not listed:
        return Probe(outcome="unlisted", url=url, http_status=status)
    if target.kind == "single" and target.model not in listed:     # a router's own name may be unlisted
        shown = ", ".join(listed[:6]) + (f" and {len(listed) - 6} more" if len(listed) > 6 else "")
        return Probe(outcome="model_not_listed", url=url, http_status=status,
                     problem=f"target {target.id}: the model {target.model!r} is not among the {len(listed)} "
                             f"model(s) {url} lists ({shown}); fix the target's model")
    return Probe(outcome="ok", url=url, http_status=status)


async def probe(client: aiohttp.ClientSession, target: Target, timeout_s: float = 5.0) -> Probe:
    """The probe of one target (never raises)."""
    url = target.base_url.rstrip("/") + "/models"
    env = target.api_key_env
    key = os.environ.get(env) if env else None
    if env and not key:
        return Probe(outcome="no_key", url=url)
    headers = {"authorization": f"Bearer {key}"} if key else {}
    try:
        async with asyncio.timeout(timeout_s):
            async with client.get(url, headers=headers, allow_redirects=False) as resp:
                body = await resp.content.read(BODY_LIMIT)
                return _answered(target, url, resp.status, body)
    except TimeoutError:
        problem = f"no answer from {url} within {timeout_s:g}s — is the endpoint up and the host right?"
    except aiohttp.ClientConnectorError as exc:
        problem = failure_hint("connect_error", str(exc), target.base_url, target.model, env) or str(exc)
    except (aiohttp.ClientError, ValueError) as exc:
        problem = f"GET {url} failed ({type(exc).__name__}) — check the target's base_url"
    return Probe(outcome="unreachable", url=url, problem=f"target {target.id}: {problem}")


async def probe_all(targets: list[Target], timeout_s: float = 5.0) -> dict[str, Probe]:
    """Each target probed once, all at the same time (its own session: nothing pooled is shared)."""
    async with aiohttp.ClientSession(trust_env=False) as client:
        got = await asyncio.gather(*(probe(client, t, timeout_s) for t in targets))
    return {t.id: p for t, p in zip(targets, got, strict=True)}
