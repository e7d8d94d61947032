"""What a non-loopback listen needs, for the service and the Dashboard alike: strong secrets
(`weakness`, one rule for the service token and every Dashboard key) and TLS or an explicit
``--insecure`` (`listen_tls`). Who a request is, token and all, is service/api/actors.py's; how often
a secret may be checked is service/api/limiter.py's.

Strength is an entropy estimate: log2 of the guesses zxcvbn (Dropbox's estimator) says an attacker
needs, knowing common passwords, dictionary words, names, sequences (``abc``, ``6543``), repeats
(``aaaa``, ``abcabc``), keyboard runs (``qwerty``) and dates; at least `MIN_BITS` are needed. zxcvbn
counts a random character as ~3.3 bits, so a random secret needs 20 or more characters
(`MAKE_TOKEN` makes 43). A secret longer than zxcvbn's 72 characters is judged by its first 72.
"""

from __future__ import annotations

import math
import ssl

from srbench.discovery import is_loopback, token_env_name
from srbench.errors import InvalidInput

MIN_BITS = 64
MAX_JUDGED_CHARS = 72          # zxcvbn refuses longer input
MAKE_TOKEN = "python3 -c 'import secrets; print(secrets.token_urlsafe(32))'"


def strength_bits(secret: str) -> tuple[float, str]:
    """(estimated bits, zxcvbn's warning or "") of `secret`: log2 of the guesses it needs."""
    try:
        # deferred: zxcvbn loads its word lists only when a non-loopback listen is checked
        from zxcvbn import zxcvbn
    except ImportError:
        raise InvalidInput("judging secret strength for a non-loopback listen needs the zxcvbn package: "
                           "pip install 'zxcvbn>=4.5' (sr-bench depends on it)", code="weak_token") from None
    if not secret:
        return 0.0, ""
    found = zxcvbn(secret[:MAX_JUDGED_CHARS])
    return math.log2(max(float(found["guesses"]), 1.0)), str(found["feedback"]["warning"] or "")


def weakness(secret: str) -> str | None:
    """Why `secret` is too weak for a non-loopback listen (fewer than `MIN_BITS` estimated bits), or
    None. The service token and the Dashboard's keys share it; the secret itself is never named."""
    bits, warning = strength_bits(secret)
    if bits >= MIN_BITS:
        return None
    why = f": {warning.rstrip('.')}" if warning else ""
    return f"is estimated at {bits:.0f} bits of entropy{why} (at least {MIN_BITS} are needed)"


def check_listen_token(host: str, token: str) -> None:
    """A non-loopback listen refuses a weak token (`weakness`), saying how to make a good one. A loopback
    listen takes any token."""
    if is_loopback(host):
        return
    weak = weakness(token)
    if weak is not None:
        raise InvalidInput(f"a non-loopback listen on {host} needs a strong service token: {token_env_name()} "
                           f"{weak}; make one with {MAKE_TOKEN}", code="weak_token")


def listen_tls(host: str, tls_cert: str | None, tls_key: str | None, insecure: bool,
               what: str = "an sr-bench service") -> ssl.SSLContext | None:
    """The TLS context to serve with (None: plain HTTP), or a one-line refusal: `tls_cert` and `tls_key`
    (PEM) give TLS on any host; a non-loopback `host` without them needs `insecure`."""
    if (tls_cert is None) != (tls_key is None):
        raise InvalidInput("--tls-cert and --tls-key go together: give the certificate (PEM) and its private key")
    if tls_cert is not None and tls_key is not None:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        try:
            ctx.load_cert_chain(tls_cert, tls_key)
        except (OSError, ssl.SSLError) as exc:
            raise InvalidInput(f"cannot serve TLS with --tls-cert {tls_cert} and --tls-key {tls_key}: "
                               f"{getattr(exc, 'strerror', None) or exc}; give a PEM certificate and its "
                               "private key") from None
        return ctx
    if not is_loopback(host) and not insecure:
        raise InvalidInput(f"{what} on the network address {host} needs TLS: give --tls-cert and --tls-key (PEM "
                           "files of a certificate for that host and its private key), or put a TLS reverse proxy "
                           "in front and say --insecure to serve it plain HTTP (secrets then cross the network "
                           "readable unless that proxy is the only way in)", code="tls_required")
    return None
