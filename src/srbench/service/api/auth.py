"""Bearer-token middleware: every route but /health needs the token (compared in constant time); a
non-loopback listen needs a strong one (`check_listen_token`)."""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable

from aiohttp import web

from srbench.discovery import API_PREFIX, is_loopback, token_env_name
from srbench.errors import InvalidInput

MIN_TOKEN_CHARS = 16
MIN_TOKEN_DISTINCT = 8       # "aaaa…", "abab…" or "12341234…" are long but guessable
MAKE_TOKEN = "python3 -c 'import secrets; print(secrets.token_urlsafe(32))'"

OPEN_PATHS = frozenset({API_PREFIX + "/health"})


def token_middleware(token: str) -> Callable[..., Awaitable[web.StreamResponse]]:
    expected = token.encode()

    @web.middleware
    async def middleware(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                         ) -> web.StreamResponse:
        if request.path in OPEN_PATHS:
            return await handler(request)
        header = request.headers.get("Authorization", "")
        given = header[7:].encode() if header.startswith("Bearer ") else b""
        if not hmac.compare_digest(given, expected):
            return web.json_response({"error": {"code": "unauthorized",
                                                "message": "missing or wrong service token"}}, status=401)
        return await handler(request)

    return middleware


def weakness(secret: str) -> str | None:
    """Why `secret` is too weak for a non-loopback listen (shorter than 16 characters, or fewer than 8
    different characters: low entropy), or None. The service token and the Dashboard's keys share it."""
    if len(secret) < MIN_TOKEN_CHARS:
        return f"has {len(secret)} characters (at least {MIN_TOKEN_CHARS} are needed)"
    if len(set(secret)) < MIN_TOKEN_DISTINCT:
        return f"uses only {len(set(secret))} different characters (at least {MIN_TOKEN_DISTINCT} are needed)"
    return None


def check_listen_token(host: str, token: str) -> None:
    """A non-loopback listen refuses a weak token (`weakness`), saying how to make a good one. A loopback
    listen takes any token."""
    if is_loopback(host):
        return
    weak = weakness(token)
    if weak is not None:
        raise InvalidInput(f"a non-loopback listen on {host} needs a strong service token: {token_env_name()} "
                           f"{weak}; make one with {MAKE_TOKEN}", code="weak_token")
