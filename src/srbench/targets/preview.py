"""Preview: ask a MoM router which decision and model a request would get, with no inference (IT-3).

POST `preview_url` with ``{model, messages, max_tokens, trace: true, preview_context}``; the router
answers JSON with ``selected_model``, ``decision``, ``selection_status``, ``selection_reason``,
``selection_method``, ``selection_provenance`` (config/state hash, capture time, local sampling,
seed), ``plugins``, ``state_dependent`` and ``config_hash`` (the ``x-vsr-*`` headers fill gaps).
The preview never updates router state; sr-bench records exactly what the router said.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass, field

import aiohttp

from srbench.schemas.target import Target
from srbench.schemas.wire import WireJSON

ROUTING_FIELDS = ("selected_model", "decision", "selection_status", "selection_reason", "selection_method",
                  "selection_provenance", "plugins", "state_dependent", "config_hash")
MAX_BODY = 256 * 1024


@dataclass
class PreviewOutcome:
    status: str                       # completed | failed
    error_class: str | None = None
    error: str | None = None
    http_status: int | None = None
    routing: WireJSON | None = None
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes = b""
    started_at: float = 0.0
    latency_s: float | None = None
    systematic: bool = False


def preview_body(target: Target, messages: list[WireJSON], max_tokens: int,
                 context: WireJSON | None) -> WireJSON:
    body: WireJSON = {"model": target.model, "messages": messages, "max_tokens": max_tokens, "trace": True}
    if context:
        body["preview_context"] = {k: v for k, v in context.items() if v is not None}
    return body


def preview_headers(target: Target) -> dict[str, str]:
    env = target.preview_api_key_env or target.api_key_env
    key = os.environ.get(env) if env else None
    headers = {"content-type": "application/json"}
    if key:
        headers["authorization"] = f"Bearer {key}"
    if target.config_hash:
        headers["x-sr-bench-expected-config-hash"] = target.config_hash
    return headers


async def preview_call(client: aiohttp.ClientSession, target: Target, body: WireJSON,
                       timeout_s: float) -> PreviewOutcome:
    out = PreviewOutcome(status="failed", started_at=time.time())
    t0 = time.perf_counter()
    assert target.preview_url is not None
    try:
        async with asyncio.timeout(timeout_s):
            async with client.post(target.preview_url, data=json.dumps(body).encode(),
                                   headers=preview_headers(target), allow_redirects=False) as resp:
                buf = bytearray()
                async for chunk in resp.content.iter_any():
                    buf += chunk
                    if len(buf) > MAX_BODY:
                        break
                content, status, headers = bytes(buf), resp.status, resp.headers
    except TimeoutError:
        out.error_class, out.error = "timeout_total", f"no preview answer within {timeout_s}s"
        return out
    except aiohttp.ClientError as exc:
        out.error_class, out.error = "connect_error", f"preview request failed: {type(exc).__name__}"
        return out
    out.latency_s = time.perf_counter() - t0
    out.http_status = status
    out.raw = content[:MAX_BODY]
    out.headers = {k.lower(): v for k, v in headers.items() if k.lower().startswith(("x-vsr-", "content-type"))}
    if status >= 400:
        out.error_class, out.error = f"http_{status}", f"preview answered HTTP {status}"
        out.systematic = status in (401, 403, 404)
        return out
    if len(content) > MAX_BODY:
        out.error_class, out.error = "bad_preview", f"preview answer is larger than {MAX_BODY} bytes"
        return out
    try:
        data = json.loads(content)
        if not isinstance(data, dict):
            raise ValueError
    except ValueError:
        out.error_class, out.error = "bad_preview", "preview answer is not a JSON object"
        return out
    routing = {k: data.get(k) for k in ROUTING_FIELDS}
    routing["selected_model"] = routing["selected_model"] or out.headers.get("x-vsr-selected-model")
    routing["decision"] = routing["decision"] or out.headers.get("x-vsr-selected-decision")
    routing["config_hash"] = routing["config_hash"] or out.headers.get("x-vsr-config-hash")
    out.routing = routing
    if target.config_hash and routing["config_hash"] and routing["config_hash"] != target.config_hash:
        out.error_class = "config_hash_mismatch"
        out.error = f"router preview reports config_hash {routing['config_hash']}, the target pins {target.config_hash}"
        out.systematic = True
        return out
    out.status = "completed"
    return out
