"""The store's dataset registry (journal refs), and its link to the team's shared dataset names.

A dataset is registered under its id (the printed manifest, with this host's path) and indexed by
the SHA-256 of its bytes; several ids may share bytes (a `--limit` equal to the profile size). When
the objects are shared with a team, registering also publishes the dataset's names there, and a
sha256 this journal does not know is looked up among them (then registered here).
"""

from __future__ import annotations

from typing import Any

from srbench.service import team
from srbench.stages.datasets import with_path


def register_dataset(service: Any, manifest: dict[str, Any]) -> dict[str, Any]:
    printed = with_path(service.objects, manifest)
    service.journal.set_ref_sync("dataset", printed["id"], printed)
    ids = dataset_ids_with_sha256(service, printed["sha256"])
    if printed["id"] not in ids:
        service.journal.set_ref_sync("dataset-sha256", printed["sha256"], [*ids, printed["id"]])
    if service.objects_shared:
        team.publish_dataset(service.objects, printed)
    return printed


def dataset_ids_with_sha256(service: Any, sha: str) -> list[str]:
    value = service.journal.get_ref("dataset-sha256", sha)
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def find_datasets(service: Any, sha: str) -> list[dict[str, Any]]:
    """Every dataset with these bytes: this store's, else the team's (registered here on first use)."""
    found = [service.journal.get_ref("dataset", did) for did in dataset_ids_with_sha256(service, sha)]
    local = [m for m in found if m is not None]
    if local or not service.objects_shared:
        return local
    return [register_dataset(service, m) for m in team.shared_datasets(service.objects, sha)]
