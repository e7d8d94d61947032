"""Request/response helpers every handler module shares: strict JSON bodies validated by the contract's
pydantic models (`service.api_requests`), query strings likewise, and JSON answers.

A body costs time linear in its size and never holds the event loop nor, for long, the interpreter
(issue 38, item 6: no request holds `/health` over 100 ms): it is read up to its route's limit (the
model's `max_body`; `Content-Encoding` gzip/deflate decoded here, bounded, since the service's server
leaves bodies as sent: `service.server`), then, before any parse, its bytes are counted against the
budgets its route declares with its model (`max_members` object members, `max_lists` arrays,
`max_objects` objects, `max_values` values, `max_object_members` in any one object: upper bounds counted in C) and a body
over one is refused in one line naming it; only then is it decoded, parsed and validated in a worker
thread. Within those budgets no single step of the parse (which holds the interpreter) runs long, and
the problems listed are capped (`stages.plan.pydantic_problems`). Every malformed body is a 4xx.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import gc
import json
import re
import threading
import zlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from aiohttp import web
from pydantic import BaseModel, ValidationError

if TYPE_CHECKING:
    from srbench.service.app import Service

from srbench.errors import InvalidInput, SrBenchError
from srbench.schemas.text import lone_surrogate_at
from srbench.schemas.wire import WireJSON
from srbench.stages.plan.problems import fail, pydantic_problems

SERVICE: web.AppKey[Service] = web.AppKey("service")      # the typed `service.app.Service`
MAX_BODY = 8 * 1024 * 1024          # the largest body (a recovery plan lists every cell of a large run)
SMALL_BODY = 64 * 1024              # a body of a few named fields: the default route limit
MAX_MEMBERS = 2_000                 # object members of a body of a few named fields: the default route budget
MAX_LISTS = 20_000                  # arrays in a body: the default route budget
MAX_OBJECTS = 50_000                # objects in a body: the default route budget
MAX_VALUES = 250_000                # values in a body (counted by its commas): the default route budget
MAX_OBJECT_MEMBERS = 10_000         # members of any one object (parsed in one uninterrupted step): the default
CHUNK = 1 << 16
_WHITESPACE = b" \t\r\n"            # JSON's: between a member's name and its colon (`_over_budget`)
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b"{}:")    # deleted, what is left shows objects' members
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")   # a surrogate's escape: only then can a parsed string hold one
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


class Budget(NamedTuple):
    """What a route's body may hold (declared with its model: `service.api.requests.Body`)."""

    members: int = MAX_MEMBERS      # object members in all (validation errors are bounded by it)
    lists: int = MAX_LISTS          # arrays in all
    objects: int = MAX_OBJECTS      # objects in all (each one the garbage collector walks while the parse runs)
    values: int = MAX_VALUES        # values in all, counted by their separating commas
    object_members: int = MAX_OBJECT_MEMBERS    # members of any one object (~2.5 µs each with distinct names)

    @classmethod
    def of(cls, model: type[BaseModel]) -> Budget:
        return cls(getattr(model, "max_members", MAX_MEMBERS), getattr(model, "max_lists", MAX_LISTS),
                   getattr(model, "max_objects", MAX_OBJECTS), getattr(model, "max_values", MAX_VALUES),
                   getattr(model, "max_object_members", MAX_OBJECT_MEMBERS))


def _over_budget(raw: bytes, budget: int) -> bool:
    """Whether `raw` may hold more than `budget` object members, found before parsing it (parsing one
    huge object is a single call that would hold the interpreter): its colons, then, when there are more,
    the ends of its members' names (a quote then a colon, whitespace left out)."""
    if raw.count(b":") <= budget:
        return False
    return raw.translate(None, _WHITESPACE).count(b'":') > budget


def _too_many(budget: int) -> str:
    return (f"request body: its objects hold more than {budget} members, the limit of this route; send only the "
            "fields the route documents")


def _flat_object(raw: bytes, most: int) -> bool:
    """Whether `raw` may hold an object of more than `most` members none of which is an object
    (json builds it in one step): that many colons with no brace between them (two C passes, ~3 ms a MiB)."""
    return b":" * (most + 1) in raw.translate(None, _NOT_STRUCTURE)


def over_budget(raw: bytes, budget: Budget) -> str | None:
    """The one-line refusal of a body whose bytes may hold more than `budget` allows, else None. Each count
    is an upper bound taken in C before anything is parsed (a bracket, colon or comma inside a string
    counts too), so the parse that follows never runs long in one step: json builds an object's members
    and an array's values without letting other threads run, and a list or dict with each value."""
    if _over_budget(raw, budget.members):
        return _too_many(budget.members)
    if raw.count(b"[") > budget.lists:
        return (f"request body: it holds more than {budget.lists} arrays, the limit of this route; send only the "
                "fields the route documents")
    if raw.count(b"{") > budget.objects:
        return (f"request body: it holds more than {budget.objects} objects, the limit of this route; send only the "
                "fields the route documents, or split the work")
    if raw.count(b",") >= budget.values:
        return (f"request body: it holds more than {budget.values} values, the limit of this route; send only the "
                "fields the route documents, or split the work")
    if _flat_object(raw, budget.object_members):
        return _too_wide(budget.object_members)
    return None


def _too_wide(most: int) -> str:
    return (f"request body: an object in it holds more than {most} members, the limit of this route; send only "
            "the fields the route documents")


def _members_within(budget: int, most: int = MAX_OBJECT_MEMBERS) -> Any:
    """A json `object_pairs_hook` refusing a body whose objects hold more than `budget` members in all, or one
    object more than `most` (one whose members are objects passes the byte scan)."""
    count = 0

    def hook(pairs: list[tuple[str, Any]]) -> WireJSON:
        nonlocal count
        count += len(pairs)
        if count > budget:
            raise _TooManyMembers(_too_many(budget))
        if len(pairs) > most:
            raise _TooManyMembers(_too_wide(most))
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


def decode_body(raw: bytes, charset: str = "utf-8", budget: Budget | None = None) -> WireJSON:
    """The body as a JSON object (blocking: called off the event loop), refused before parsing when its
    bytes may hold more than `budget` allows."""
    budget = budget or Budget()
    refused = over_budget(raw, budget)
    if refused is not None:
        raise InvalidInput(refused)
    try:
        data = json.loads(raw.decode(charset), parse_constant=_no_constant, parse_float=_finite,
                          object_pairs_hook=_members_within(budget.members, budget.object_members))
    except RecursionError:
        raise InvalidInput("request body is nested too deeply") from None
    except _TooManyMembers as exc:
        raise InvalidInput(str(exc)) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"request body must be JSON ({str(exc).splitlines()[0][:120]})") from None
    if not isinstance(data, dict):
        raise InvalidInput("request body must be a JSON object")
    where = lone_surrogate_at(data) if _SURROGATE.search(raw) else None    # valid UTF-8 bytes hold none
    if where is not None:
        raise InvalidInput(f"request body: {where} is not valid Unicode text (it holds a lone surrogate such as "
                           "\\ud800); send UTF-8 text")
    return data


def _invalid(exc: ValidationError, what: str) -> InvalidInput:
    return fail(pydantic_problems(exc), what)


_PAUSES = [0]                       # parses of large bodies running, each with the collector paused
_PAUSES_LOCK = threading.Lock()


@contextlib.contextmanager
def _collector_paused(size: int) -> Iterator[None]:
    """Python's cyclic garbage collector paused while a body over 64 KiB is parsed and validated, until what
    they made is freed: the parse makes no cycles (what it drops, reference counting frees), but its ~100k new
    objects would trigger passes that walk them all while they are alive (10-18 ms each at load 5; full passes
    walk only what is not frozen: runs/heap.py). With several such parses at once, the last one to finish
    resumes it."""
    if size <= SMALL_BODY:
        yield
        return
    with _PAUSES_LOCK:
        _PAUSES[0] += 1
        gc.disable()
    try:
        yield
    finally:
        with _PAUSES_LOCK:
            _PAUSES[0] -= 1
            if _PAUSES[0] == 0:
                gc.enable()


def _checked(raw: bytes | None, charset: str, model: type[M]) -> M | InvalidInput:
    """The body as `model`, or the one-line error refusing it (returned, not raised: a raised error's
    frames and context would hold the parsed body in a cycle only the collector frees)."""
    try:
        return model.model_validate({} if raw is None else decode_body(raw, charset, Budget.of(model)))
    except ValidationError as exc:
        return _invalid(exc, "request body")
    except InvalidInput as exc:
        exc.__context__ = None
        return exc.with_traceback(None)


def _validate(raw: bytes | None, charset: str, model: type[M]) -> M:
    with _collector_paused(0 if raw is None else len(raw)):     # resumed once the parse's objects are freed
        out = _checked(raw, charset, model)
    if isinstance(out, InvalidInput):
        raise out
    return out


async def parse(request: web.Request, model: type[M], *, optional: bool = False) -> M:
    """The request body as `model` (every field checked by it), read up to the model's `max_body` and
    parsed (within its budgets: `Budget`) and validated in a worker thread; with `optional`, no body means {}."""
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
