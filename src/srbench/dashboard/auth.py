"""Browser sign-in for the Dashboard: a private login key, then an HttpOnly session cookie.

The key comes from ``SR_BENCH_DASHBOARD_KEY`` or from a private file beside the store
(``dashboard.key``: a regular file, mode 0600, never a symlink), created on first use. The browser
exchanges it once for a random session id (HttpOnly, SameSite=Strict); the service token never
reaches the browser. Keys are compared in constant time; session ids are kept only as hashes.

Each session is a user: the Dashboard key signs in the operator's user (``SR_BENCH_DASHBOARD_ACTOR``,
default ``dashboard``, role admin: it sees every run); ``SR_BENCH_DASHBOARD_USERS`` may name a private
JSON file ``{"users": [{"id", "role": admin|write|read, "key"}]}`` with one key per further user. The
proxy sends the signed-in user as the service's actor headers.

On a non-loopback listen every key must be strong, as the service token must (`check_listen_keys`);
sign-in attempts are rate-limited for the whole Dashboard (never refused per address: addresses that sent
wrong keys wait behind those that did not) by the service's own check limiter
(`service.api.limiter.CheckLimiter`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import time
from pathlib import Path

from srbench.discovery import ensure_private_secret, is_loopback, read_private_file
from srbench.errors import InvalidInput
from srbench.service.api.auth import MAKE_TOKEN, weakness

KEY_ENV = "SR_BENCH_DASHBOARD_KEY"
ACTOR_ENV = "SR_BENCH_DASHBOARD_ACTOR"
USERS_ENV = "SR_BENCH_DASHBOARD_USERS"
ROLES = ("admin", "write", "read")
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


def dashboard_users() -> list[tuple[str, str, str]]:
    """(key, actor id, role) of every Dashboard user beyond the operator's (``SR_BENCH_DASHBOARD_USERS``)."""
    where = os.environ.get(USERS_ENV)
    if not where:
        return []
    if not Path(where).exists():
        raise InvalidInput(f"{USERS_ENV}: {where}: no such file (name the users file, or unset {USERS_ENV})")
    try:
        text = read_private_file(Path(where), "Dashboard users file")       # (not UTF-8: a ValueError)
        users = json.loads(text or "")["users"]
        out = [(str(u["key"]), str(u["id"]), str(u["role"])) for u in users]
    except (ValueError, KeyError, TypeError):
        raise InvalidInput(f"{USERS_ENV}: {where} must hold {{\"users\": [{{\"id\", \"role\", \"key\"}}]}}") from None
    for key, actor, role in out:
        if len(key) < 16 or role not in ROLES or not 1 <= len(actor) <= 256:
            raise InvalidInput(f"{USERS_ENV}: user {actor!r} needs a key of at least 16 characters and a role of "
                               "admin, write or read")
    return out


def check_listen_keys(host: str, key: str, where: str, users: list[tuple[str, str, str]]) -> None:
    """A non-loopback listen refuses a weak Dashboard key, or a weak key of a further user, exactly as
    the service refuses a weak token (`service.auth.weakness`); a loopback listen takes any key."""
    if is_loopback(host):
        return
    for secret, whose in [(key, where), *((k, f"the key of user {actor!r} in {USERS_ENV}") for k, actor, _ in users)]:
        weak = weakness(secret)
        if weak is not None:
            raise InvalidInput(f"a non-loopback listen on {host} needs a strong Dashboard key: {whose} {weak}; "
                               f"make one with {MAKE_TOKEN}", code="weak_token")


class Sessions:
    """Signed-in browsers, kept in this process only. A session id is stored as its SHA-256: a lookup
    by that hash reveals nothing usable through timing, and the ids themselves are never kept. Each
    session remembers its user (actor id, role)."""

    def __init__(self, key: str, users: list[tuple[str, str, str]] | None = None) -> None:
        self._keys = [(key, os.environ.get(ACTOR_ENV) or "dashboard", "admin"), *(users or [])]
        self._open: dict[str, tuple[float, tuple[str, str]]] = {}

    def user_of_key(self, candidate: str | None) -> tuple[str, str] | None:
        """The (actor, role) the key signs in, or None (every key is compared, in constant time)."""
        found = None
        for key, actor, role in self._keys:
            if candidate and hmac.compare_digest(candidate.encode("utf-8", "surrogateescape"), key.encode()) \
                    and found is None:
                found = (actor, role)
        return found

    def key_ok(self, candidate: str | None) -> bool:
        return self.user_of_key(candidate) is not None

    def open(self, user: tuple[str, str] | None = None) -> str:
        now = time.time()
        self._open = {h: v for h, v in self._open.items() if v[0] >= now}
        sid = secrets.token_urlsafe(32)
        self._open[_hash(sid)] = (now + SESSION_TTL_S, user or (self._keys[0][1], "admin"))
        return sid

    def user(self, sid: str | None) -> tuple[str, str] | None:
        if not sid:
            return None
        entry = self._open.get(_hash(sid))
        return entry[1] if entry is not None and entry[0] >= time.time() else None

    def valid(self, sid: str | None) -> bool:
        return self.user(sid) is not None

    def close(self, sid: str | None) -> None:
        if sid:
            self._open.pop(_hash(sid), None)


def _hash(sid: str) -> str:
    """A cookie's bytes that are not UTF-8 reach here as surrogates (aiohttp's surrogateescape): hashed as
    the bytes they were, so such a cookie is an unknown session, not a UnicodeEncodeError (a 500)."""
    return hashlib.sha256(sid.encode("utf-8", "surrogateescape")).hexdigest()
