"""Import a dataset frozen by upstream's vllm-sr (issue 39, item 6): its folder read on the service host.

The folder `vllm-sr benchmark dataset prepare --local` writes (`<store>/datasets/<id>/`, or its `manifest.json`)
holds `manifest.json` and `cases.jsonl`; the cases file's bytes are stored as they are and the dataset is
registered like a prepared one (`service.wire.upstream_dataset` checks and translates the manifest). Importing
the same folder again answers the same dataset.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from srbench.errors import InvalidInput
from srbench.schemas.dataset import DatasetManifest
from srbench.schemas.text import shorten
from srbench.service.datasets.refs import register_dataset, registered
from srbench.service.wire.upstream_dataset import CASES, MANIFEST, translate

if TYPE_CHECKING:
    from srbench.service.app import Service

MAX_MANIFEST = 2 * 1024 * 1024      # upstream's own bound on a prepared manifest


def import_upstream(service: Service, path: str) -> DatasetManifest:
    """Register the upstream dataset at `path` (its folder or its manifest.json); the stored manifest."""
    folder = _folder(Path(path))
    raw_manifest = _read(folder / MANIFEST, MAX_MANIFEST)
    try:
        raw = json.loads(raw_manifest)
    except ValueError as exc:
        raise InvalidInput(f"{shorten(str(folder / MANIFEST))} is not JSON ({exc}); name the folder `vllm-sr "
                           "benchmark dataset prepare --local` wrote") from None
    data = _read(folder / CASES, None)
    manifest = translate(raw, data, service.objects.put_bytes(data))
    known = registered(service, manifest.id)
    ours = manifest.upstream.id if manifest.upstream else None
    if known is not None and (known.upstream is None or known.upstream.id != ours):
        raise InvalidInput(f"dataset {manifest.id} is already another dataset of this store; nothing imported")
    return register_dataset(service, manifest)


def _folder(path: Path) -> Path:
    """The folder holding the dataset: `path`, or the folder of the manifest.json it names — through a link to
    one (the cases file is beside the real manifest). Any other file is refused naming what to give."""
    if path.name == MANIFEST and (path.parent / CASES).is_file():
        return path.parent
    if path.is_file():
        real = path.resolve()
        if real.name != MANIFEST:
            raise InvalidInput(f"upstream dataset: {shorten(str(path))} is a file, neither the folder `vllm-sr "
                               f"benchmark dataset prepare --local` wrote (it holds {MANIFEST} and {CASES}) nor "
                               f"its {MANIFEST}")
        return real.parent
    return path.parent if path.name == MANIFEST else path


def _read(path: Path, limit: int | None) -> bytes:
    try:
        found, size = path.is_file(), path.stat().st_size if path.is_file() else 0
        data = path.read_bytes() if found and (limit is None or size <= limit) else b""
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"upstream dataset: cannot read {shorten(str(path))}: "
                           f"{getattr(exc, 'strerror', None) or exc}") from None
    if not found:
        raise InvalidInput(f"upstream dataset: no file {shorten(str(path))} (name the folder `vllm-sr benchmark "
                           f"dataset prepare --local` wrote: it holds {MANIFEST} and {CASES})")
    if limit is not None and size > limit:
        raise InvalidInput(f"upstream dataset: {shorten(str(path))} is larger than {limit} bytes")
    return data
