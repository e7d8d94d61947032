"""Typed errors. Every error the user can cause is one of these; the CLI prints it as one line."""

from __future__ import annotations


class SrBenchError(Exception):
    """Base class: a problem the user can read and act on. `code` is stable for API clients."""

    code = "error"
    http_status = 400

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else self.code


class InvalidInput(SrBenchError):
    """The request, manifest or file given is malformed or contradicts itself."""

    code = "invalid_input"


class NotFound(SrBenchError):
    """A named run, dataset, target or object does not exist."""

    code = "not_found"
    http_status = 404


class Conflict(SrBenchError):
    """The request conflicts with stored state (e.g. an idempotency key bound to another plan)."""

    code = "conflict"
    http_status = 409


class IntegrityError(SrBenchError):
    """Stored bytes do not match their digest, or a declared hash does not match the content."""

    code = "integrity_error"
    http_status = 422


class SourceUnavailable(SrBenchError):
    """A pinned upstream source cannot be read (no network, gated, missing file)."""

    code = "source_unavailable"
    http_status = 424


class Unauthorized(SrBenchError):
    code = "unauthorized"
    http_status = 401


class ServiceUnavailable(SrBenchError):
    """The CLI cannot reach the service."""

    code = "service_unavailable"
    http_status = 503
