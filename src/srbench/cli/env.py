"""Keys and endpoints before anything is spent (issue 40): `sr-bench env set NAME`, and the checks `target
register`, `plan` and `run` make through the service (`POST /targets/check`).

The service, not the command, calls the endpoints, so it is the service's environment that must hold a
key. A key it lacks is said once per variable, with why (exported in this shell after the service
started, or set nowhere) and the one command that fixes it: `sr-bench env set NAME`, which writes the
variable into the env file beside the store (mode 600; the value from this shell, else asked for without
echo) — the service reads that file again before every plan check and run, so no restart is needed.
A probe (one GET <base_url>/models per target, no prompt) says in one line each what else is wrong.
"""

from __future__ import annotations

import os
import sys

import click

from srbench.cli.common import Ctx
from srbench.errors import Forbidden, InvalidInput, NotFound
from srbench.schemas.wire import WireJSON


def plan_targets(plan: WireJSON) -> list[WireJSON]:
    """A frozen plan's subject targets, then the judges and user simulators it calls."""
    aux = [e.get("target", e) for e in (plan.get("auxiliary_targets") or {}).values() if isinstance(e, dict)]
    return [*(plan.get("targets") or []), *aux]


def key_line(env: str, target_ids: list[str], env_file: str | None, remote: bool) -> str:
    """Why the service lacks the key `env`, and the one command that fixes it."""
    which = f"target{'s' if len(target_ids) > 1 else ''} {', '.join(target_ids)}"
    if remote:
        return (f"{env} ({which}) is not set in the service's environment: put {env}=… in its env file on the "
                f"service host ({env_file or '<store>.env'}, chmod 600)")
    if os.environ.get(env):
        why = "is exported in this shell, but the service started before it and keeps the environment it started with"
    else:
        why = "is set neither in this shell nor in the service's environment"
    return (f"{env} ({which}) {why}: run `sr-bench env set {env}` (writes it to {env_file or '<store>.env'}, "
            "mode 600; read before the next plan or run, no restart)")


def check_targets(obj: Ctx, targets: list[WireJSON], probe: bool) -> tuple[list[str], list[str]]:
    """(one line per key the service lacks, one line per probe that found a problem)."""
    if not targets:
        return [], []
    try:
        res = obj.client.post("/targets/check", {"targets": targets, "probe": probe})
    except (Forbidden, NotFound):       # a named actor (the operator's check), an older service: its preflight says
        return [], []
    missing: dict[str, list[str]] = {}
    env_file = None
    problems = []
    for t in res["targets"]:
        key, found = t.get("key"), t.get("probe")
        if key and not key["set"]:
            missing.setdefault(key["env"], []).append(t["target_id"])
            env_file = key.get("env_file")
        if found and found.get("problem"):
            problems.append(found["problem"])
    remote = bool(obj.url or os.environ.get("SR_BENCH_URL"))
    return [key_line(env, ids, env_file, remote) for env, ids in missing.items()], problems


def warn_targets(obj: Ctx, targets: list[WireJSON], probe: bool) -> list[str]:
    """Print what the check found as warnings (stderr, one line each); returns the key lines."""
    keys, problems = check_targets(obj, targets, probe)
    for line in [*keys, *problems]:
        click.echo(f"warning: {line}", err=True)
    return keys


@click.group()
def env() -> None:
    """The service's environment: keys the endpoints need (never echoed, never in argv)."""


@env.command(name="set")
@click.argument("name")
@click.pass_obj
def set_cmd(obj: Ctx, name: str) -> None:
    """Put the variable NAME into the env file beside the store (mode 600): its value from this shell's
    environment, else asked for without echo (or read from a pipe). The service reads it before the next
    plan or run; no restart.

    \b
    Example:
      sr-bench env set MY_KEY      # its value from this shell, else asked for
    """
    # deferred: srbench.discovery, srbench.service load only for the commands that use them (the CLI starts
    # light)
    from srbench.discovery import resolve_store
    from srbench.service.store.env_file import check_name, set_variable

    check_name(name)                    # before a value is asked for
    if obj.url or os.environ.get("SR_BENCH_URL"):
        raise InvalidInput("env set writes the env file beside a local store; for a remote service put "
                           f"{name}=… in its env file on the service host (chmod 600)")
    value = os.environ.get(name)
    if not value:
        if sys.stdin.isatty():
            value = click.prompt(f"{name} (not set in this shell; not echoed)", hide_input=True, err=True)
        else:
            value = sys.stdin.readline().rstrip("\r\n")
    if not value:
        raise InvalidInput(f"no value for {name}: export it in this shell (or type it when asked), then run "
                           f"`sr-bench env set {name}` again")
    path = set_variable(resolve_store(obj.store), name, value)
    click.echo(f"{name} written to {path} (mode 600; the value is not shown); the service reads it before the next "
               "plan or run, no restart", err=True)


def register(cli: click.Group) -> None:
    cli.add_command(env)
