"""`sr-bench dashboard`: run the Dashboard process in front of the service (found or started like the CLI's)."""

from __future__ import annotations

import asyncio
import errno
import os

import click

from srbench.cli.common import Ctx, emit
from srbench.errors import InvalidInput


def register(cli: click.Group) -> None:
    cli.add_command(dashboard)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(0, 65535), default=None,
              help="Default: the service's default port + 1 (a free port if that one is taken).")
@click.option("--tls-cert", type=click.Path(dir_okay=False), default=None,
              help="PEM certificate to serve HTTPS with (needed on a non-loopback --host, with --tls-key).")
@click.option("--tls-key", type=click.Path(dir_okay=False), default=None, help="The certificate's private key (PEM).")
@click.option("--insecure", is_flag=True, help="Serve plain HTTP on a non-loopback --host (a trusted network only).")
@click.pass_obj
def dashboard(obj: Ctx, host: str, port: int | None, tls_cert: str | None, tls_key: str | None,
              insecure: bool) -> None:
    """Serve the web Dashboard (foreground). Browsers sign in with the Dashboard key; they never
    reach the service or see its token. Stopping the Dashboard never stops a run. On a non-loopback
    --host every key must be strong and the Dashboard serves HTTPS (--tls-cert/--tls-key) unless
    --insecure says otherwise."""
    # deferred: srbench.dashboard, srbench.discovery, srbench.service load only for the commands that use them
    # (the CLI starts light); aiohttp's server loads only for the command that serves
    from aiohttp import web

    from srbench.dashboard import make_dashboard
    from srbench.dashboard.auth import dashboard_key, dashboard_users
    from srbench.dashboard.listen import listen_tls
    from srbench.discovery import default_port, is_loopback, resolve_store
    from srbench.service.api.server import Runner

    key, where = dashboard_key(resolve_store(obj.store).parent)
    users = dashboard_users()
    tls = listen_tls(host, key, where, users, tls_cert, tls_key, insecure)
    client = obj.client
    fallback = port is None
    port = default_port() + 1 if port is None else port
    app = make_dashboard(client.url, client.token, key, users, client.verify)
    shown = host if is_loopback(host) else host + " (not loopback: anyone who reaches it still needs the key)"
    scheme = "https" if tls is not None else "http"

    async def main() -> None:
        runner = Runner(app, access_log=None)
        await runner.setup()
        try:
            site = web.TCPSite(runner, host, port, ssl_context=tls)
            try:
                await site.start()
            except OSError as exc:
                if not (fallback and exc.errno == errno.EADDRINUSE):
                    fix = "; pick another --port or stop what holds it" if exc.errno == errno.EADDRINUSE else ""
                    raise InvalidInput(f"cannot listen on {host}:{port}: {os.strerror(exc.errno) if exc.errno else exc}"
                                       f"{fix}") from None
                site = web.TCPSite(runner, host, 0, ssl_context=tls)      # another store's Dashboard holds it
                await site.start()
            bound = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            login = f"{scheme}://{'127.0.0.1' if is_loopback(host) else host}:{bound}/login"
            emit({"url": f"{scheme}://{shown}:{bound}/", "service": client.url, "key_file": str(where),
                  "login": login}, lambda _v, con: con.print(
                f"sr-bench Dashboard on {scheme}://{shown}:{bound}/ for the service at {client.url}\nsign-in key "
                f"kept in {where}; open {login} and paste it (Ctrl-C stops the Dashboard, never the runs)",
                markup=False, soft_wrap=True))
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()

    asyncio.run(main())
