"""Where Terminal-Bench tasks come from: a local checkout / task folder, or the pinned download.

`locate` accepts a checkout laid out like the pinned repository (``tasks/<task>/task.toml``), a
folder of task directories (``<task>/task.toml``) or one task directory; every file of every task
(``.git`` excluded) is named ``tasks/<task>/<path>`` whatever the layout, so the same tasks give the
same file hashes and the same dataset. `fetch` downloads the pinned revision's tarball from GitHub
(**this needs the network**) and keeps ``tasks/`` in the download cache.
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

from srbench.benchmarks.base import SourcePin
from srbench.benchmarks.sources import _client, _get, _write_atomic, tarball_url
from srbench.errors import InvalidInput, SourceUnavailable

SKIP_DIRS = {".git"}
INDEX = ".sr-bench-tasks.json"


def _task_files(task_dir: Path, task: str) -> dict[str, Path]:
    root = task_dir.resolve()
    out: dict[str, Path] = {}
    for path in sorted(task_dir.rglob("*")):
        rel = path.relative_to(task_dir)
        if any(part in SKIP_DIRS for part in rel.parts) or not path.is_file():
            continue
        if not path.resolve().is_relative_to(root):
            raise InvalidInput(f"task {task}: {rel.as_posix()} links outside the task directory")
        out[f"tasks/{task}/{rel.as_posix()}"] = path
    return out


def locate_tasks(root: Path) -> dict[str, Path]:
    """Every task file under `root` (see the module docstring); InvalidInput when there is none."""
    root = Path(root)
    if not root.is_dir():
        raise InvalidInput(f"source path {root} is not a directory (give a checkout, a folder of tasks or a task)")
    if (root / "task.toml").is_file():
        dirs = [root]
    else:
        base = root / "tasks" if (root / "tasks").is_dir() else root
        dirs = sorted(p.parent for p in base.glob("*/task.toml") if p.is_file())
    if not dirs:
        raise InvalidInput(f"no task directory (one with a task.toml) under {root}")
    out: dict[str, Path] = {}
    for d in dirs:
        out.update(_task_files(d, d.resolve().name))
    return dict(sorted(out.items()))


def fetch_tasks(pin: SourcePin, dest_dir: Path) -> dict[str, Path]:
    """Download the pinned revision's ``tasks/`` (cached under `dest_dir`/<revision>)."""
    root = Path(dest_dir) / pin.revision
    index = root / INDEX
    if index.is_file():
        names = json.loads(index.read_text("utf-8"))
        if all((root / n).is_file() for n in names):
            return {n: root / n for n in names}
    archive = root / ".sr-bench-source.tar.gz"
    with _client(None, 120.0) as client:
        if not archive.is_file():
            _get(client, pin, tarball_url(pin), archive)
    names = []
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            for member in tar:
                parts = member.name.split("/", 1)
                if len(parts) != 2 or not member.isfile():
                    continue
                rel = parts[1]
                segs = rel.split("/")
                if segs[0] != "tasks" or len(segs) < 3 or ".." in segs or any(s in SKIP_DIRS for s in segs):
                    continue
                fh = tar.extractfile(member)
                if fh is not None:
                    _write_atomic(root / rel, [fh.read()])
                    names.append(rel)
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise SourceUnavailable(f"the tarball of {pin.url} at {pin.revision} is unreadable ({exc}): delete {archive} "
                                "and retry, or prepare from a local checkout with --source-path DIR") from exc
    if not names:
        raise SourceUnavailable(f"no tasks/ in {pin.url} at {pin.revision}; prepare from a local checkout with "
                                "--source-path DIR")
    _write_atomic(index, [json.dumps(sorted(names)).encode("utf-8")])
    archive.unlink(missing_ok=True)
    return {n: root / n for n in sorted(names)}
