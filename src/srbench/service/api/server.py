"""The aiohttp server the service and the Dashboard run on: request bodies arrive as sent (their
Content-Encoding is decoded, bounded, by `service.http.read_body`, so a body that lies about it is one 4xx
and the keep-alive connection lives), and an answer aiohttp's own HTTP parser gives (bad framing, a
header too long) is the project's one-line JSON error ``{"error", "code"}``, never text or a traceback.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from aiohttp import web
from aiohttp.web_protocol import RequestHandler

from srbench.schemas.text import one_line
from srbench.service.wire.projections import error_body


class _JsonErrors(RequestHandler):
    def handle_error(self, request: Any, status: int = 500, exc: BaseException | None = None,
                     message: str | None = None) -> web.StreamResponse:
        super().handle_error(request, status, exc, message)          # logs it; raises if an answer was sent
        if status >= 500:
            text, code = f"internal error: {type(exc).__name__ if exc else HTTPStatus(status).phrase}", "internal"
        else:
            first = (message or "").strip().splitlines()
            text = one_line(first[0].rstrip(": ") if first else HTTPStatus(status).phrase)
            code = "bad_request" if status == 400 else "http_error"
        resp = web.json_response(error_body(f"malformed HTTP request: {text}" if status < 500 else text, code),
                                 status=status)
        resp.force_close()                     # the framing is unknown after a parser error: a new connection
        return resp


class _Server(web.Server):
    def __call__(self) -> RequestHandler:
        return _JsonErrors(self, loop=self._loop, **self._kwargs)


class Runner(web.AppRunner):
    """`web.AppRunner` with bodies as sent and the parser's errors in the JSON error shape."""

    def __init__(self, app: web.Application, **kwargs: Any) -> None:
        super().__init__(app, auto_decompress=False, **kwargs)

    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        server.__class__ = _Server
        return server
