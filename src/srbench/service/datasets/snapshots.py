"""Exclusion snapshots kept by the service: a checked snapshot stored as an object and registered by its sha256
(`POST /datasets/exclusions` compiles one: `service.routes.exclusions`), and the snapshot a preparation names,
inline or by digest."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from srbench.errors import NotFound
from srbench.stages.datasets.exclusions import Snapshot, check_snapshot

if TYPE_CHECKING:
    from srbench.service.app import Service

KIND = "exclusion-snapshot"


class SnapshotRef(BaseModel):
    """A checked snapshot kept in the store: its object and its sha256 (the journal row registering it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    object: str = Field(description="the object digest of the snapshot's canonical JSON")
    sha256: str = Field(description="the snapshot's own sha256 (of its content)")


def remember_snapshot(service: Service, ref: SnapshotRef) -> None:
    """Register a stored snapshot object by its sha256 (a preparation may then name it by digest)."""
    if service.journal.get_ref(KIND, ref.sha256) is None:
        service.journal.set_ref_sync(KIND, ref.sha256, ref.model_dump(mode="json"))


def store_snapshot(service: Service, snapshot: Snapshot) -> str:
    """Keep a checked snapshot as an object and register it by its sha256. Returns the object digest."""
    digest: str = service.objects.put_json(snapshot.model_dump(mode="json"))
    remember_snapshot(service, SnapshotRef(object=digest, sha256=snapshot.sha256))
    return digest


def resolve_snapshot(service: Service, value: Mapping[str, object] | str | None) -> SnapshotRef | None:
    """The snapshot a preparation names: inline (checked, then kept as an object; registered by
    `remember_snapshot` once the preparation succeeded), or by the sha256 or object digest of one this
    store holds."""
    if value is None:
        return None
    if not isinstance(value, str):
        snap = check_snapshot(value)
        return SnapshotRef(object=service.objects.put_json(snap.model_dump(mode="json")), sha256=snap.sha256)
    if re.fullmatch(r"[0-9a-f]{64}", value):
        ref = service.journal.get_ref(KIND, value)
        if ref is None:
            raise NotFound(f"no exclusion snapshot with sha256 {value} in this store; send the snapshot itself")
        return SnapshotRef(object=SnapshotRef.model_validate(ref).object, sha256=value)
    try:
        snap = check_snapshot(service.objects.get_json(value))
    except NotFound:
        raise NotFound(f"no exclusion snapshot object {value} in this store; send the snapshot itself") from None
    return SnapshotRef(object=value, sha256=snap.sha256)
