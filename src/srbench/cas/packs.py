"""Pack files: a group of small objects stored as one file, and the index that finds them.

Why (issue 31, item 5): on a local disk a new loose object costs an inode and a directory entry —
tens of microseconds of kernel time and four system calls, each a hand-off of the interpreter lock —
and the journal writer stores about three objects a model call. So the new objects of one group
commit go into one pack, ``packs/<64 hex>.pack``, written whole or not at all like an object (an
unnamed file that gets its name once complete) and made durable by the same barrier before any row
that names them commits. A pack never changes; its name is the BLAKE3 of its bytes.

Format (big-endian): the magic ``SRBPACK1``, a u32 count, that many entries of (32-byte BLAKE3
digest, u64 offset, u64 length), then the objects' bytes. Nothing read from a pack is trusted: the
object store verifies every object against its digest, so a damaged pack answers "damaged" or
"absent", never wrong bytes. An entry that points past the end of its file (a pack cut short) is
absent.

Readers keep a `PackIndex` (digest → pack, offset, length) of the packs they have seen and list the
directory again when a digest is not found and the directory changed since they last listed it.
"""

from __future__ import annotations

import os
import struct
import threading
import time
from collections.abc import Iterator, Mapping
from typing import NamedTuple

import blake3

from srbench.cas.digest import PREFIX

MAGIC = b"SRBPACK1"
SUFFIX = ".pack"
_HEAD = struct.Struct(">8sI")
_ENTRY = struct.Struct(">32sQQ")
# a listing is trusted to have seen every pack only when it came this long after the directory's last
# change (a file system's timestamps are coarse: a pack linked within the same tick leaves it unchanged)
_TICK_NS = 100_000_000


class Place(NamedTuple):
    """Where one packed object's bytes are."""

    pack: str
    offset: int
    length: int


def encode(objects: Mapping[str, bytes]) -> tuple[str, bytes, list[tuple[str, int, int]]]:
    """A pack of `objects` (digest → bytes): its name (64 hex), its bytes, and each object's
    (digest, offset, length)."""
    offset = _HEAD.size + len(objects) * _ENTRY.size
    index = bytearray(_HEAD.pack(MAGIC, len(objects)))
    places = []
    for digest, data in objects.items():
        index += _ENTRY.pack(bytes.fromhex(digest.removeprefix(PREFIX)), offset, len(data))
        places.append((digest, offset, len(data)))
        offset += len(data)
    data = b"".join([bytes(index), *objects.values()])
    return blake3.blake3(data).hexdigest(), data, places


def read_index(path: str) -> list[tuple[str, int, int]]:
    """The (digest, offset, length) of each whole object in the pack at `path`. ValueError when the
    file is not a pack (or its index is cut short); entries past the file's end are left out."""
    with open(path, "rb") as fh:
        head = fh.read(_HEAD.size)
        if len(head) != _HEAD.size:
            raise ValueError(f"{path}: not a pack (too short)")
        magic, count = _HEAD.unpack(head)
        size = os.fstat(fh.fileno()).st_size
        if magic != MAGIC or _HEAD.size + count * _ENTRY.size > size:
            raise ValueError(f"{path}: not a pack, or its index is cut short")
        raw = fh.read(count * _ENTRY.size)
    return [(PREFIX + d.hex(), off, n) for d, off, n in _ENTRY.iter_unpack(raw) if off + n <= size]


class PackIndex:
    """Which pack holds which object, for the packs under one directory (thread-safe)."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self._where: dict[str, Place] = {}
        self._packs: dict[str, list[str]] = {}       # pack path → the digests it holds
        self._listed_mtime: int | None = None         # the directory's mtime at a trusted listing
        self._lock = threading.Lock()

    def get(self, digest: str, *, look: bool = True) -> Place | None:
        """Where `digest` is packed, or None; `look` lists the directory again on a miss when it changed."""
        hit = self._where.get(digest)
        if hit is None and look and self.refresh():
            hit = self._where.get(digest)
        return hit

    def add(self, pack: str, entries: list[tuple[str, int, int]]) -> None:
        """Index a pack (one this process wrote, or found by a listing)."""
        with self._lock:
            self._add(pack, entries)

    def _add(self, pack: str, entries: list[tuple[str, int, int]]) -> None:
        self._packs[pack] = [d for d, _, _ in entries]
        for digest, offset, length in entries:
            self._where[digest] = Place(pack, offset, length)

    def forget(self, pack: str) -> None:
        """A pack that is gone (garbage collection unpacked it): its objects are no longer found there."""
        with self._lock:
            self._forget(pack)

    def _forget(self, pack: str) -> None:
        for digest in self._packs.pop(pack, []):
            if self._where.get(digest, Place("", 0, 0)).pack == pack:
                del self._where[digest]

    def refresh(self, *, force: bool = False) -> bool:
        """Index the packs added since the last listing; True when any was."""
        try:
            mtime = os.stat(self.directory).st_mtime_ns
        except FileNotFoundError:
            return False
        if mtime == self._listed_mtime and not force:
            return False
        with self._lock:
            listed_at = time.time_ns()
            try:
                names = os.listdir(self.directory)
            except FileNotFoundError:
                return False
            listed = {f"{self.directory}/{name}" for name in names}
            for gone in [p for p in self._packs if p not in listed]:     # unpacked by another process
                self._forget(gone)
            added = False
            for name in names:
                path = f"{self.directory}/{name}"
                if not name.endswith(SUFFIX) or path in self._packs:
                    continue
                try:
                    entries = read_index(path)
                except (OSError, ValueError):       # vanished, or not a whole pack: its objects are absent
                    continue
                self._add(path, entries)
                added = True
            self._listed_mtime = mtime if listed_at - mtime > _TICK_NS else None
        return added

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._where))


__all__ = ["MAGIC", "SUFFIX", "PackIndex", "Place", "encode", "read_index"]
