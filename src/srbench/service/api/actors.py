"""Who is asking: the service token, the proxy's actor headers, roles, ownership and scope.

Every route, /health too (as upstream's service has it), needs the bearer token (compared in constant
time); a wrong or missing token is a 403. Token checks are rate-limited for the whole service
(`limiter.CheckLimiter`: 10 checks a second in all, a wrong token spends one; an attempt over the budget
waits its turn, addresses that guessed wrong least first, or is a 429 with Retry-After when it is the
farthest back of a full queue); a keep-alive connection that presented the right token is not checked
against the budget again. A caller holding the token may name an actor with ``X-SR-Bench-Actor-ID`` (1-256
characters) and ``X-SR-Bench-Actor-Role`` (admin, write or read) — the Dashboard's proxy does, for
its signed-in user. Without the headers the caller is the local operator (``local``): it sees and
may change everything, as before actors existed.

- `admin` sees every run and experiment; `write` and `read` see only their own (another actor's run
  is a 404, as if it did not exist); datasets and preparations are shared, as upstream has them.
- `read` may only read: GET, and POST /comparisons (model-free). Anything else is a 403.
- The operator's own routes (target registration, store maintenance, shutdown, raw objects, push and
  pull) are refused to every named actor but admin.
- What an actor creates is owned by it (`run_owners`; a run without a row is the local operator's).
"""

from __future__ import annotations

import hmac
import re
import sqlite3
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aiohttp import web

from srbench.discovery import API_PREFIX
from srbench.errors import NotFound
from srbench.service.api.http import svc
from srbench.service.api.limiter import CheckLimiter, source_of
from srbench.service.journal import owners
from srbench.service.wire.projections import error_body

if TYPE_CHECKING:
    from srbench.service.journal.writer import Journal

ACTOR_HEADER = "X-SR-Bench-Actor-ID"
ROLE_HEADER = "X-SR-Bench-Actor-Role"
ROLES = ("admin", "write", "read")
MAX_ACTOR_CHARS = 256
LOCAL = "local"
READ_POSTS = frozenset({"/comparisons"})
OPERATOR_ONLY = re.compile(r"/(targets(/check)?|benchmark-options|shutdown|store/.*|objects/.*|runs/[^/]+/(push|pull))")
RUN_PATH = re.compile(r"/runs/([^/]+)(/.*)?")

@dataclass(frozen=True)
class Actor:
    id: str
    role: str          # local, admin, write or read

    @property
    def scope(self) -> str | None:
        """The owner whose things this actor sees; None: everything (the local operator, admin)."""
        return None if self.role in (LOCAL, "admin") else self.id

    @property
    def owner(self) -> str:
        """Who owns what this actor creates."""
        return LOCAL if self.role == LOCAL else self.id

    @property
    def named(self) -> bool:
        """A proxied actor: registered targets and the operator's options only (upstream's policy)."""
        return self.role != LOCAL


LOCAL_ACTOR = Actor(LOCAL, LOCAL)


ACTOR_KEY: web.RequestKey[Actor] = web.RequestKey("sr_actor", Actor)


def actor_of(request: web.Request) -> Actor:
    return request.get(ACTOR_KEY, LOCAL_ACTOR)


def owner_of(journal: Journal, run_id: str) -> str:
    owner = owners.run_owner(journal, run_id)
    return LOCAL if owner is None else owner


def record_owner(c: sqlite3.Connection, run_id: str, owner: str) -> None:
    """In the run's own insert transaction: a run is never visible without its owner."""
    if owner != LOCAL:
        owners.set_run_owner(c, run_id, owner)


def check_visible(journal: Journal, actor: Actor, run_id: str) -> None:
    """Another owner's run is not found (its existence is not revealed)."""
    if actor.scope is not None and owner_of(journal, run_id) != actor.scope:
        raise NotFound(f"no run {run_id!r}")


def _deny(message: str, code: str, status: int = 403) -> web.Response:
    return web.json_response(error_body(message, code), status=status)


class TokenCheck:
    """The service token, checked at most as often as `limiter` allows; the connections that presented
    it are remembered (weakly) so their next requests cost no check."""

    def __init__(self, token: str, limiter: CheckLimiter | None = None) -> None:
        self._expected = token.encode()
        self.limiter = limiter or CheckLimiter()
        self._proven: weakref.WeakSet[Any] = weakref.WeakSet()

    async def refusal(self, request: web.Request) -> web.Response | None:
        """None when the request carries the token, else the answer that refuses it."""
        header = request.headers.get("Authorization", "")
        given = header[7:].encode("utf-8", "surrogateescape") if header.startswith("Bearer ") else b""
        wrong = _deny("Service authorization required: missing or wrong service token", "unauthorized")
        if not given:                                        # nothing to guess with: no check spent
            return wrong
        conn = request.transport
        if conn is not None and conn in self._proven and hmac.compare_digest(given, self._expected):
            return None
        source = source_of(request.remote)
        if not await self.limiter.admit(source):
            wait = self.limiter.retry_after()
            busy = _deny(f"Too many service tokens are being tried: token checks are limited to "
                         f"{self.limiter.rate:g} a second in all, addresses that sent wrong tokens last; retry in "
                         f"{wait} s", "rate_limited", 429)
            busy.headers["Retry-After"] = str(wait)
            return busy
        if not hmac.compare_digest(given, self._expected):
            self.limiter.settle(source, right=False)
            return wrong
        self.limiter.settle(source, right=True)
        try:
            self._proven.add(conn)
        except TypeError:                                    # a transport that cannot be remembered weakly
            pass
        return None


def _identify(request: web.Request) -> Actor | web.Response:
    actor, role = request.headers.get(ACTOR_HEADER), request.headers.get(ROLE_HEADER)
    if actor is None and role is None:
        return LOCAL_ACTOR
    if not actor or role not in ROLES or len(actor) > MAX_ACTOR_CHARS or not actor.isprintable():
        return _deny("Invalid actor identity: X-SR-Bench-Actor-ID must be 1-256 printable characters and "
                     "X-SR-Bench-Actor-Role one of admin, write, read", "invalid_actor")
    return Actor(actor, role)


def access_middleware(token: str, limiter: CheckLimiter | None = None) -> Callable[..., Awaitable[web.StreamResponse]]:
    check = TokenCheck(token, limiter)

    @web.middleware
    async def middleware(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                         ) -> web.StreamResponse:
        refused = await check.refusal(request)
        if refused is not None:
            return refused
        found = _identify(request)
        if isinstance(found, web.Response):
            return found
        route = request.path.removeprefix(API_PREFIX)
        if found.role == "read" and request.method not in ("GET", "HEAD") and not (
                request.method == "POST" and route in READ_POSTS):
            return _deny("Write access is required: the read role may only read and compare", "read_only")
        if found.named and found.role != "admin" and OPERATOR_ONLY.fullmatch(route) and not (
                request.method == "GET" and route in ("/targets", "/benchmark-options")):
            return _deny("This operation is reserved to the service operator", "operator_only")
        request[ACTOR_KEY] = found
        match = RUN_PATH.fullmatch(route)
        if match and found.scope is not None:
            check_visible(svc(request).journal, found, match.group(1))
        return await handler(request)

    return middleware
