"""The `sr-bench` command group (also `vllm-sr benchmark …`) and the one place errors become lines."""

from __future__ import annotations

import asyncio
import os
import sys

import click
from rich.console import Console

from srbench import VERSION
from srbench.benchmarks import REGISTRY
from srbench.benchmarks import catalog as catalog_doc
from srbench.cli import (
    dashboard,
    datasets,
    demo,
    derived,
    env,
    evaluate,
    experiments,
    options,
    robustness,
    runs,
    simulate,
    store,
    targets,
    team,
)
from srbench.cli.common import Ctx, emit
from srbench.cli.examples import add_examples
from srbench.cli.output import add_json_option
from srbench.cli.views import catalog_view, setup_view
from srbench.errors import InvalidInput, SrBenchError
from srbench.schemas.wire import WireJSON


@click.group()
@click.option("--store", type=click.Path(file_okay=False), default=None,
              help="Store directory (default: SR_BENCH_STORE, else the managed store ./.sr-bench/<stack>/store, "
                   "<stack> from SR_BENCH_STACK or 'default').")
@click.option("--embedded", is_flag=True, envvar="SR_BENCH_EMBEDDED",
              help="Run this one command against an in-process service on the store that stops with it (no "
                   "background service; refused while another service owns the store). Env: SR_BENCH_EMBEDDED=1.")
@click.option("--url", default=None, envvar="SR_BENCH_URL",
              help="An sr-bench service's URL (no local service is started); its token comes from SR_BENCH_TOKEN "
                   "(or the variable SR_BENCH_TOKEN_ENV names). Env: SR_BENCH_URL.")
@click.option("--no-autostart", is_flag=True, help="Require a running service: never start the store's own.")
@click.option("--ca-file", type=click.Path(dir_okay=False), default=None, envvar="SR_BENCH_CA_FILE",
              help="PEM certificate(s) to trust for an https service (its own self-signed certificate, or a "
                   "private CA); default: the system's trust store. Env: SR_BENCH_CA_FILE.")
@click.version_option(VERSION, prog_name="sr-bench")
@click.pass_context
def cli(ctx: click.Context, store: str | None, embedded: bool, url: str | None, no_autostart: bool,
        ca_file: str | None) -> None:
    """sr-bench: does routing keep quality while saving cost? Same frozen questions, honest numbers.

    On a terminal commands print tables; on a pipe (or with --json) JSON. Docs: README.md and the
    site under docs/ (docs/index.md; `pip install -e '.[docs]' && mkdocs serve`)."""
    ctx.obj = Ctx(store, embedded, url=url, autostart=not no_autostart, ca_file=ca_file)
    ctx.call_on_close(ctx.obj.close)


@cli.command()
@click.pass_obj
def catalog(obj: Ctx) -> None:
    """Print the installed suite and its nine benchmarks (no service needed)."""
    emit(catalog_doc(), catalog_view)


@cli.command()
@click.option("--store", "store_opt", type=click.Path(file_okay=False), default=None, help="Store directory.")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(0, 65535), default=None,
              help="Default: SR_BENCH_PORT, else 8090 + SR_BENCH_PORT_OFFSET; a default port that is taken "
                   "(e.g. by another store's service) is replaced by a free one.")
@click.option("--store-identity", default=None,
              help="The store identity /health reports (the SHA-256 of the store's path on the host), for a "
                   "service in a container where the store is mounted at another path.")
@click.option("--tls-cert", type=click.Path(dir_okay=False), default=None,
              help="PEM certificate to serve HTTPS with (needed on a non-loopback --host, with --tls-key); "
                   "clients trust it through SR_BENCH_CA_FILE / --ca-file.")
@click.option("--tls-key", type=click.Path(dir_okay=False), default=None, help="The certificate's private key (PEM).")
@click.option("--insecure", is_flag=True, help="Serve plain HTTP on a non-loopback --host (behind a TLS reverse "
              "proxy, or on a trusted network only).")
@click.pass_obj
def serve(obj: Ctx, store_opt: str | None, host: str, port: int | None, store_identity: str | None,
          tls_cert: str | None, tls_key: str | None, insecure: bool) -> None:
    """Run the service that owns the store (foreground). On a non-loopback --host the token must be
    strong and the service serves HTTPS (--tls-cert/--tls-key) unless --insecure says otherwise."""
    # deferred: srbench.discovery, srbench.service load only for the commands that use them (the CLI starts
    # light)
    from srbench.discovery import (
        default_port,
        ensure_token,
        env_token,
        is_loopback,
        resolve_store,
        token_env_name,
    )
    from srbench.service.app import check_store_identity
    from srbench.service.app import serve as run_service

    store = resolve_store(store_opt or obj.store)
    token = env_token()
    if not token:
        if not is_loopback(host):
            raise InvalidInput(f"a non-loopback listen needs a service token: set {token_env_name()} privately")
        token = ensure_token(store)
    identity = check_store_identity(store_identity) if store_identity is not None else None
    asyncio.run(run_service(store, host, default_port() if port is None else port, token,
                            port_fallback=port is None and not os.environ.get("SR_BENCH_PORT"),
                            store_identity=identity, tls_cert=tls_cert, tls_key=tls_key, insecure=insecure))


@cli.command()
@click.option("--benchmark", default="all", show_default=True, help="A benchmark id or all.")
@click.option("--install", is_flag=True, help="Install the pinned grading packages into the sandbox and fetch "
              "SciCode's sha256-checked test data (this host).")
@click.option("--build-sandbox", is_flag=True, help="Build the offline code-grading sandbox on this host (Debian "
              "packages; Docker image when DOCKER_HOST answers) and write its receipt.")
@click.pass_obj
def setup(obj: Ctx, benchmark: str, install: bool, build_sandbox: bool) -> None:
    """Check what each benchmark needs on the service host (no model call). --build-sandbox builds the
    offline grading sandbox on this host; --install adds the pinned grading packages and SciCode's data."""
    if install or build_sandbox:
        # deferred: srbench.sandbox loads only for the commands that use it (the CLI starts light)
        from srbench.sandbox.install import setup_sandbox

        if benchmark != "all" and benchmark not in REGISTRY:
            raise InvalidInput(f"unknown benchmark {benchmark!r}")
        chosen = set(REGISTRY) if benchmark == "all" else {benchmark}
        emit(setup_sandbox(install=install, build_sandbox=build_sandbox, benchmarks=chosen,
                           log=lambda line: click.echo(line, err=True)))
        return
    res = obj.client.get("/setup")
    if benchmark != "all":
        res["benchmarks"] = [b for b in res["benchmarks"] if b["benchmark"] == benchmark]
        if not res["benchmarks"]:
            raise InvalidInput(f"unknown benchmark {benchmark!r}")

    emit(res, setup_view)
    if any(not b["ready"] for b in res["benchmarks"] if b["available"]):
        sys.exit(1)


@cli.command()
@click.pass_obj
def stop(obj: Ctx) -> None:
    """Stop the local service; every result is kept."""
    # deferred: srbench.client loads only for the commands that use it (the CLI starts light)
    from srbench.client.api import connect

    try:
        client = connect(obj.store, autostart=False, url=obj.url, ca_file=obj.ca_file)
    except SrBenchError as exc:
        emit({"stopping": False, "message": f"nothing to stop: {exc.message}"}, stop_view)
        return
    client.post("/shutdown")
    emit({"stopping": True, "message": "service stopping; all results are kept"}, stop_view)


def stop_view(res: WireJSON, con: Console) -> None:
    con.print(res["message"], markup=False, soft_wrap=True)


def register_commands() -> None:
    for module in (datasets, targets, env, options, runs, evaluate, derived, robustness, store, team, demo,
                   simulate,
                   dashboard, experiments):
        module.register(cli)
    add_json_option(cli)
    add_examples(cli)


register_commands()


def _run(group: click.Group, args: list[str] | None = None, prog: str = "sr-bench") -> None:
    try:
        group.main(args=args, prog_name=prog, standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except SrBenchError as exc:
        click.echo(f"error: {exc.message}", err=True)
        sys.exit(2)
    except BrokenPipeError:
        raise
    except OSError as exc:          # a path the user gave that the file system refuses (e.g. --store under a file)
        where = f": {exc.filename}" if exc.filename else ""
        click.echo(f"error: {exc.strerror or exc}{where} (check the paths given: --store, files, directories)",
                   err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)


def main(args: list[str] | None = None) -> None:
    _run(cli, args)


@click.group()
def vllm_sr() -> None:
    """vllm-sr (sr-bench's commands live under `benchmark`)."""


vllm_sr.add_command(cli, name="benchmark")


def vllm_sr_main(args: list[str] | None = None) -> None:
    _run(vllm_sr, args, prog="vllm-sr")


if __name__ == "__main__":
    main()
