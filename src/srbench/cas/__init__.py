"""Content-addressed storage: BLAKE3 digests, canonical JSON and an fsspec object store."""

from srbench.cas.digest import (
    canonical_json,
    digest_bytes,
    digest_json,
    is_digest,
    sha256_bytes,
    short,
)
from srbench.cas.store import ObjectStore

__all__ = [
    "ObjectStore",
    "canonical_json",
    "digest_bytes",
    "digest_json",
    "is_digest",
    "sha256_bytes",
    "short",
]
