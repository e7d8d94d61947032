"""`sr-bench simulate`: the demo's simulated models and router on loopback, in the foreground, and the
targets file that points at them — so every documented command can be tried offline.

It prints the targets (stdout, or `--output FILE`, written once the port is bound: the file's existence
means the endpoints answer), then serves until Ctrl-C or SIGTERM. `--dataset` gives the simulated
models the frozen dataset's answers, so their scores differ as the demo's do (without it they answer
a deterministic letter). `--require-key NAME` makes the endpoints refuse calls without the key in the
variable NAME (and the targets name it in `api_key_env`): a way to try the key set-up offline.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path

import click

from srbench.cli.common import Ctx, load_structured
from srbench.cli.runs import write_json
from srbench.errors import InvalidInput
from srbench.schemas.wire import WireJSON

DEFAULT_PORT = 8095
BANNER = ("SIMULATED ENDPOINTS — local simulators, not real models (large, small, the router mom, a judge); "
          "their figures measure nothing about any real model.")


def _answer_key(dataset: str | None) -> WireJSON:
    """The answers of a dataset `prepare`/`combine` wrote (its JSON, or the frozen JSONL itself)."""
    if dataset is None:
        return {}
    # deferred: srbench.simulate loads only for the commands that use it (the CLI starts light)
    from srbench.simulate.behaviour import load_answer_key

    path = dataset
    if not dataset.endswith(".jsonl"):
        doc = load_structured(dataset)
        if not isinstance(doc, dict) or not isinstance(doc.get("path"), str):
            raise InvalidInput(f"{dataset}: not the JSON `dataset prepare` or `dataset combine` printed (no path); "
                               "give that file or the frozen .jsonl")
        path = doc["path"]
    try:
        return load_answer_key(path)
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"cannot read the dataset's answers from {path} ({exc}): give the file `dataset prepare` "
                           "wrote on this host") from None


async def _serve(host: str, port: int, answers: WireJSON, key_env: str | None, output: str | None) -> None:
    # deferred: srbench.simulate loads only for the commands that use it (the CLI starts light)
    from srbench.simulate import stack
    from srbench.simulate.server import SimServer

    rule = stack.router()
    key = os.environ.get(key_env) if key_env else None
    server = SimServer(stack.models(), answer_key=answers, router=rule, api_key=key, script=stack.script(rule))
    try:
        await server.start(host, port)
    except OSError as exc:
        if port != DEFAULT_PORT:
            raise InvalidInput(f"cannot listen on {host}:{port} ({exc.strerror or exc}): give another --port "
                               "(0 picks a free one)") from None
        await server.start(host, 0)              # the default port is taken: any free one
    targets = stack.targets(server.url, rule, api_key_env=key_env)
    if output:
        write_json(output, targets)
    else:
        click.echo(json.dumps(targets, indent=2))
    click.echo(f"{BANNER}\nserving at {server.url}; {'targets written to ' + output if output else 'targets above'}"
               f" — register them with `sr-bench target register --file {output or 'targets.json'}`. Ctrl-C stops "
               "(a restart may pick another port: register the new file again).", err=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await server.stop()
        click.echo(f"simulator stopped ({len(server.log)} calls answered)", err=True)


@click.command()
@click.option("--output", type=click.Path(dir_okay=False), default=None,
              help="Write the targets file here (default: print it on stdout).")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(0, 65535), default=DEFAULT_PORT, show_default=True,
              help="0: any free port (the default one, when taken, is replaced by a free one).")
@click.option("--dataset", type=click.Path(dir_okay=False), default=None,
              help="The JSON `dataset prepare`/`combine` wrote: the models then know its answers (skills differ).")
@click.option("--require-key", "key_env", default=None, metavar="NAME",
              help="Refuse calls without the key held in the variable NAME (targets get api_key_env: NAME).")
@click.pass_obj
def simulate(obj: Ctx, output: str | None, host: str, port: int, dataset: str | None, key_env: str | None) -> None:
    """Serve the demo's SIMULATED models and router on loopback until Ctrl-C, and print their targets file.

    \b
    Example (a second terminal; then plan and run as the quickstart shows):
      sr-bench simulate --output targets.json
      sr-bench target register --file targets.json
    """
    if key_env is not None and not os.environ.get(key_env):
        raise InvalidInput(f"--require-key {key_env}: the variable {key_env} is not set in this shell; export it "
                           "first (the endpoints then accept only that key)")
    if output is not None and Path(output).exists():
        Path(output).unlink()                    # a stale file would look like a ready simulator
    asyncio.run(_serve(host, port, _answer_key(dataset), key_env, output))


def register(cli: click.Group) -> None:
    cli.add_command(simulate)
