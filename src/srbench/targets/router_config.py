"""A router's configuration read from its own API (UI-7 recipes; vLLM Semantic Router's API server).

The routes live on the router's API port, the origin of the target's `preview_url`:

    GET /config/hash            {hash, runtime_hash, active_hash, status: active|pending|unknown}
    GET /config/router          the JSON config (the router redacts secrets); ETag = sha256 of the source
    GET /config/router/recipes  {etag, recipes: [{name, description, routing, entrypoints, source, deletable}]}

A capture reads hash → config (+ETag) → recipes → hash again, and holds only when the status is
`active`, the two hash reads are equal, `hash`, `runtime_hash` and `active_hash` all equal the pinned
`config_hash`, and the recipes' `etag` is the config's ETag (the source did not change between the
reads). Otherwise nothing of the config is kept and `limitation` says why, in one line. What is kept
is redacted again here: credentials and deployment connection details (addresses, hosts, ports,
URLs) are replaced by ``"[redacted]"`` and their paths listed, so a download never carries them.
`projection_hash` is the digest of the kept (redacted) config and recipes.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from srbench.cas.digest import digest_json
from srbench.schemas.event_data import RecipeChecked
from srbench.schemas.recipe import RecipeCapture
from srbench.schemas.target import Target
from srbench.schemas.wire import WireJSON

HASH_FIELDS = ("hash", "runtime_hash", "active_hash")
MAX_BODY = 4 * 1024 * 1024
REDACTED = "[redacted]"
SECRET = re.compile(r"(^|[_-])(api[_-]?key|key|token|secret|password|passwd|authorization|credentials?|"
                    r"private[_-]?key|access[_-]?key|bearer|cookie)$", re.I)
CONNECTION = re.compile(r"(^|[_-])(address|addr|host|hostname|port|url|uri|base[_-]?url|endpoint|dsn|socket)$",
                        re.I)

__all__ = ["api_base", "read_config", "capture_recipe", "check_unchanged", "redact"]


def api_base(target: Target) -> str | None:
    """The router's API origin (scheme://host:port of `preview_url`), or None without one."""
    if not target.preview_url:
        return None
    parts = urlsplit(target.preview_url)
    return f"{parts.scheme}://{parts.netloc}"


def redact(value: Any, path: str = "", found: list[str] | None = None) -> tuple[Any, list[str]]:
    """`value` with credentials and connection details replaced; returns (copy, redacted paths)."""
    found = [] if found is None else found
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            p = f"{path}.{k}" if path else str(k)
            if not isinstance(v, dict | list) and (SECRET.search(str(k)) or CONNECTION.search(str(k))):
                out[k] = REDACTED
                found.append(p)
            else:
                out[k] = redact(v, p, found)[0]
        return out, found
    if isinstance(value, list):
        return [redact(v, f"{path}[{i}]", found)[0] for i, v in enumerate(value)], found
    return value, found


def _headers(target: Target) -> dict[str, str]:
    env = target.preview_api_key_env or target.api_key_env
    key = os.environ.get(env) if env else None
    return {"authorization": f"Bearer {key}"} if key else {}


async def _get(client: aiohttp.ClientSession, url: str, headers: dict[str, str],
               timeout_s: float) -> tuple[Any, str | None]:
    """(parsed JSON, ETag); raises ValueError with one line on any failure."""
    try:
        async with asyncio.timeout(timeout_s):
            async with client.get(url, headers=headers, allow_redirects=False) as resp:
                body = await resp.content.read(MAX_BODY + 1)
                status, etag = resp.status, resp.headers.get("ETag")
    except TimeoutError:
        raise ValueError(f"GET {urlsplit(url).path} got no answer within {timeout_s:g}s") from None
    except aiohttp.ClientError as exc:
        raise ValueError(f"GET {urlsplit(url).path} failed: {type(exc).__name__}") from None
    if status != 200:
        raise ValueError(f"GET {urlsplit(url).path} answered HTTP {status}")
    if len(body) > MAX_BODY:
        raise ValueError(f"GET {urlsplit(url).path} answered more than {MAX_BODY} bytes")
    try:
        return json.loads(body), etag
    except ValueError:
        raise ValueError(f"GET {urlsplit(url).path} did not answer JSON") from None


def _hash_view(data: Any) -> WireJSON:
    if not isinstance(data, dict):
        raise ValueError("GET /config/hash did not answer an object")
    return {k: data.get(k) for k in (*HASH_FIELDS, "status")}


async def read_config(client: aiohttp.ClientSession, target: Target, timeout_s: float) -> WireJSON:
    """hash → config (+ETag) → recipes → hash, as read (raises ValueError with one line)."""
    base = api_base(target)
    assert base is not None
    h = _headers(target)
    before = _hash_view((await _get(client, base + "/config/hash", h, timeout_s))[0])
    config, etag = await _get(client, base + "/config/router", h, timeout_s)
    recipes, _ = await _get(client, base + "/config/router/recipes", h, timeout_s)
    after = _hash_view((await _get(client, base + "/config/hash", h, timeout_s))[0])
    if not isinstance(config, dict):
        raise ValueError("GET /config/router did not answer an object")
    if not isinstance(recipes, dict) or not isinstance(recipes.get("recipes"), list):
        raise ValueError("GET /config/router/recipes did not answer {etag, recipes: [...]}")
    return {"hash_before": before, "hash_after": after, "config": config, "config_etag": etag,
            "recipes_etag": recipes.get("etag"), "recipes": recipes["recipes"]}


def _problems(target: Target, got: WireJSON) -> list[str]:
    before, after = got["hash_before"], got["hash_after"]
    out = []
    if before.get("status") != "active":
        out.append(f"the router reports configuration status {before.get('status')!r}, not 'active'")
    if before != after:
        out.append(f"the configuration changed during the capture (hash {before.get('hash')} → {after.get('hash')})")
    seen = {f: before.get(f) for f in HASH_FIELDS}
    if any(v != target.config_hash for v in seen.values()):
        out.append("the router's " + ", ".join(f"{k} {v}" for k, v in seen.items()) +
                   f" do not all equal the pinned config_hash {target.config_hash}")
    if got["config_etag"] and got["recipes_etag"] and got["config_etag"] != got["recipes_etag"]:
        out.append(f"the config source changed between reading the config and its recipes (ETag "
                   f"{got['config_etag']} ≠ {got['recipes_etag']})")
    if not got["config_etag"]:
        out.append("GET /config/router sent no ETag: the config source cannot be tied to the recipes")
    return out


async def capture_recipe(client: aiohttp.ClientSession, target: Target, timeout_s: float) -> RecipeCapture:
    """The capture object of one MoM target (kind `recipe_capture`); `captured` false with a `limitation`."""
    empty = RecipeCapture(target_id=target.id, pinned_config_hash=target.config_hash, captured_at=time.time(),
                          captured=False, limitation=None, hash_before=None, hash_after=None, config_etag=None,
                          recipes_etag=None, config=None, recipes=None, redacted=[], projection_hash=None)
    if not target.preview_url or not target.config_hash:
        return empty.model_copy(update={"limitation": "capture_recipe needs a pinned config_hash and a preview_url "
                                                      "on the router's API port; no recipe was captured"})
    try:
        got = await read_config(client, target, timeout_s)
    except ValueError as exc:
        return empty.model_copy(update={"limitation": f"no recipe was captured: the router's config API: {exc}"})
    read = empty.model_copy(update={k: got[k] for k in ("hash_before", "hash_after", "config_etag", "recipes_etag")})
    problems = _problems(target, got)
    if problems:
        return read.model_copy(update={"limitation": "no recipe was captured: " + "; ".join(problems)})
    config, paths = redact(got["config"], "config")
    recipes, paths = redact(got["recipes"], "recipes", paths)
    return read.model_copy(update={"captured": True, "config": config, "recipes": recipes, "redacted": paths,
                                   "projection_hash": digest_json({"config": config, "recipes": recipes})})


async def check_unchanged(client: aiohttp.ClientSession, target: Target, capture: RecipeCapture,
                          timeout_s: float) -> RecipeChecked:
    """After the run: the hash and the config's ETag again; `unchanged` false (with `problem`) otherwise."""
    base = api_base(target)
    out = RecipeChecked(target_id=target.id, phase="after", hash=None, config_etag=None, unchanged=False, problem=None)
    if base is None or not capture.captured:
        return out.model_copy(update={"problem": "nothing was captured before the run"})
    try:
        h = _headers(target)
        now = _hash_view((await _get(client, base + "/config/hash", h, timeout_s))[0])
        etag = (await _get(client, base + "/config/router", h, timeout_s))[1]
    except ValueError as exc:
        return out.model_copy(update={"problem": f"the check after the run failed: {exc}"})
    out = out.model_copy(update={"hash": now, "config_etag": etag})
    before = capture.hash_before or {}
    if now != capture.hash_before or etag != capture.config_etag:
        return out.model_copy(update={"problem": (
            f"the router's configuration changed during the run (hash {before.get('hash')}"
            f" → {now.get('hash')}, ETag {capture.config_etag} → {etag})")})
    return out.model_copy(update={"unchanged": True})
