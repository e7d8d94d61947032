"""Browser sign-in for the Dashboard: a private login key, then an HttpOnly session cookie.

The key comes from ``SR_BENCH_DASHBOARD_KEY`` or from a private file beside the store
(``dashboard.key``: a regular file, mode 0600, never a symlink), created on first use. The browser
exchanges it once for a random session id (HttpOnly, SameSite=Strict); the service token never
reaches the browser. Keys and session ids are compared in constant time.
"""

from __future__ import annotations

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
    """Signed-in browsers: random ids with an expiry, kept in this process only."""

    def __init__(self, key: str) -> None:
        self._key = key
        self._ids: dict[str, float] = {}

    def key_ok(self, candidate: str | None) -> bool:
        return bool(candidate) and hmac.compare_digest(candidate.encode(), self._key.encode())

    def open(self) -> str:
        sid = secrets.token_urlsafe(32)
        self._ids[sid] = time.time() + SESSION_TTL_S
        return sid

    def valid(self, sid: str | None) -> bool:
        if not sid:
            return False
        now = time.time()
        for known, expires in list(self._ids.items()):
            if expires < now:
                del self._ids[known]
            elif hmac.compare_digest(known.encode(), sid.encode()):
                return True
        return False

    def close(self, sid: str | None) -> None:
        if sid:
            self._ids.pop(sid, None)
