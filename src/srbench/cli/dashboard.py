"""`sr-bench dashboard`: run the Dashboard process in front of the service (found or started like the CLI's)."""

from __future__ import annotations

import asyncio
import errno
import os

import click

from srbench.cli.common import Ctx
from srbench.errors import InvalidInput


def register(cli: click.Group) -> None:
    cli.add_command(dashboard)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(0, 65535), default=None,
              help="Default: the service's default port + 1 (a free port if that one is taken).")
@click.pass_obj
def dashboard(obj: Ctx, host: str, port: int | None) -> None:
    """Serve the web Dashboard (foreground). Browsers sign in with the Dashboard key; they never
    reach the service or see its token. Stopping the Dashboard never stops a run."""
    from aiohttp import web

    from srbench.dashboard import make_dashboard
    from srbench.dashboard.auth import dashboard_key, dashboard_users
    from srbench.service.discovery import default_port, is_loopback, resolve_store

    client = obj.client
    key, where = dashboard_key(resolve_store(obj.store).parent)
    fallback = port is None
    port = default_port() + 1 if port is None else port
    app = make_dashboard(client.url, client.token, key, dashboard_users())
    shown = host if is_loopback(host) else host + " (not loopback: anyone who reaches it still needs the key)"

    async def main() -> None:
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        try:
            site = web.TCPSite(runner, host, port)
            try:
                await site.start()
            except OSError as exc:
                if not (fallback and exc.errno == errno.EADDRINUSE):
                    raise InvalidInput(f"cannot listen on {host}:{port}: {os.strerror(exc.errno) if exc.errno else exc}"
                               ) from None
                site = web.TCPSite(runner, host, 0)      # another store's Dashboard holds the default
                await site.start()
            bound = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            click.echo(f"sr-bench Dashboard on http://{shown}:{bound}/ for the service at {client.url}")
            click.echo(f"sign-in key kept in {where}; open http://{'127.0.0.1' if is_loopback(host) else host}:{bound}"
                       "/login and paste it (Ctrl-C stops the Dashboard, never the runs)")
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()

    asyncio.run(main())
