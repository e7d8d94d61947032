"""Names in an object store: small files under ``names/<kind>/<...>``, each bound once to an object digest
(create-if-absent), for what a team must find by name (a pushed run, a registered dataset). A mixin of
`ObjectStore` (`cas/store.py`), which supplies the backend.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from srbench.cas import localfs
from srbench.cas.digest import is_digest
from srbench.errors import IntegrityError, InvalidInput

_NAME = re.compile(r"[a-z][a-z0-9-]{0,40}(/[A-Za-z0-9][A-Za-z0-9._-]{0,127}){0,4}")


class NamedObjects:
    """Bind names to digests once, read them back and list them (the store's `fs`, `local` and `_join`)."""

    fs: Any
    local: bool

    def _join(self, *parts: str) -> str:
        raise NotImplementedError

    def claim_name(self, name: str, digest: str) -> str:
        """Bind `name` to `digest` if it is unbound (create-if-absent: O_EXCL locally, If-None-Match
        on S3); returns the digest the name is bound to, which may be another writer's."""
        if not is_digest(digest):
            raise InvalidInput(f"not an object digest: {digest!r}")
        path = self._name_path(name)
        data = digest.encode()
        try:
            if self.local:
                localfs.exclusive_local_write(path, data)
            else:
                self.fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
                self.fs.pipe_file(path, data, mode="create")
            return digest
        except FileExistsError:
            bound = self.read_name(name)
            if bound is None:
                raise IntegrityError(f"name {name} exists but does not hold an object digest") from None
            return bound

    def read_name(self, name: str) -> str | None:
        """The digest `name` is bound to, or None when it is unbound."""
        path = self._name_path(name)
        try:
            if self.local:
                with open(path, "rb") as fh:
                    raw = fh.read()
            else:
                raw = self.fs.cat_file(path)
        except FileNotFoundError:
            return None
        value = raw.decode("ascii", "replace").strip()
        if not is_digest(value):
            raise IntegrityError(f"name {name} does not hold an object digest")
        return value

    def list_names(self, prefix: str) -> list[str]:
        """The bound names directly under `prefix/`."""
        base = self._name_path(prefix)
        try:
            if not self.local:
                self.fs.invalidate_cache(base)
            entries = self.fs.ls(base, detail=False)
        except FileNotFoundError:
            return []
        return sorted(prefix + "/" + e.rstrip("/").rsplit("/", 1)[-1] for e in entries
                      if not e.rstrip("/").rsplit("/", 1)[-1].startswith("."))

    def iter_names(self) -> Iterator[tuple[str, str]]:
        """Every bound (name, digest): garbage collection's roots besides the journal."""
        base = self._join("names")
        try:
            paths = self.fs.find(base)
        except FileNotFoundError:
            return
        for path in paths:
            name = path[len(base):].strip("/")
            if _NAME.fullmatch(name):
                digest = self.read_name(name)
                if digest is not None:
                    yield name, digest

    def _name_path(self, name: str) -> str:
        if not _NAME.fullmatch(name):
            raise InvalidInput(f"not a valid object-store name: {name[:80]!r}")
        return self._join("names", name)


__all__ = ["NamedObjects"]
