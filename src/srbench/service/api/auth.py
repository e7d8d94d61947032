"""The service token's strength: a non-loopback listen needs a strong one (`check_listen_token`, `weakness`,
which the Dashboard's keys share). Who a request is, token and all, is service/api/actors.py's."""

from __future__ import annotations

from srbench.discovery import is_loopback, token_env_name
from srbench.errors import InvalidInput

MIN_TOKEN_CHARS = 16
MIN_TOKEN_DISTINCT = 8       # "aaaa…", "abab…" or "12341234…" are long but guessable
MAKE_TOKEN = "python3 -c 'import secrets; print(secrets.token_urlsafe(32))'"


def weakness(secret: str) -> str | None:
    """Why `secret` is too weak for a non-loopback listen (shorter than 16 characters, or fewer than 8
    different characters: low entropy), or None. The service token and the Dashboard's keys share it."""
    if len(secret) < MIN_TOKEN_CHARS:
        return f"has {len(secret)} characters (at least {MIN_TOKEN_CHARS} are needed)"
    if len(set(secret)) < MIN_TOKEN_DISTINCT:
        return f"uses only {len(set(secret))} different characters (at least {MIN_TOKEN_DISTINCT} are needed)"
    return None


def check_listen_token(host: str, token: str) -> None:
    """A non-loopback listen refuses a weak token (`weakness`), saying how to make a good one. A loopback
    listen takes any token."""
    if is_loopback(host):
        return
    weak = weakness(token)
    if weak is not None:
        raise InvalidInput(f"a non-loopback listen on {host} needs a strong service token: {token_env_name()} "
                           f"{weak}; make one with {MAKE_TOKEN}", code="weak_token")
