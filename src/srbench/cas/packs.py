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

Readers keep a `PackIndex` (digest → every pack, offset and length that lists it: issue 38, item 3, a read
tries each copy) of the packs they have seen and list the directory again when a digest is not found and
the directory changed since they last listed it. Only regular files are opened (issue 38, item 4): a FIFO,
socket, device or symbolic link named ``*.pack`` is never read, and the index names it with every other
``*.pack`` it could not read (`PackIndex.unreadable`).
"""

from __future__ import annotations

import os
import struct
import threading
import time
from collections.abc import Iterator, Mapping

import blake3

from srbench.cas.digest import PREFIX
from srbench.cas.localfs import NotRegularFile, kind_of, open_regular
from srbench.cas.pack_table import ENTRY, PackTable, Place

MAGIC = b"SRBPACK1"
SUFFIX = ".pack"
_HEAD = struct.Struct(">8sI")
# a listing is trusted to have seen every pack only when it came this long after the directory's last
# change (a file system's timestamps are coarse: a pack linked within the same tick leaves it unchanged)
_TICK_NS = 100_000_000


def encode(objects: Mapping[str, bytes]) -> tuple[str, bytes, list[tuple[str, int, int]]]:
    """A pack of `objects` (digest → bytes): its name (64 hex), its bytes, and each object's
    (digest, offset, length)."""
    offset = _HEAD.size + len(objects) * ENTRY.size
    index = bytearray(_HEAD.pack(MAGIC, len(objects)))
    places = []
    for digest, data in objects.items():
        index += ENTRY.pack(bytes.fromhex(digest.removeprefix(PREFIX)), offset, len(data))
        places.append((digest, offset, len(data)))
        offset += len(data)
    data = b"".join([bytes(index), *objects.values()])
    return blake3.blake3(data).hexdigest(), data, places


def read_index(path: str) -> list[tuple[str, int, int]]:
    """The (digest, offset, length) of each whole object in the pack at `path`. ValueError when the
    file is not a pack (or its index is cut short); entries past the file's end are left out."""
    return scan_index(path)[0]


def scan_index(path: str) -> tuple[list[tuple[str, int, int]], int]:
    """`read_index`, and how many entries point past the file's end (a pack cut short). Only a regular file
    is opened (`NotRegularFile` otherwise), without blocking."""
    raw, whole = _scan(path)
    entries = [(PREFIX + d.hex(), off, n) for d, off, n in ENTRY.iter_unpack(raw)]
    return [entries[i] for i in whole], len(entries) - len(whole)


def _scan(path: str) -> tuple[bytes, list[int]]:
    """The index entries of the pack at `path` as stored, and the positions of the whole ones."""
    fd = open_regular(path)
    try:
        head = os.pread(fd, _HEAD.size, 0)
        if len(head) != _HEAD.size:
            raise ValueError(f"{path}: not a pack (too short)")
        magic, count = _HEAD.unpack(head)
        size = os.fstat(fd).st_size
        if magic != MAGIC or _HEAD.size + count * ENTRY.size > size:
            raise ValueError(f"{path}: not a pack, or its index is cut short")
        raw = os.pread(fd, count * ENTRY.size, _HEAD.size)
    finally:
        os.close(fd)
    return raw, [i for i, (_, off, n) in enumerate(ENTRY.iter_unpack(raw)) if off + n <= size]


class PackIndex:
    """Which packs hold which object, for the packs under one directory (thread-safe; the entries are a
    compact `PackTable`, cas/pack_table.py)."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self._table = PackTable()
        self.cut: dict[str, int] = {}                 # pack path → entries past its end (a pack cut short)
        self.unreadable: dict[str, str] = {}          # a *.pack that is not a readable pack → why
        self._listed_mtime: int | None = None         # the directory's mtime at a trusted listing
        self.listings = 0                             # how many times the directory was listed
        self._lock = threading.Lock()

    def places(self, digest: str, *, look: bool = True) -> list[Place]:
        """Every pack entry listing `digest` (none: []); `look` lists the directory again on a miss when it
        changed."""
        try:
            raw = bytes.fromhex(digest.removeprefix(PREFIX))
        except ValueError:
            return []
        if len(raw) != 32:
            return []
        hit = self._table.find(raw)
        if not hit and look and self.refresh():
            hit = self._table.find(raw)
        return hit

    def get(self, digest: str, *, look: bool = True) -> Place | None:
        """The first pack entry listing `digest`, or None."""
        found = self.places(digest, look=look)
        return found[0] if found else None

    def add(self, pack: str, entries: list[tuple[str, int, int]]) -> None:
        """Index a pack (one this process wrote, or found by a listing)."""
        raw = b"".join(ENTRY.pack(bytes.fromhex(d.removeprefix(PREFIX)), off, n) for d, off, n in entries)
        with self._lock:
            self.cut.pop(pack, None)
            self._table.add(pack, raw, range(len(entries)))

    def forget(self, pack: str) -> None:
        """A pack that is gone (garbage collection unpacked it): its objects are no longer found there."""
        with self._lock:
            self.cut.pop(pack, None)
            self._table.forget(pack)

    def refresh(self, *, force: bool = False, reread: bool = False) -> bool:
        """Index the packs added since the last listing; True when any was. `reread` reads every pack's index
        again (maintenance: an index damaged on disk since it was first read is seen); the new index
        replaces the old one at once, so a concurrent read sees one or the other."""
        try:
            mtime = os.stat(self.directory).st_mtime_ns
        except FileNotFoundError:
            return False
        if mtime == self._listed_mtime and not (force or reread):
            return False
        with self._lock:
            self.listings += 1
            listed_at = time.time_ns()
            try:
                with os.scandir(self.directory) as it:
                    found = {e.path: e for e in it if e.name.endswith(SUFFIX)}
            except FileNotFoundError:
                return False
            table, cut = (PackTable(), {}) if reread else (self._table, self.cut)
            for gone in [p for p in table.numbers if p not in found]:     # unpacked by another process
                table.forget(gone)
                cut.pop(gone, None)
            self.unreadable = {p: why for p, why in self.unreadable.items() if p in found}
            added = False
            for path, entry in found.items():
                if path not in table.numbers and self._index(path, entry, table, cut):
                    added = True
            self._table, self.cut = table, cut          # built aside when rereading, then swapped in whole
            self._listed_mtime = mtime if listed_at - mtime > _TICK_NS else None
        return added

    def index_only(self, paths: list[str]) -> None:
        """Index these packs as a listing would (read from disk, whole: every entry of each), and not the others
        of the directory: a reader told which packs its objects are in (the report-rows worker: the service
        names the packs of each batch's calls) holds their entries only, not the whole store's (~64 bytes an
        object: 12 MiB at 100k cells, issue 42 item 3). A digest found in none of them is still looked for
        by listing the directory (`places`). A path that is not a readable pack is left for that listing."""
        with self._lock:
            for path in paths:
                if path in self._table.numbers or os.path.dirname(path) != self.directory:
                    continue
                try:
                    raw, whole = _scan(path)        # (only a regular file is opened, without blocking)
                except (OSError, ValueError):
                    continue
                self._table.add(path, raw, whole)
                n_cut = len(raw) // ENTRY.size - len(whole)
                if n_cut:
                    self.cut[path] = n_cut

    def _index(self, path: str, entry: os.DirEntry[str], table: PackTable, cut: dict[str, int]) -> bool:
        """Index one listed pack into (table, cut); False (and named in `unreadable`) when it is not a
        readable pack."""
        try:
            if not entry.is_file(follow_symlinks=False):      # (the listing's type: nothing is opened)
                raise NotRegularFile(path, kind_of(entry.stat(follow_symlinks=False).st_mode))
            raw, whole = _scan(path)
        except FileNotFoundError:           # vanished
            return False
        except NotRegularFile as exc:       # never opened: a FIFO would block its reader
            self.unreadable[path] = f"not a regular file ({exc.kind})"
            return False
        except (OSError, ValueError) as exc:    # not a whole pack: its objects are absent
            self.unreadable[path] = str(exc).replace(path + ": ", "")
            return False
        self.unreadable.pop(path, None)
        table.add(path, raw, whole)
        n_cut = len(raw) // ENTRY.size - len(whole)
        if n_cut:
            cut[path] = n_cut
        return True

    def pack_paths(self) -> list[str]:
        """The packs indexed now."""
        return sorted(self._table.numbers)

    def __iter__(self) -> Iterator[str]:
        return (PREFIX + d.hex() for d in self._table)


__all__ = ["MAGIC", "SUFFIX", "PackIndex", "Place", "encode", "read_index", "scan_index"]
