"""Typed errors. Every error the user can cause is one of these; the CLI prints it as one line."""

from __future__ import annotations

import errno
import os
import re
import sqlite3
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:                   # (annotations only: this module imports nothing outside the standard library)
    from pydantic import JsonValue


class SrBenchError(Exception):
    """Base class: a problem the user can read and act on. `code` is stable for API clients."""

    code = "error"
    http_status = 400

    def __init__(self, message: str, *, code: str | None = None, details: Mapping[str, JsonValue] | None = None
                 ) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.details: dict[str, JsonValue] = dict(details or {})   # extra fields of the API's error body (JSON)

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


class DamagedObject(IntegrityError):
    """A stored object whose bytes no longer hash to its name (a disk fault, a truncated copy): it is
    never served as good. `store verify --repair` can fetch a good copy from a second store."""

    code = "damaged_object"
    http_status = 503

    def __init__(self, digest: str, detail: str = "") -> None:
        super().__init__(f"damaged object {digest}{detail}; run `sr-bench store verify` (with `--repair` "
                         "to fetch a good copy from SR_BENCH_REPAIR_FROM)")
        self.digest = digest


class StorageFull(SrBenchError):
    """The store's disk or quota is full: nothing more can be written until space is freed."""

    code = "insufficient_storage"
    http_status = 507


class StorageFailed(SrBenchError):
    """The store cannot be written (an I/O error, a read-only filesystem); reads may still work."""

    code = "storage_unavailable"
    http_status = 503


_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT}
_FAILED_ERRNOS = {errno.EIO, errno.EROFS}


def storage_fault(exc: BaseException) -> SrBenchError | None:
    """The typed error for a resource-exhaustion or storage fault (ENOSPC, EDQUOT, EIO, a read-only
    filesystem, SQLite's "database or disk is full"/"disk I/O error"/"readonly database", a journal whose pages
    are damaged), else None."""
    if isinstance(exc, StorageFull | StorageFailed):
        return exc
    if isinstance(exc, OSError) and exc.errno in _FULL_ERRNOS | _FAILED_ERRNOS:
        where = f" ({exc.filename})" if exc.filename else ""
        what = os_strerror(exc.errno)
        if exc.errno in _FULL_ERRNOS:
            return StorageFull(f"the store is out of space: {what}{where}; free space on its disk, then "
                               "continue a stopped run with `sr-bench recover-plan RUN_ID --mode undispatched`")
        return StorageFailed(f"the store cannot be written: {what}{where}; reads still work")
    if isinstance(exc, sqlite3.OperationalError):
        text = str(exc).lower()
        if "full" in text:
            return StorageFull(f"the store is out of space: the journal says '{exc}'; free space on its disk, then "
                               "continue a stopped run with `sr-bench recover-plan RUN_ID --mode undispatched`")
        if "disk i/o" in text or "readonly" in text or "read-only" in text:
            return StorageFailed(f"the store cannot be written: the journal says '{exc}'; reads still work")
    if isinstance(exc, sqlite3.DatabaseError) and ("malformed" in str(exc) or "not a database" in str(exc)):
        return StorageFailed(f"the store's journal is damaged: SQLite says '{exc}'; nothing was changed: restore "
                             "journal.sqlite3 from a copy of the store (or try `sqlite3 journal.sqlite3 .recover`), "
                             "or give another --store")
    return None


_URL = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://)([^\s'\"<>]*)")
_HOST_PORT = re.compile(r"(\[[^\]]*\]|[^:@\[\]]*)(:\d*)?")       # an authority without userinfo


def _userinfo_end(rest: str) -> int:
    """Where the userinfo of a URL's authority ends in `rest` (the URL after `scheme://`): after its last
    ``@`` (-1: none). The authority ends at the first ``/``, ``?`` or ``#``, so an ``@`` in the path stays
    (``https://host/a@b``). An authority that is no host[:port] and an ``@`` further on is a secret holding an
    unencoded ``/`` (``s3://KEY:se/cret@bucket/x``): its userinfo ends at the last ``@`` of its segment."""
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    if "@" in authority:
        return authority.rindex("@")
    at = rest.find("@")
    if at < 0 or _HOST_PORT.fullmatch(authority):
        return -1
    return rest[:at + len(re.split(r"[/?#]", rest[at:], maxsplit=1)[0])].rindex("@")


def hide_credentials(text: str) -> str:
    """`text` (a URL, or a message naming URLs) with the user name and password of each URL replaced by
    ``***`` (``https://u:secret@host/x`` → ``https://***@host/x``): what a message or an answer may show.
    Only the authority's userinfo is hidden: ``https://host/users/@me`` is shown as written."""
    def hide(m: re.Match[str]) -> str:
        end = _userinfo_end(m[2])
        return m[0] if end < 0 else f"{m[1]}***{m[2][end:]}"
    return _URL.sub(hide, text)


def os_strerror(code: int | None) -> str:
    return os.strerror(code) if code else "storage error"


class SourceUnavailable(SrBenchError):
    """A pinned upstream source cannot be read (no network, gated, missing file)."""

    code = "source_unavailable"
    http_status = 424


class Unauthorized(SrBenchError):
    code = "unauthorized"
    http_status = 401


class Forbidden(SrBenchError):
    """The caller may not do this (a wrong token, the read role, another actor's experiment)."""

    code = "forbidden"
    http_status = 403


class ServiceUnavailable(SrBenchError):
    """The CLI cannot reach the service."""

    code = "service_unavailable"
    http_status = 503
