"""Request/response helpers every handler module shares: strict JSON bodies, field checks, pages."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from srbench.errors import InvalidInput
from srbench.schemas.text import lone_surrogate_at

SERVICE: web.AppKey[Any] = web.AppKey("service", object)
MAX_BODY = 8 * 1024 * 1024          # a request body (a recovery plan lists every cell of a large run)


def svc(request: web.Request) -> Any:
    return request.app[SERVICE]


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"number {text[:40]} is out of range")
    return value


def strict_loads(text: str) -> Any:
    """JSON without NaN/Infinity and without numbers that overflow to infinity."""
    return json.loads(text, parse_constant=_no_constant, parse_float=_finite)


async def body(request: web.Request) -> dict[str, Any]:
    try:
        data = await request.json(loads=strict_loads)
    except RecursionError:
        raise InvalidInput("request body is nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"request body must be JSON ({str(exc).splitlines()[0][:120]})") from None
    if not isinstance(data, dict):
        raise InvalidInput("request body must be a JSON object")
    where = lone_surrogate_at(data)
    if where is not None:
        raise InvalidInput(f"request body: {where} is not valid Unicode text (it holds a lone surrogate such as "
                           "\\ud800); send UTF-8 text")
    return data


def only(data: dict[str, Any], allowed: set[str]) -> None:
    extra = sorted(set(data) - allowed)
    if extra:
        raise InvalidInput(f"unknown field(s): {', '.join(extra)}")


def page(request: web.Request, default: int = 100, maximum: int = 100) -> tuple[int, int]:
    try:
        offset = int(request.query.get("offset", "0"))
        limit = int(request.query.get("limit", str(default)))
    except ValueError:
        raise InvalidInput("offset and limit must be integers") from None
    if offset < 0 or not (1 <= limit <= maximum):
        raise InvalidInput(f"offset must be >= 0 and limit within 1..{maximum}")
    return min(offset, 10**12), limit   # beyond any page: an empty page (and within SQLite's integers)


def ok(value: Any, status: int = 200) -> web.Response:
    return web.json_response(value, status=status, dumps=lambda v: json.dumps(v, sort_keys=True))
