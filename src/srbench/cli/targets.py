"""`target register | list`: the registry of endpoints (keys are read from env vars, never stored)."""

from __future__ import annotations

import click

from srbench.cli.common import Ctx, emit, load_structured
from srbench.cli.env import warn_targets
from srbench.cli.views import targets_view
from srbench.errors import InvalidInput


@click.group()
def target() -> None:
    """Register and list targets."""


@target.command(name="register")
@click.option("--file", "path", required=True, type=click.Path(dir_okay=False))
@click.pass_obj
def register_cmd(obj: Ctx, path: str) -> None:
    """Register the targets in a JSON/YAML file (a list, or {"targets": [...]})."""
    data = load_structured(path)
    if isinstance(data, list):
        data = {"targets": data}
    if isinstance(data, dict) and ("case_count" in data or "dataset" in data):
        raise InvalidInput(f"{path} is a dataset or run manifest, not a targets file: a list of targets (or "
                           "{\"targets\": [...]}), each with id, kind, base_url, model and prices (docs/targets.md)")
    if not isinstance(data, dict):
        raise InvalidInput(f"{path}: expected a list of targets or {{\"targets\": [...]}}")
    try:
        res = obj.client.post("/targets", data)
    except InvalidInput as exc:          # the service speaks of its request body; the user wrote a file
        msg = exc.message
        for head in ("request body: ", "targets file: ", "request body has "):
            if msg.startswith(head):
                msg = f"{path}: " + ("" if head.endswith(": ") else "has ") + msg[len(head):]
        raise InvalidInput(msg, code=exc.code) from None
    warn_targets(obj, data.get("targets") or [], probe=False)      # a key the service lacks, said once per name
    emit(res)


@target.command(name="list")
@click.pass_obj
def list_(obj: Ctx) -> None:
    """Print the registered targets."""
    emit(obj.client.get("/targets"), targets_view)


def register(cli: click.Group) -> None:
    cli.add_command(target)
