"""`push` and `pull`: share finished runs through a team object store (zero model calls)."""

from __future__ import annotations

import click

from srbench.cli.common import FULL_RUN_ID, Ctx, emit
from srbench.errors import InvalidInput

REMOTE_HELP = ("Team object store URL (s3://bucket/prefix, gs://…, an NFS path …). Default: the store's own "
               "objects when they are shared (SR_BENCH_OBJECTS_URL). Credentials come from the environment "
               "of the service (e.g. FSSPEC_S3_KEY / FSSPEC_S3_SECRET / FSSPEC_S3_ENDPOINT_URL), never argv.")


@click.command()
@click.argument("run_id")
@click.option("--remote", default=None, help=REMOTE_HELP)
@click.pass_obj
def push(obj: Ctx, run_id: str, remote: str | None) -> None:
    """Copy a finished run's objects and its journal rows (a run bundle) to a team object store."""
    emit(obj.client.post(f"/runs/{obj.run_id(run_id)}/push", {"remote": remote}))


@click.command()
@click.argument("run_id")
@click.option("--remote", default=None, help=REMOTE_HELP)
@click.pass_obj
def pull(obj: Ctx, run_id: str, remote: str | None) -> None:
    """Import a pushed run into this store; every object is checked against its digest on arrival."""
    if not FULL_RUN_ID.fullmatch(run_id):      # not in this store yet: no prefix to resolve, and never a path
        raise InvalidInput(f"pull needs a whole run id (run-<20 hex>, as `sr-bench runs` shows it where it was "
                           f"pushed), not {run_id!r}")
    emit(obj.client.post(f"/runs/{run_id}/pull", {"remote": remote}))


def register(cli: click.Group) -> None:
    for c in (push, pull):
        cli.add_command(c)
