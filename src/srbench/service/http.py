"""Request/response helpers every handler module shares: strict JSON bodies validated by the contract's
pydantic models (`service.api_requests`), query strings likewise, and JSON answers."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from aiohttp import web
from pydantic import BaseModel, ValidationError

from srbench.errors import InvalidInput
from srbench.schemas.text import lone_surrogate_at

SERVICE: web.AppKey[Any] = web.AppKey("service", object)
MAX_BODY = 8 * 1024 * 1024          # a request body (a recovery plan lists every cell of a large run)
MAX_OFFSET = 10**12                 # beyond any page: an empty page (and within SQLite's integers)
M = TypeVar("M", bound=BaseModel)


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


def _invalid(exc: ValidationError, what: str) -> InvalidInput:
    from srbench.stages.plan import fail, pydantic_problems

    return fail(pydantic_problems(exc), what)


async def parse(request: web.Request, model: type[M], *, optional: bool = False) -> M:
    """The request body as `model` (every field checked by it); with `optional`, no body means {}."""
    data = await body(request) if request.can_read_body or not optional else {}
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise _invalid(exc, "request body") from None


def query(request: web.Request, model: type[M]) -> M:
    """The query string as `model` (a repeated name keeps its first value)."""
    values = {k: request.query.get(k) for k in request.query}
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        raise _invalid(exc, "query") from None


def ok(value: Any, status: int = 200) -> web.Response:
    return web.json_response(value, status=status, dumps=lambda v: json.dumps(v, sort_keys=True))
