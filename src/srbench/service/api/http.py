"""Request/response helpers every handler module shares: strict JSON bodies validated by the contract's
pydantic models (`service.api_requests`), query strings likewise, and JSON answers.

A body costs time linear in its size and never holds the event loop: it is read up to its route's
limit (the model's `max_body`; `Content-Encoding` gzip/deflate decoded here, bounded, since the
service's server leaves bodies as sent: `service.server`), then decoded, parsed and validated in a
worker thread; a body whose objects hold more members than its route's budget (the model's
`max_members`) is refused while parsing, so validation errors are bounded too, and the problems listed
are capped (`stages.plan.pydantic_problems`). Every malformed body is a 4xx.
"""

from __future__ import annotations

import asyncio
import codecs
import itertools
import json
import re
import zlib
from typing import TYPE_CHECKING, Any, TypeVar

from aiohttp import web
from pydantic import BaseModel, ValidationError

if TYPE_CHECKING:
    from srbench.service.api.app import Service

from srbench.errors import InvalidInput, SrBenchError
from srbench.schemas.text import lone_surrogate_at
from srbench.schemas.wire import WireJSON
from srbench.stages.plan.problems import fail, pydantic_problems

SERVICE: web.AppKey[Service] = web.AppKey("service")      # the typed `service.api.app.Service`
MAX_BODY = 8 * 1024 * 1024          # the largest body (a recovery plan lists every cell of a large run)
SMALL_BODY = 64 * 1024              # a body of a few named fields: the default route limit
MAX_MEMBERS = 2_000                 # object members of a body of a few named fields: the default route budget
CHUNK = 1 << 16
_MEMBER = re.compile(rb'"\s*:')     # what ends every object member's name (and little else: an upper bound)
MAX_OFFSET = 10**12                 # beyond any page: an empty page (and within SQLite's integers)
M = TypeVar("M", bound=BaseModel)


def svc(request: web.Request) -> Service:
    return request.app[SERVICE]


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"number {text[:40]} is out of range")
    return value


class TooLarge(SrBenchError):
    """A request body over its route's limit."""

    code = "too_large"
    http_status = 413


class Unsupported(SrBenchError):
    """A body in an encoding or charset the service does not read."""

    code = "unsupported_media_type"
    http_status = 415


class _TooManyMembers(ValueError):
    pass


def _over_budget(raw: bytes, budget: int) -> bool:
    """Whether `raw` may hold more than `budget` object members, found before parsing it (parsing one
    huge object is a single call that would hold the interpreter): a byte count first, then a scan
    that stops at `budget` + 1 and lets other threads run between its steps."""
    if raw.count(b":") <= budget:
        return False
    return next(itertools.islice(_MEMBER.finditer(raw), budget, None), None) is not None


def _too_many(budget: int) -> str:
    return (f"request body: its objects hold more than {budget} members, the limit of this route; send only the "
            "fields the route documents")


def _members_within(budget: int) -> Any:
    """A json `object_pairs_hook` refusing a body whose objects hold more than `budget` members in all."""
    count = 0

    def hook(pairs: list[tuple[str, Any]]) -> WireJSON:
        nonlocal count
        count += len(pairs)
        if count > budget:
            raise _TooManyMembers(_too_many(budget))
        return dict(pairs)
    return hook


def _size(n: int) -> str:
    return f"{n // (1024 * 1024)} MiB" if n % (1024 * 1024) == 0 else f"{n // 1024} KiB"


def _too_large(request: web.Request, limit: int) -> TooLarge:
    return TooLarge(f"request body over {_size(limit)}, the limit of {request.method} {request.path}")


def _decoder(request: web.Request) -> Any:
    """A bounded decompressor for the body's Content-Encoding (None: as sent), or a 415 naming it."""
    enc = request.headers.get("Content-Encoding", "identity").strip().lower()
    if enc in ("", "identity"):
        return None
    if enc in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if enc == "deflate":
        return zlib.decompressobj(zlib.MAX_WBITS | 32)       # zlib-wrapped (what RFC 9110 means by deflate)
    raise Unsupported(f"request body: Content-Encoding {enc[:40]!r} is not supported; send the body plain or "
                      "as gzip or deflate")


async def read_body(request: web.Request, limit: int) -> bytes:
    """The body's bytes (decoded when gzip or deflate), refused with a 413 as soon as they pass `limit`
    and with a 400 when the Content-Encoding does not decode."""
    decoder = _decoder(request)
    if request.content_length is not None and request.content_length > limit:
        raise _too_large(request, limit)
    buf, sent = bytearray(), False
    try:
        async for chunk in request.content.iter_chunked(CHUNK):
            sent = sent or bool(chunk)
            if decoder is not None:
                chunk = decoder.decompress(chunk, limit + 1 - len(buf))
            buf += chunk
            if len(buf) > limit:
                raise _too_large(request, limit)
        if decoder is not None and sent and not decoder.eof:
            raise zlib.error("the compressed data ends early")
    except zlib.error as exc:
        enc = request.headers.get("Content-Encoding", "").strip().lower()
        raise InvalidInput(f"request body does not decode as its Content-Encoding {enc} says ({exc}); send valid "
                           f"{enc} data or leave the header out") from None
    return bytes(buf)


def _charset(request: web.Request) -> str:
    charset = request.charset or "utf-8"
    try:
        name = codecs.lookup(charset).name
    except LookupError:
        name = ""
    if name not in ("utf-8", "ascii"):
        raise Unsupported(f"request body: charset {charset[:40]!r} is not supported; send UTF-8 JSON")
    return "utf-8"


def decode_body(raw: bytes, charset: str = "utf-8", max_members: int = MAX_MEMBERS) -> WireJSON:
    """The body as a JSON object (blocking: called off the event loop)."""
    if _over_budget(raw, max_members):
        raise InvalidInput(_too_many(max_members))
    try:
        data = json.loads(raw.decode(charset), parse_constant=_no_constant, parse_float=_finite,
                          object_pairs_hook=_members_within(max_members))
    except RecursionError:
        raise InvalidInput("request body is nested too deeply") from None
    except _TooManyMembers as exc:
        raise InvalidInput(str(exc)) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"request body must be JSON ({str(exc).splitlines()[0][:120]})") from None
    if not isinstance(data, dict):
        raise InvalidInput("request body must be a JSON object")
    where = lone_surrogate_at(data)
    if where is not None:
        raise InvalidInput(f"request body: {where} is not valid Unicode text (it holds a lone surrogate such as "
                           "\\ud800); send UTF-8 text")
    return data


async def body(request: web.Request, limit: int = SMALL_BODY) -> WireJSON:
    """The body as a JSON object, read up to `limit` bytes and parsed off the event loop."""
    charset = _charset(request)
    return await asyncio.to_thread(decode_body, await read_body(request, limit), charset)


def _invalid(exc: ValidationError, what: str) -> InvalidInput:
    return fail(pydantic_problems(exc), what)


def _validate(raw: bytes | None, charset: str, model: type[M]) -> M:
    try:
        return model.model_validate({} if raw is None else
                                    decode_body(raw, charset, getattr(model, "max_members", MAX_MEMBERS)))
    except ValidationError as exc:
        raise _invalid(exc, "request body") from None


async def parse(request: web.Request, model: type[M], *, optional: bool = False) -> M:
    """The request body as `model` (every field checked by it), read up to the model's `max_body` and
    parsed (within its `max_members`) and validated in a worker thread; with `optional`, no body means {}."""
    charset = _charset(request)
    raw = await read_body(request, getattr(model, "max_body", SMALL_BODY)) \
        if request.can_read_body or not optional else None
    return await asyncio.to_thread(_validate, raw, charset, model)


def query(request: web.Request, model: type[M]) -> M:
    """The query string as `model` (a repeated name keeps its first value)."""
    values = {k: request.query.get(k) for k in request.query}
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        raise _invalid(exc, "query") from None


def ok(value: Any, status: int = 200) -> web.Response:
    return web.json_response(value, status=status, dumps=lambda v: json.dumps(v, sort_keys=True))
