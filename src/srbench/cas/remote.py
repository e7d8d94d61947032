"""A store's filesystem opened from its URL (fsspec), with a short connect timeout for an http(s) object store:
aiohttp's default waits 30 s for an address that never answers (a firewall dropping packets), and fsspec asks
again, so a push, a pull or a repair source hung for half a minute before it said anything."""

from __future__ import annotations

from typing import Any

import aiohttp
import fsspec

from srbench.discovery import CONNECT_TIMEOUT_S

HTTP = frozenset({"http", "https"})


def open_filesystem(url: str) -> tuple[Any, str]:
    """fsspec's filesystem of `url` and the path within it; an http(s) one gives up connecting after
    `CONNECT_TIMEOUT_S` (aiohttp's total limit of 5 minutes a request stays)."""
    protocol = (fsspec.core.split_protocol(url)[0] or "file").lower()
    if protocol in HTTP:
        timeout = aiohttp.ClientTimeout(total=300, sock_connect=CONNECT_TIMEOUT_S)
        fs, root = fsspec.core.url_to_fs(url, client_kwargs={"timeout": timeout})
    else:
        fs, root = fsspec.core.url_to_fs(url)
    return fs, str(root)
