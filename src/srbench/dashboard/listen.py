"""Where the Dashboard may listen: on loopback, anything; on a network address, only with strong keys
(`auth.check_listen_keys`, the service token's rule) and TLS from the operator's certificate and key
files (the session cookie is then ``Secure``), or plain HTTP when the operator says ``--insecure`` —
the service's own rule (`service.api.auth.listen_tls`)."""

from __future__ import annotations

import ssl

from srbench.dashboard.auth import check_listen_keys
from srbench.service.api import auth


def listen_tls(host: str, key: str, where: str, users: list[tuple[str, str, str]], tls_cert: str | None,
               tls_key: str | None, insecure: bool) -> ssl.SSLContext | None:
    """The TLS context to serve with (None: plain HTTP), or a one-line refusal of the listen."""
    check_listen_keys(host, key, where, users)
    return auth.listen_tls(host, tls_cert, tls_key, insecure, "a Dashboard")
