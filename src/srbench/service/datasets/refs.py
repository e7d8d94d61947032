"""The store's dataset registry (journal refs), and its link to the team's shared dataset names.

A dataset is registered under its id (the printed manifest, with this host's path) and indexed by
the SHA-256 of its bytes; several ids may share bytes (a `--limit` equal to the profile size). When
the objects are shared with a team, registering also publishes the dataset's names there, and a
sha256 this journal does not know is looked up among them (then registered here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from srbench.cas import ObjectStore
from srbench.cas.digest import is_digest
from srbench.schemas.dataset import DatasetManifest, FrozenDataset
from srbench.stages.datasets.build import with_path

if TYPE_CHECKING:
    from srbench.service.app import Service


def register_dataset(service: Service, manifest: DatasetManifest) -> DatasetManifest:
    printed = with_path(service.objects, manifest)
    service.journal.set_ref_sync("dataset", printed.id, printed.model_dump(mode="json"))
    ids = dataset_ids_with_sha256(service, printed.sha256)
    if printed.id not in ids:
        service.journal.set_ref_sync("dataset-sha256", printed.sha256, [*ids, printed.id])
    if service.objects_shared:
        publish_dataset(service.objects, printed)
    return printed


def registered(service: Service, dataset_id: str) -> DatasetManifest | None:
    """The registered manifest of this ``ds-`` id, or None."""
    value = service.journal.get_ref("dataset", dataset_id)
    return None if value is None else DatasetManifest.model_validate(value)


def all_registered(service: Service) -> list[DatasetManifest]:
    """Every registered manifest, in the journal's order."""
    return [DatasetManifest.model_validate(v) for _, v in service.journal.list_refs("dataset")]


def dataset_ids_with_sha256(service: Service, sha: str) -> list[str]:
    value = service.journal.get_ref("dataset-sha256", sha)
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def find_datasets(service: Service, sha: str) -> list[DatasetManifest]:
    """Every dataset with these bytes: this store's, else the team's (registered here on first use)."""
    found = [registered(service, did) for did in dataset_ids_with_sha256(service, sha)]
    local = [m for m in found if m is not None]
    if local or not service.objects_shared:
        return local
    return [register_dataset(service, m) for m in shared_datasets(service.objects, sha)]


def publish_dataset(objects: ObjectStore, manifest: DatasetManifest) -> None:
    """Bind the dataset's names in `objects` (its manifest without a path: the same on every host)."""
    digest = objects.put_json(manifest.model_dump(mode="json", exclude={"path"}))
    objects.claim_name(f"datasets/{manifest.id}", digest)
    objects.claim_name(f"datasets-sha256/{manifest.sha256}/{manifest.id}", digest)


def shared_datasets(objects: ObjectStore, sha256: str) -> list[FrozenDataset]:
    """Dataset manifests the team published for these bytes (checked against their names)."""
    out = []
    for name in objects.list_names(f"datasets-sha256/{sha256}"):
        digest = objects.read_name(name)
        if digest is None:
            continue
        manifest = objects.get_json(digest, verify=True)
        if isinstance(manifest, dict) and manifest.get("sha256") == sha256 and is_digest(manifest.get("object")):
            out.append(FrozenDataset.model_validate(manifest))
    return out
