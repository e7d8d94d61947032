"""Routes carry their types (issue 26, item 2): each handler is declared where it is written, with its path,
method, request body or query model and answer model, by the `route` decorator (FastAPI-style, in one
small module rather than aiohttp-pydantic, whose class-based views and own OpenAPI generator would change
the document and the error answers the tests pin).

The decorator records a `Route` in one registry; the service's router (`service.app`) and the
OpenAPI document (`service.api.openapi`) are both built from it, so what a route checks and what is
documented cannot drift. A handler that takes a ``req`` (body) or ``q`` (query) parameter, annotated with
the declared model, is given the request already parsed and validated by it (`service.api.http.parse` /
`query`: the body read up to the model's limit, parsed within its member budget in a worker thread,
problems capped); one that does not parses by itself (it checks something first: that the run exists).
A handler answers with an instance of its declared answer model, which the binding serialises in this
one place (``model_dump(mode="json", by_alias=True, exclude_unset=True)``: the fields the handler set, by
their wire names (a stored comparison's ``schema``), a null it set included, an optional field it left out
absent, as upstream's wire has them; keys sorted; 200, or 202
for an accepted job); a route whose status varies (201 created or 200 bound) answers with its model
`Status`. A route without an answer model (a stored object's own bytes) answers with its response.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import Literal, NamedTuple, TypeVar

from aiohttp import web
from pydantic import BaseModel

from srbench.service.api.http import ok, parse, query

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Status(NamedTuple):
    """An answer model with the status it is served with (a route that creates: 201, or 200 when it bound
    an existing one)."""

    answer: BaseModel
    status: int


Answered = web.StreamResponse | BaseModel | Status     # a handler answers with its answer model (or a response)
F = TypeVar("F", bound=Callable[..., Awaitable[Answered]])
Method = Literal["GET", "POST", "DELETE"]


class Route(NamedTuple):
    """One route of the API, as declared on its handler."""

    method: Method                  # the HTTP method
    path: str                       # under the API prefix
    name: str                       # the handler function's name, and the operationId
    summary: str                    # one line for the document
    body: type[BaseModel] | None = None         # the request body model (`service.api.requests`)
    query: type[BaseModel] | None = None        # the query string model
    answer: type[BaseModel] | None = None       # None: any JSON object (a stored record)
    created: bool = False           # 201 when it creates, 200 when it binds an existing one
    accepted: bool = False          # 202: accepted for background work (upstream's preparation jobs)
    aliases: tuple[str, ...] = ()   # full paths answering the same (upstream's bare /health)
    handler: Handler | None = None  # what aiohttp calls: parses the declared models, then the function
    optional: bool = False          # no body is the body {} (the model's defaults)


REGISTRY: dict[str, Route] = {}     # operationId → its route, in the order the handlers were declared


def _wanted(fn: Callable[..., Awaitable[Answered]], param: str, model: type[BaseModel] | None) -> bool:
    """Whether `fn` takes the parsed `model` as `param`; its annotation must name the declared model."""
    p = inspect.signature(fn).parameters.get(param)
    if p is None or model is None:
        return False
    hint = p.annotation if isinstance(p.annotation, str) else getattr(p.annotation, "__name__", "")
    if hint.rsplit(".", 1)[-1] != model.__name__:
        raise TypeError(f"{fn.__name__}({param}: {hint}) does not take the model its route declares "
                        f"({model.__name__})")
    return True


def _bound(fn: Callable[..., Awaitable[Answered]], body: type[BaseModel] | None, model: type[BaseModel] | None,
           answer: type[BaseModel] | None, optional: bool, status: int) -> Handler:
    """The aiohttp handler of `fn`: the declared body given as its `req` parameter, the declared query as
    its `q` parameter, when it takes them (one that does not parses by itself, after its own checks); an
    answer `fn` returns as its declared answer model is serialised by that model (JSON, keys sorted)."""
    wants_body, wants_query = _wanted(fn, "req", body), _wanted(fn, "q", model)

    async def handler(request: web.Request) -> web.StreamResponse:
        kwargs: dict[str, BaseModel] = {}
        if wants_body and body is not None:
            kwargs["req"] = await parse(request, body, optional=optional)
        if wants_query and model is not None:
            kwargs["q"] = query(request, model)
        result = await fn(request, **kwargs)
        if isinstance(result, web.StreamResponse):
            return result
        served, code = (result.answer, result.status) if isinstance(result, Status) else (result, status)
        if answer is None or not isinstance(served, answer):
            raise TypeError(f"{fn.__name__} answered a {type(served).__name__}, not its route's answer model "
                            f"({answer.__name__ if answer else 'a response'})")
        return ok(served.model_dump(mode="json", by_alias=True, exclude_unset=True), code)

    return functools.update_wrapper(handler, fn)          # its name and docstring; __wrapped__ is `fn`


def route(method: Method, path: str, summary: str, *, body: type[BaseModel] | None = None,
          query: type[BaseModel] | None = None, answer: type[BaseModel] | None = None, created: bool = False,
          accepted: bool = False, aliases: tuple[str, ...] = (), optional: bool = False) -> Callable[[F], F]:
    """Declare the decorated handler as the route `method` `path` (see `Route` for the rest); the
    function itself is returned unchanged, so it can still be called directly."""
    def bind(fn: F) -> F:
        name = fn.__name__
        if name in REGISTRY:
            raise ValueError(f"route {name} is declared twice ({REGISTRY[name].method} {REGISTRY[name].path} "
                             f"and {method} {path}); give the handler another name")
        REGISTRY[name] = Route(method, path, name, summary, body, query, answer, created, accepted, aliases,
                               _bound(fn, body, query, answer, optional, 202 if accepted else 200), optional)
        return fn
    return bind


def bound_routes(order: tuple[str, ...] = ()) -> list[Route]:
    """Every declared route: those `order` names first, in its order, then the others as declared."""
    first = [REGISTRY[name] for name in order if name in REGISTRY]
    return first + [r for r in REGISTRY.values() if r.name not in order]

