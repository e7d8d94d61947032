"""Where the Dashboard may listen: on loopback, anything; on a network address, only with strong keys
(`auth.check_listen_keys`, the service token's rule) and TLS from the operator's certificate and key
files (the session cookie is then ``Secure``), or plain HTTP when the operator says ``--insecure``."""

from __future__ import annotations

import ssl

from srbench.dashboard.auth import check_listen_keys
from srbench.discovery import is_loopback
from srbench.errors import InvalidInput


def listen_tls(host: str, key: str, where: str, users: list[tuple[str, str, str]], tls_cert: str | None,
               tls_key: str | None, insecure: bool) -> ssl.SSLContext | None:
    """The TLS context to serve with (None: plain HTTP), or a one-line refusal of the listen."""
    check_listen_keys(host, key, where, users)
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
        raise InvalidInput(f"a Dashboard on the network address {host} needs TLS: give --tls-cert and --tls-key "
                           "(PEM files of a certificate for that host and its private key), or --insecure to serve "
                           "plain HTTP (the key and the session cookie then cross the network readable)",
                           code="tls_required")
    return None
