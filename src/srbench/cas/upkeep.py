"""Pack upkeep on a local store: thinning a pack (unpack), merging small packs, removing unreadable ones.

Only garbage collection and `ObjectStore.path_of` change packs, and always in the order that keeps every
reader in every process safe: the objects a pack keeps are written first and made durable (loose files,
or a merged pack, each fsynced with its directory), and only then is the old pack removed. A reader that
looked for an object in a pack that is gone lists ``packs/`` again and reads the loose file once more
(`ObjectStore._iter_copies`), so it finds the object where it went.

Nothing that does not verify is ever thrown away here: a pack holding an entry whose bytes do not hash
to its digest (damaged, or misnamed: its bytes may be the only copy of another object) or entries past
its end is left whole unless garbage collection drops that very entry, and is never merged.

Merging (issue 38, item 5): a journal group commit writes one pack, so a 2,000-call run leaves 100–200.
`merge_small` reads the packs holding fewer than `FULL_OBJECTS` objects and `FULL_BYTES` bytes (and, from
garbage collection, older than its grace period: a young pack is left for the next one), writes
their objects into new packs (each filled up to those bounds) and removes the old ones: after it, every
pack but the last one written is full, so a store holds at most one pack per `FULL_OBJECTS` objects
(or `FULL_BYTES` bytes), plus one.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from srbench.cas import localfs
from srbench.cas.digest import digest_bytes
from srbench.cas.packs import SUFFIX, PackIndex, encode, scan_index

FULL_OBJECTS = 10_000
FULL_BYTES = 128 * 1024 * 1024

Write = Callable[[str, bytes], None]      # a whole, durable write (the store's, so faults reach it)


@dataclass(frozen=True)
class Merged:
    """What `merge_small` did: packs read, packs written, objects they hold."""

    merged: int = 0
    written: int = 0
    objects: int = 0


def _entries(pack: str) -> dict[int, tuple[str, bytes]] | None:
    """offset → (digest, bytes) of every entry of `pack`; None when it cannot be read whole (not a pack,
    not a regular file, entries past its end)."""
    try:
        entries, cut = scan_index(pack)
        whole = localfs.read_regular(pack)
    except (OSError, ValueError):
        return None
    if cut:
        return None
    return {offset: (digest, whole[offset:offset + length]) for digest, offset, length in entries}


def unpack(packs: PackIndex, loose: Callable[[str], str], write: Write, pack: str, doomed: set[str],
           drop: set[int] | frozenset[int] = frozenset()) -> bool:
    """Write the objects of `pack` that are not `doomed` (by digest) nor dropped (by offset) loose, then
    remove the pack. Left whole (False) when any other entry does not verify or it cannot be read whole."""
    try:
        mtime = os.stat(pack).st_mtime
    except FileNotFoundError:
        return False
    entries = _entries(pack)
    if entries is None:
        return False
    kept: dict[str, bytes] = {}
    for offset, (digest, data) in entries.items():
        if offset in drop:
            continue
        if digest_bytes(data) != digest:
            return False
        if digest not in doomed:
            kept[digest] = data
    for digest, data in kept.items():
        if not localfs.same_bytes(loose(digest), data):      # (a damaged loose copy is healed)
            write(loose(digest), data)
            os.utime(loose(digest), (mtime, mtime))          # (its age stays its pack's)
    _remove(packs, pack)
    return True


def _remove(packs: PackIndex, pack: str) -> None:
    try:
        os.unlink(pack)
    except FileNotFoundError:           # another process removed it meanwhile
        pass
    packs.forget(pack)


def merge_small(packs: PackIndex, write: Write, *, dry_run: bool = False, older_than_s: float = 0.0) -> Merged:
    """Merge the packs that are not full and at least `older_than_s` old into as few new packs as the bounds
    allow (see the module docstring); a pack that does not verify whole is left as it is. Batches are
    planned from the packs' indexes, and read one batch at a time (at most about `FULL_BYTES` in memory).
    A new pack takes the newest time of the packs it merges: an object's age is its pack's, and merging
    never makes garbage look young (nor anything look older than it is). With `dry_run`, what would be
    merged, nothing written."""
    packs.refresh(reread=True)
    batches = _batches(packs, older_than_s)
    if dry_run:
        return Merged(sum(len(b) for b in batches), len(batches), 0)
    done = Merged()
    for batch in batches:
        merged: dict[str, bytes] = {}
        read: list[str] = []
        newest = 0.0
        for pack in batch:
            try:
                mtime = os.stat(pack).st_mtime
            except FileNotFoundError:
                continue
            entries = _entries(pack)
            if entries is None or any(digest_bytes(data) != digest for digest, data in entries.values()):
                continue                        # (damaged meanwhile: left whole, never merged)
            merged.update(entries.values())
            read.append(pack)
            newest = max(newest, mtime)
        if len(read) < 2:
            continue
        name, data, places = encode(merged)
        path = f"{packs.directory}/{name}{SUFFIX}"
        write(path, data)                       # durable, with its directory, before any old pack goes
        os.utime(path, (newest, newest))
        packs.add(path, places)
        for old in read:
            if old != path:
                _remove(packs, old)
        done = Merged(done.merged + len(read), done.written + 1, done.objects + len(merged))
    return done


def _batches(packs: PackIndex, older_than_s: float) -> list[list[str]]:
    """The packs that are not full and old enough, in groups each about full once merged (groups of two or
    more)."""
    batches: list[list[str]] = [[]]
    count = size = 0
    now = time.time()
    for pack in packs.pack_paths():
        try:
            if now - os.stat(pack).st_mtime < older_than_s:
                continue
            entries, cut = scan_index(pack)
        except (OSError, ValueError):
            continue
        n, nbytes = len(entries), sum(length for _, _, length in entries)
        if cut or n >= FULL_OBJECTS or nbytes >= FULL_BYTES:
            continue
        if count >= FULL_OBJECTS or size >= FULL_BYTES:
            batches.append([])
            count = size = 0
        batches[-1].append(pack)
        count += n
        size += nbytes
    return [b for b in batches if len(b) >= 2]


def unreadable_packs(packs: PackIndex) -> list[tuple[str, str, float]]:
    """(path, why, age in seconds) of each regular ``*.pack`` file that is not a readable pack (a non-regular
    file is never touched: verify names it)."""
    packs.refresh(reread=True)
    now = time.time()
    out = []
    for path, why in sorted(packs.unreadable.items()):
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue
        if why.startswith("not a regular file"):
            continue
        out.append((path, why, now - st.st_mtime))
    return out


def remove_unreadable(packs: PackIndex, paths: list[str]) -> None:
    """Remove unreadable pack files (garbage collection, once its mark read every reachable object)."""
    for path in paths:
        try:
            if not localfs.is_regular(path):
                continue
            os.unlink(path)
        except FileNotFoundError:
            continue
        packs.unreadable.pop(path, None)


__all__ = ["FULL_BYTES", "FULL_OBJECTS", "Merged", "merge_small", "remove_unreadable", "unpack",
           "unreadable_packs"]
