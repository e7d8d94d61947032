"""Browser sign-in for the Dashboard: a private login key, then an HttpOnly session cookie.

The key comes from ``SR_BENCH_DASHBOARD_KEY`` or from a private file beside the store
(``dashboard.key``: a regular file, mode 0600, never a symlink), created on first use. The browser
exchanges it once for a random session id (HttpOnly, SameSite=Strict); the service token never
reaches the browser. Keys are compared in constant time; session ids are kept only as hashes.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import time
from pathlib import Path

from srbench.errors import InvalidInput
from srbench.service.discovery import ensure_private_secret

KEY_ENV = "SR_BENCH_DASHBOARD_KEY"
COOKIE = "srbench_dashboard"
SESSION_TTL_S = 12 * 3600


def dashboard_key(state_dir: Path) -> tuple[str, str]:
    """(key, where it is kept): the env variable if set, else the private key file (made if missing)."""
    env = os.environ.get(KEY_ENV)
    if env:
        if len(env) < 16:
            raise InvalidInput(f"{KEY_ENV} must hold at least 16 characters")
        return env, f"the environment variable {KEY_ENV}"
    path = state_dir / "dashboard.key"
    key = ensure_private_secret(path, "dashboard key file")
    if len(key) < 16:
        raise InvalidInput(f"{path} must hold a key of at least 16 characters")
    return key, str(path)


class Sessions:
    """Signed-in browsers, kept in this process only. A session id is stored as its SHA-256: a lookup
    by that hash reveals nothing usable through timing, and the ids themselves are never kept."""

    def __init__(self, key: str) -> None:
        self._key = key
        self._expiry: dict[str, float] = {}

    def key_ok(self, candidate: str | None) -> bool:
        return bool(candidate) and hmac.compare_digest(candidate.encode(), self._key.encode())

    def open(self) -> str:
        now = time.time()
        self._expiry = {h: t for h, t in self._expiry.items() if t >= now}
        sid = secrets.token_urlsafe(32)
        self._expiry[_hash(sid)] = now + SESSION_TTL_S
        return sid

    def valid(self, sid: str | None) -> bool:
        return bool(sid) and self._expiry.get(_hash(sid), 0.0) >= time.time()

    def close(self, sid: str | None) -> None:
        if sid:
            self._expiry.pop(_hash(sid), None)


def _hash(sid: str) -> str:
    return hashlib.sha256(sid.encode()).hexdigest()
