"""Where Terminal-Bench tasks come from: a local checkout / task folder, or the pinned download.

`locate` accepts a checkout laid out like the pinned repository (``tasks/<task>/task.toml``), a
folder of task directories (``<task>/task.toml``) or one task directory; every file of every task
(``.git`` excluded) is named ``tasks/<task>/<path>`` whatever the layout, so the same tasks give the
same file hashes and the same dataset. `fetch` downloads the pinned revision's tarball from GitHub
(**this needs the network**) and keeps ``tasks/`` in the download cache.

The pin is the git tree id of ``tasks/`` (no byte digest of the task set is published): `tasks_tree`
computes it over a checkout's whole ``tasks/`` directory (or a folder of tasks given directly), and
for a download over the tarball's ``tasks/`` members with their modes, kept in the cache's index.
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

from srbench.benchmarks.base import SourcePin
from srbench.benchmarks.gittree import EXEC, FILE, LINK, tree_of_dir, tree_of_entries
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


def tasks_tree(root: Path) -> str | None:
    """The git tree id of the tasks a source path or download cache holds; None when it has no tasks
    folder (one task directory given alone)."""
    root = Path(root)
    index = root / INDEX
    if index.is_file():
        try:
            return str(json.loads(index.read_text("utf-8"))["tasks_tree"])
        except (ValueError, KeyError, TypeError):
            return None
    if (root / "tasks").is_dir():
        return tree_of_dir(root / "tasks")
    if root.is_dir() and not (root / "task.toml").is_file() and any(root.glob("*/task.toml")):
        return tree_of_dir(root)
    return None


def forget_tasks(root: Path) -> None:
    """Make the next fetch download the tasks again (their tree did not match the pin)."""
    (Path(root) / INDEX).unlink(missing_ok=True)


def _cached(root: Path) -> dict[str, Path] | None:
    try:
        index = json.loads((root / INDEX).read_text("utf-8"))
        names = index["names"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return {n: root / n for n in names} if all((root / n).is_file() for n in names) else None


def _tree_entry(tar: tarfile.TarFile, member: tarfile.TarInfo) -> tuple[str, bytes] | None:
    if member.issym():
        return LINK, member.linkname.encode()
    fh = tar.extractfile(member) if member.isfile() else None
    return None if fh is None else ((EXEC if member.mode & 0o100 else FILE), fh.read())


def fetch_tasks(pin: SourcePin, dest_dir: Path) -> dict[str, Path]:
    """Download the pinned revision's ``tasks/`` (cached under `dest_dir`/<revision>)."""
    root = Path(dest_dir) / pin.revision
    index = root / INDEX
    cached = _cached(root)
    if cached is not None:
        return cached
    archive = root / ".sr-bench-source.tar.gz"
    with _client(None, 120.0) as client:
        if not archive.is_file():
            _get(client, pin, tarball_url(pin), archive)
    names: list[str] = []
    tree: dict[str, tuple[str, bytes]] = {}
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            for member in tar:
                parts = member.name.split("/", 1)
                if len(parts) != 2:
                    continue
                rel = parts[1]
                segs = rel.split("/")
                if segs[0] != "tasks" or len(segs) < 2 or ".." in segs or any(s in SKIP_DIRS for s in segs):
                    continue
                entry = _tree_entry(tar, member)
                if entry is None:
                    continue
                tree["/".join(segs[1:])] = entry
                if len(segs) >= 3 and entry[0] != LINK:
                    _write_atomic(root / rel, [entry[1]])
                    names.append(rel)
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise SourceUnavailable(f"the tarball of {pin.url} at {pin.revision} is unreadable ({exc}): delete {archive} "
                                "and retry, or prepare from a local checkout with --source-path DIR") from exc
    if not names:
        raise SourceUnavailable(f"no tasks/ in {pin.url} at {pin.revision}; prepare from a local checkout with "
                                "--source-path DIR")
    _write_atomic(index, [json.dumps({"names": sorted(names), "tasks_tree": tree_of_entries(tree)}).encode("utf-8")])
    archive.unlink(missing_ok=True)
    return {n: root / n for n in sorted(names)}
