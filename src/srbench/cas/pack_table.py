"""Where each packed object is, in ~64 bytes an entry (cas/packs.py `PackIndex` keeps one).

Why (issue 42, item 3): the index was a dict of digest string → list of `Place` tuples, ~370 bytes an
entry in the service and again in the report-rows worker: a 100k-cell run packs ~200k objects (70 MiB
a process), and a store of a million calls would hold hundreds of MiB before answering anything. Here
a pack's entries are kept as its file lists them (48 bytes each: digest, offset, length) and found by
the digest's first 8 bytes in one sorted pair of arrays (8 + 8 bytes an entry: the key, then the pack's
number and the entry's position); the packs added since the last merge wait in a small dict
(`MERGE_AT` entries), merged by slicing the arrays (a memcpy, not a loop over the whole index). The full
digest is compared before an entry is answered, so two digests sharing a prefix never mix.

Readers do not lock: the arrays and the pending dict are swapped in as one tuple, and a forgotten pack's
entries are skipped by its number until the next merge drops them.
"""

from __future__ import annotations

import struct
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator
from typing import NamedTuple

ENTRY = struct.Struct(">32sQQ")
MERGE_AT = 8192                 # pending entries that trigger a merge into the sorted arrays
_LOW = 0xFFFFFFFF
_END = 1 << 64                  # past every key


class Place(NamedTuple):
    """Where one packed object's bytes are."""

    pack: str
    offset: int
    length: int


def _key(raw: bytes) -> int:
    return int.from_bytes(raw[:8], "big")


class PackTable:
    """The entries of a set of packs, by digest (see the module docstring). Writers hold the owner's lock."""

    def __init__(self) -> None:
        self.paths: list[str | None] = []             # pack number → its path (None: forgotten)
        self._raws: list[bytes | None] = []           # pack number → its index entries as stored
        self.numbers: dict[str, int] = {}             # path → pack number (indexed packs only)
        # (sorted keys, their values: pack number << 32 | entry position, pending key → values)
        self._view: tuple[array[int], array[int], dict[int, list[int]]] = (array("Q"), array("Q"), {})
        self._pending = 0
        self._dead = 0                                # merged entries of forgotten packs

    def add(self, path: str, raw: bytes, whole: Iterable[int]) -> None:
        """Index the pack at `path`: `raw` its entries (ENTRY each), `whole` the positions of those to answer."""
        self.forget(path)
        number = len(self.paths)
        self.paths.append(path)
        self._raws.append(raw)
        self.numbers[path] = number
        pending = self._view[2]
        n = 0
        for i in whole:
            pending.setdefault(_key(raw[i * ENTRY.size:i * ENTRY.size + 8]), []).append(number << 32 | i)
            n += 1
        self._pending += n
        if self._pending >= MERGE_AT:
            self._merge()

    def forget(self, path: str) -> None:
        number = self.numbers.pop(path, None)
        if number is None:
            return
        raw = self._raws[number]
        self.paths[number] = None
        self._raws[number] = None
        self._dead += len(raw or b"") // ENTRY.size

    def find(self, digest: bytes) -> list[Place]:
        """Every indexed entry of the 32-byte `digest`, the packs in the order they were added."""
        keys, values, pending = self._view
        key = _key(digest)
        i = bisect_left(keys, key)
        out: list[Place] = []
        while i < len(keys) and keys[i] == key:
            self._place(values[i], digest, out)
            i += 1
        for value in pending.get(key, ()):
            self._place(value, digest, out)
        return out

    def _place(self, value: int, digest: bytes, out: list[Place]) -> None:
        number, at = value >> 32, (value & _LOW) * ENTRY.size
        raw, path = self._raws[number], self.paths[number]
        if raw is None or path is None:
            return
        d, offset, length = ENTRY.unpack_from(raw, at)
        if d == digest:
            out.append(Place(path, offset, length))

    def digests(self, path: str) -> list[bytes]:
        """The digests a pack's answered entries hold."""
        number = self.numbers.get(path)
        raw = None if number is None else self._raws[number]
        return [] if raw is None else [d for d, _, _ in ENTRY.iter_unpack(raw)]

    def __iter__(self) -> Iterator[bytes]:
        """Each digest indexed, once (in key order: the copies of a digest are neighbours)."""
        keys, values, pending = self._view
        extra = sorted((k, v) for k, vs in pending.items() for v in vs)
        i = j = 0
        while i < len(keys) or j < len(extra):
            key = min(keys[i] if i < len(keys) else _END, extra[j][0] if j < len(extra) else _END)
            group: list[int] = []
            while i < len(keys) and keys[i] == key:
                group.append(values[i])
                i += 1
            while j < len(extra) and extra[j][0] == key:
                group.append(extra[j][1])
                j += 1
            seen: set[bytes] = set()
            for value in group:
                number, at = value >> 32, (value & _LOW) * ENTRY.size
                raw = self._raws[number]
                if raw is not None and self.paths[number] is not None and raw[at:at + 32] not in seen:
                    seen.add(raw[at:at + 32])
                    yield raw[at:at + 32]

    def _merge(self) -> None:
        """Move the pending entries into the sorted arrays (and drop forgotten packs' entries when they are
        a quarter of them); swapped in whole, so a reader sees the old view or the new one."""
        keys, values, pending = self._view
        if self._dead * 4 > len(keys):
            keep = [(k, v) for k, v in zip(keys, values, strict=True) if self._raws[v >> 32] is not None]
            keys, values = array("Q", [k for k, _ in keep]), array("Q", [v for _, v in keep])
            self._dead = 0
        new_keys, new_values = array("Q"), array("Q")
        start = 0
        for key, vs in sorted(pending.items()):
            at = bisect_right(keys, key, start)     # after the older packs' entries of the same key
            new_keys += keys[start:at]
            new_values += values[start:at]
            for v in vs:
                new_keys.append(key)
                new_values.append(v)
            start = at
        new_keys += keys[start:]
        new_values += values[start:]
        self._view = (new_keys, new_values, {})
        self._pending = 0
