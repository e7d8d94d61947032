"""Whether an http(s) object store answers at all. fsspec's http `exists` answers False when the server
cannot be reached (a refused connection, an unknown host, a timeout), which read as "no object store"
(a pull) or as an object no source holds (a repair); asked strictly, the connection error is seen."""

from __future__ import annotations

from typing import Any

from srbench.cas.remote import HTTP, open_filesystem
from srbench.discovery import CONNECT_TIMEOUT_S
from srbench.errors import hide_credentials


def unreachable(url: str, fs: Any = None) -> str | None:
    """Why the http(s) server of `url` could not be reached (the connection error, one line, no credentials),
    or None: it answered (any HTTP status), or `url` is not http(s)."""
    if fs is None:
        try:
            fs, _root = open_filesystem(url)
        except Exception:  # noqa: BLE001 - an unknown protocol, a missing package: the caller's open says which
            return None
    protocols = fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,)
    if not HTTP & set(protocols):
        return None
    try:
        fs.exists(url, strict=True)
    except TimeoutError as exc:    # fsspec's FSTimeoutError (an asyncio timeout) says nothing of its own
        return f"no connection within {CONNECT_TIMEOUT_S:g} s ({type(exc).__name__})"
    except OSError as exc:         # aiohttp's connection errors and timeouts are OSErrors; an HTTP status is not
        first = str(exc).splitlines()[0][:200] if str(exc) else ""
        return hide_credentials(f"{type(exc).__name__}: {first}")
    except Exception:  # noqa: BLE001 - it answered (an HTTP status fsspec raises strictly): reachable
        return None
    return None


def cannot_reach(url: str, why: str) -> str:
    """The one line for a remote that could not be reached: the URL without credentials, why, the fix."""
    return (f"cannot reach the remote object store {hide_credentials(url)} ({why}): check the URL and that its "
            "server is up and reachable from the service's host, then run the command again; nothing was changed")
