"""A dataset's names on the wire (issue 30, item 6).

A dataset is a function of its cases' sha256, sources, profile, seed, subset flag, selection and
evaluation; the 64 hex digits of that digest (`build.naming`, see `wire_id`) are its id
wherever an answer hands a dataset out, because upstream names datasets by 64 hex digits and its Dashboard proxy lets
only those through on ``/datasets/{id}``. sr-bench's ``ds-`` id (the digest's first 32 hex digits,
which frozen plans name and which never changes) rides along as ``ref``. Every route that takes a
dataset takes either, and also the SHA-256 of the dataset's bytes (upstream's ``provenance.sha256``);
all three resolve to the same stored manifest.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from srbench.cas import digest_json, short
from srbench.errors import NotFound, SrBenchError
from srbench.schemas.dataset import DatasetManifest
from srbench.schemas.text import shorten
from srbench.service.api.responses import WireDataset
from srbench.service.datasets.refs import dataset_ids_with_sha256, registered
from srbench.stages.datasets.build import naming

if TYPE_CHECKING:
    from srbench.service.app import Service

HEX64 = re.compile(r"[0-9a-f]{64}")
REF = re.compile(r"ds-[0-9a-f]{32}")


def wire_id(m: DatasetManifest) -> str:
    """The 64-hex id of a stored manifest (its `id` is the ``ds-`` ref): the digest its ref is the first
    32 hex digits of. A manifest whose stored fields do not give that digest back (a dataset of inline
    cases: its fields were completed with defaults after it was named) keeps the ref's 32 digits and
    ends in 32 of a digest of its ref and bytes. Either way the id starts with the ref's digits, which
    is how `resolve` finds it."""
    full = naming(m)
    if "ds-" + full[:32] == m.id or not REF.fullmatch(m.id):
        return full
    return m.id.removeprefix("ds-") + short(digest_json({"dataset": m.id, "sha256": m.sha256}), 32)


def on_wire(m: DatasetManifest) -> WireDataset:
    """A stored manifest as answers hand it out: `id` the 64-hex id, `ref` the ``ds-`` id."""
    return WireDataset.model_validate({**m.model_dump(exclude={"path"}), "path": m.path, "id": wire_id(m), "ref": m.id})


def wire_ids(service: Service, refs: list[str]) -> list[str]:
    """Stored ``ds-`` ids (a selection's or a preparation item's sources) as the 64-hex ids."""
    out = []
    for ref in refs:
        m = registered(service, ref)
        out.append(wire_id(m) if m is not None else ref)
    return out


def resolve(service: Service, name: str) -> DatasetManifest:
    """The stored manifest a dataset name names: its 64-hex id, its ``ds-`` ref, or the SHA-256 of its
    bytes (of several datasets with the same bytes, the one with the smallest ref)."""
    m = None
    if REF.fullmatch(name):
        m = registered(service, name)
    elif HEX64.fullmatch(name):
        m = registered(service, "ds-" + name[:32])
        if m is not None and wire_id(m) != name:
            m = None
        if m is None:
            same = sorted(dataset_ids_with_sha256(service, name))
            m = registered(service, same[0]) if same else None
    else:
        raise NotFound(f"dataset id {shorten(name, 80)!r} is malformed: name a dataset by its 64-hex id or its "
                       "ds- ref (`sr-bench dataset list`, or `GET /datasets`, lists them)")
    if m is None:
        raise NotFound(f"no dataset {name!r}")
    return m


def as_named(exc: SrBenchError, named: Sequence[tuple[str, DatasetManifest]]) -> SrBenchError:
    """`exc` (raised over stored manifests, which it names by ref) naming each dataset as the request
    did: (the name given, its stored manifest) pairs."""
    msg = exc.message
    for given, m in named:
        msg = msg.replace(m.id, given)
    return type(exc)(msg, code=exc.code, details=exc.details)
