"""Bearer-token middleware: every route but /health needs the token (compared in constant time)."""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable

from aiohttp import web

from srbench.service.discovery import API_PREFIX

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
