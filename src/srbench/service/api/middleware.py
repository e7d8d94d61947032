"""The service's HTTP middlewares: errors as upstream's JSON body (``{"error": message, "code": code}``, one line;
a storage or credential fault named, never a traceback) and ``Cache-Control: no-store`` on every answer."""

from __future__ import annotations

import logging
from typing import Any

from aiohttp import web

from srbench.errors import DamagedObject, SrBenchError, storage_fault
from srbench.schemas.text import one_line
from srbench.service.api.faults import record_damage
from srbench.service.api.http import SERVICE
from srbench.service.store.env_file import credential_fault
from srbench.service.wire.projections import error_body

log = logging.getLogger("srbench.service")


@web.middleware
async def error_middleware(request: web.Request, handler: Any) -> web.StreamResponse:
    try:
        return await handler(request)
    except SrBenchError as exc:
        if isinstance(exc, DamagedObject):
            record_damage(request.app[SERVICE], exc, request.match_info.get("run_id"),
                          f"{request.method} {request.path}")
        return _error(exc)
    except web.HTTPRequestEntityTooLarge:
        return web.json_response(error_body("request body over 8 MiB", "too_large"), status=413)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status, "http_error")
        return web.json_response(error_body(exc.reason, code), status=exc.status)
    except Exception as exc:
        fault = storage_fault(exc)
        if fault is not None:          # a full or failing disk: a named 507/503, the service keeps serving reads
            log.warning("storage fault on %s %s: %s", request.method, request.path, fault.message)
            return _error(fault)
        fault = credential_fault(exc, request.app[SERVICE].store_dir)
        if fault is not None:          # the service's environment lacks object-store credentials: say where
            log.warning("credential fault on %s %s: %s", request.method, request.path, type(exc).__name__)
            return _error(fault)
        log.exception("internal error on %s %s", request.method, request.path)
        return web.json_response(error_body(f"internal error: {type(exc).__name__}", "internal"), status=500)


def _error(exc: SrBenchError) -> web.Response:
    # one line, whatever the request put into it (a field name with a newline, say)
    return web.json_response(error_body(one_line(exc.message), exc.code, **exc.details), status=exc.http_status)


@web.middleware
async def no_store_middleware(request: web.Request, handler: Any) -> web.StreamResponse:
    resp = await handler(request)
    resp.headers["Cache-Control"] = "no-store"
    return resp
