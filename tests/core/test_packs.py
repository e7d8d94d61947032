"""Pack files (issue 31, item 5): a group of new objects is stored as one file, and every reader of the
store still finds, verifies, lists, copies out and collects each object as if it were loose."""

from __future__ import annotations

import os
import random
import threading
from pathlib import Path

import pytest

from maintenance.helpers import within
from srbench.cas import ObjectStore, digest_bytes
from srbench.cas.packs import read_index
from srbench.errors import DamagedObject, NotFound


def _blobs(n: int, tag: str = "x") -> list[bytes]:
    return [f'{{"kind":"test","n":{i},"tag":"{tag}"}}'.encode() for i in range(n)]


def _packs(root: Path) -> list[Path]:
    return sorted((root / "packs").glob("*.pack"))


def _flip(pack: Path, data: bytes, blob: bytes) -> None:
    """Rewrite `pack` as `data` with the first byte of `blob` changed."""
    at = data.index(blob)
    pack.chmod(0o644)
    pack.write_bytes(data[:at] + b"X" + data[at + 1:])


def _loose(root: Path) -> list[Path]:
    return [p for p in (root / "objects").rglob("*") if p.is_file()]


def test_new_objects_go_into_one_pack_and_read_back_verified(tmp_path: Path) -> None:
    store = ObjectStore(str(tmp_path))
    blobs = _blobs(5)
    digests = store.put_many(blobs, durable=False)
    assert digests == [digest_bytes(b) for b in blobs]
    (pack,) = _packs(tmp_path)
    assert _loose(tmp_path) == []
    assert pack.name == digest_bytes(pack.read_bytes())[3:] + ".pack"      # named by its bytes, like an object
    assert {d for d, _, _ in read_index(str(pack))} == set(digests)
    for d, b in zip(digests, blobs, strict=True):
        assert store.has(d) and store.get_bytes(d, verify=True) == b and store.verify(d)
    assert sorted(store.iter_digests()) == sorted(digests)
    info = store.info(digests[0])
    assert info is not None and info["size"] == len(blobs[0])


def test_a_put_of_stored_objects_writes_nothing_and_one_new_object_stays_loose(tmp_path: Path) -> None:
    store = ObjectStore(str(tmp_path))
    blobs = _blobs(3)
    store.put_many(blobs)
    store.put_many([*blobs, *blobs])                   # all stored already (and repeated): no new pack
    assert len(_packs(tmp_path)) == 1 and _loose(tmp_path) == []
    store.put_many([blobs[0], b'{"kind":"test","single":true}'])
    assert len(_packs(tmp_path)) == 1 and len(_loose(tmp_path)) == 1


def test_another_reader_finds_packs_written_after_it_opened_the_store(tmp_path: Path) -> None:
    reader = ObjectStore(str(tmp_path))
    assert not reader.has(digest_bytes(b"nothing yet"))
    writer = ObjectStore(str(tmp_path))
    first = writer.put_many(_blobs(3, "a"))
    assert all(reader.get_bytes(d) for d in first)
    second = writer.put_many(_blobs(3, "b"))            # a second pack, possibly within the same clock tick
    assert all(reader.has(d) for d in second)
    assert sorted(reader.iter_digests()) == sorted(first + second)


def test_a_pack_cut_short_loses_only_what_is_past_its_end_and_damage_is_never_served(tmp_path: Path) -> None:
    store = ObjectStore(str(tmp_path))
    blobs = _blobs(4)
    digests = store.put_many(blobs)
    (pack,) = _packs(tmp_path)
    data = pack.read_bytes()
    pack.chmod(0o644)
    pack.write_bytes(data[:-5])                          # a crash before the barrier: the last object is short
    fresh = ObjectStore(str(tmp_path))
    assert fresh.get_bytes(digests[0]) == blobs[0]
    with pytest.raises(NotFound):
        fresh.get_bytes(digests[-1])
    _flip(pack, data, blobs[1])                          # one byte flipped inside an object
    with pytest.raises(DamagedObject):
        ObjectStore(str(tmp_path)).get_bytes(digests[1])
    assert not ObjectStore(str(tmp_path)).verify(digests[1])


def test_not_a_pack_is_ignored(tmp_path: Path) -> None:
    store = ObjectStore(str(tmp_path))
    (tmp_path / "packs").mkdir()
    (tmp_path / "packs" / ("0" * 64 + ".pack")).write_bytes(b"not a pack at all")
    assert not store.has(digest_bytes(b"x")) and list(store.iter_digests()) == []


def test_path_of_unpacks_so_that_the_file_is_the_only_copy(tmp_path: Path) -> None:
    store = ObjectStore(str(tmp_path))
    blobs = _blobs(3)
    digests = store.put_many(blobs)
    path = Path(store.path_of(digests[1]))
    assert path.read_bytes() == blobs[1] and _packs(tmp_path) == [] and len(_loose(tmp_path)) == 3
    os.unlink(path)                                      # losing that file loses the object
    with pytest.raises(NotFound):
        ObjectStore(str(tmp_path)).get_bytes(digests[1])
    assert store.get_bytes(digests[0]) == blobs[0]


def test_deleting_packed_objects_keeps_the_others(tmp_path: Path) -> None:
    store = ObjectStore(str(tmp_path))
    blobs = _blobs(4)
    digests = store.put_many(blobs)
    store.delete_many(digests[:2])
    assert _packs(tmp_path) == []
    for d in digests[:2]:
        assert not store.has(d)
    for d, b in zip(digests[2:], blobs[2:], strict=True):
        assert ObjectStore(str(tmp_path)).get_bytes(d) == b


def test_a_pack_holding_a_damaged_object_is_kept_whole_by_a_delete(tmp_path: Path) -> None:
    store = ObjectStore(str(tmp_path))
    blobs = _blobs(3)
    digests = store.put_many(blobs)
    (pack,) = _packs(tmp_path)
    _flip(pack, pack.read_bytes(), blobs[2])
    store.delete_many([digests[0]])                      # unpacking would lose the damaged one's evidence
    assert _packs(tmp_path) == [pack] and store.get_bytes(digests[1]) == blobs[1]


def test_a_backend_without_packs_stores_each_object_whole(tmp_path: Path) -> None:
    store = ObjectStore("memory://packs-test-store")
    blobs = _blobs(3)
    digests = store.put_many(blobs)
    assert [store.get_bytes(d) for d in digests] == blobs
    assert sorted(store.iter_digests()) == sorted(digests)


def test_a_read_racing_an_unpack_finds_the_loose_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process unpacks (gc, path_of) between this reader's look for the loose file and its read
    of the pack: the loose copy, written before the pack went away, is read, never a false NotFound."""
    digests = ObjectStore(str(tmp_path)).put_many(_blobs(3))
    reader = ObjectStore(str(tmp_path))
    assert reader.has(digests[1])                        # the reader has indexed the pack
    first_look = reader._read_loose

    def racing(path: str) -> bytes:
        monkeypatch.setattr(reader, "_read_loose", first_look)
        try:
            return first_look(path)                      # not there yet: FileNotFoundError
        finally:
            ObjectStore(str(tmp_path)).path_of(digests[1])
    monkeypatch.setattr(reader, "_read_loose", racing)
    assert reader.get_bytes(digests[1], verify=True) == _blobs(3)[1]
    assert _packs(tmp_path) == [] and reader.has(digests[2])


def test_a_listing_forgets_packs_another_process_removed(tmp_path: Path) -> None:
    digests = ObjectStore(str(tmp_path)).put_many(_blobs(3))
    reader = ObjectStore(str(tmp_path))
    assert sorted(reader.iter_digests()) == sorted(digests)
    ObjectStore(str(tmp_path)).delete_many([digests[0]])   # gc elsewhere: unpacked, one object gone
    assert sorted(reader.iter_digests()) == sorted(digests[1:])
    assert not reader.has(digests[0])


# -- issue 38: every copy is tried; only regular files are opened -----------------------------------------
def _shadow(root: Path, digests: list[str], bad: list[bytes]) -> Path:
    """A second pack naming `digests` with the wrong bytes `bad` (a damaged copy of another store's pack)."""
    from srbench.cas.packs import encode

    _name, data, _ = encode(dict(zip(digests, bad, strict=True)))
    path = root / "packs" / (("f" * 64) + ".pack")          # sorts after the good pack
    path.write_bytes(data)
    return path


def test_a_read_serves_the_first_copy_that_verifies(tmp_path: Path) -> None:
    """Issue 38, item 3: a second pack naming the same digests with wrong bytes never hides the good copies,
    in whichever order the packs are listed; `copies` names each copy and which is bad."""
    blobs = _blobs(4)
    digests = ObjectStore(str(tmp_path)).put_many(blobs)
    shadow = _shadow(tmp_path, digests, [b"{}"] * 4)
    for reader in (ObjectStore(str(tmp_path)), ObjectStore(str(tmp_path))):
        for d, b in zip(digests, blobs, strict=True):
            assert reader.get_bytes(d, verify=True) == b and reader.verify(d)
    copies = ObjectStore(str(tmp_path)).copies(digests[0])
    assert len(copies) == 2
    assert sorted(digest_bytes(c.data) == digests[0] for c in copies if c.data is not None) == [False, True]
    assert any(c.where.startswith(f"packs/{shadow.name} at ") for c in copies)
    # a damaged loose copy does not hide a good packed one either
    loose = tmp_path / "objects" / digests[1][3:5] / digests[1][5:]
    loose.parent.mkdir(parents=True, exist_ok=True)
    loose.write_bytes(b"garbage")
    assert ObjectStore(str(tmp_path)).get_bytes(digests[1]) == blobs[1]
    # and when no copy verifies, the read names the bad one
    (good,) = [p for p in _packs(tmp_path) if p != shadow]
    good.unlink()
    with pytest.raises(DamagedObject, match=r"hash to"):
        ObjectStore(str(tmp_path)).get_bytes(digests[2])


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_reader_told_its_packs_indexes_only_those_and_lists_the_directory_for_anything_else(
        tmp_path: Path) -> None:
    """Issue 42 (item 3): `index_only` indexes the packs named (whole: every entry of each), not the directory's
    others, without listing it; a digest in none of them still lists the directory and is found. A FIFO or
    a path outside the store's packs/ named there is never opened."""
    writer = ObjectStore(str(tmp_path))
    first, second = writer.put_many(_blobs(3, "a")), writer.put_many(_blobs(3, "b"))
    (pack_a,) = [p for p in _packs(tmp_path) if {d for d, _, _ in read_index(str(p))} == set(first)]
    os.mkfifo(tmp_path / "packs" / ("f" * 64 + ".pack"))
    reader = ObjectStore(str(tmp_path))
    assert reader.packs is not None
    within(5, lambda: reader.packs.index_only([str(pack_a), str(tmp_path / "packs" / ("f" * 64 + ".pack")),
                                               str(tmp_path / "elsewhere.pack")]))
    assert reader.packs.pack_paths() == [str(pack_a)] and reader.packs.listings == 0
    assert [reader.get_bytes(d) for d in first] == _blobs(3, "a") and reader.packs.listings == 0
    assert not reader.packs.places(second[0], look=False)
    assert reader.get_bytes(second[0]) == _blobs(3, "b")[0] and reader.packs.listings == 1
    assert len(reader.packs.pack_paths()) == 2


def test_a_fifo_or_symlink_in_the_store_is_never_opened(tmp_path: Path) -> None:
    """Issue 38, item 4: a FIFO named `*.pack` blocked every pack listing (and so every read); a FIFO or a
    symbolic link where an object or a pack belongs is skipped, named, and never blocks a read."""
    blobs = _blobs(3)
    digests = ObjectStore(str(tmp_path)).put_many(blobs)
    os.mkfifo(tmp_path / "packs" / ("a" * 64 + ".pack"))
    os.symlink(str(_packs(tmp_path)[-1]), tmp_path / "packs" / ("b" * 64 + ".pack"))
    single = ObjectStore(str(tmp_path)).put_bytes(b"a loose object")
    loose = tmp_path / "objects" / single[3:5] / single[5:]
    loose.unlink()
    os.mkfifo(loose)
    reader = ObjectStore(str(tmp_path))
    assert within(5, lambda: [reader.get_bytes(d) for d in digests]) == blobs
    assert within(5, lambda: sorted(reader.iter_digests())) == sorted([*digests, single])
    with pytest.raises(DamagedObject, match="not a regular file"):
        within(5, lambda: reader.get_bytes(single))
    assert not within(5, lambda: reader.verify(single))
    assert sorted(reader.packs.unreadable.values()) == ["not a regular file (a FIFO)",
                                                        "not a regular file (a symbolic link)"]
    reader.put_bytes(b"a loose object")                      # a put replaces the FIFO with the object
    assert within(5, lambda: reader.get_bytes(single)) == b"a loose object"


# -- issue 38, item 5: pack upkeep ------------------------------------------------------------------------
def test_small_packs_merge_into_a_bounded_count_and_every_reader_still_finds_each_object(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One pack per group commit (100–200 a run) is merged: afterwards every pack but one holds FULL_OBJECTS
    objects, so the count is at most one per FULL_OBJECTS objects; a reader that indexed the old packs (another
    process) and a reader reading all through the merge find every object."""
    from srbench.cas import upkeep

    monkeypatch.setattr(upkeep, "FULL_OBJECTS", 10)
    writer = ObjectStore(str(tmp_path))
    blobs = [b for i in range(30) for b in _blobs(3, f"group-{i}")]
    digests = [d for i in range(30) for d in writer.put_many(blobs[3 * i:3 * i + 3])]
    assert len(_packs(tmp_path)) == 30
    for i, pack in enumerate(_packs(tmp_path)):             # an object's age is its pack's: merging keeps it
        os.utime(pack, (1_000_000 + i, 1_000_000 + i))
    before = ObjectStore(str(tmp_path))
    assert sorted(before.iter_digests()) == sorted(digests)       # indexed every old pack
    misses: list[str] = []
    stop = threading.Event()

    def read_all() -> None:
        reader = ObjectStore(str(tmp_path))
        while not stop.is_set():
            for d in digests:
                try:
                    reader.get_bytes(d)
                except NotFound:
                    misses.append(d)
    worker = threading.Thread(target=read_all, daemon=True)
    worker.start()
    try:
        assert writer.merge_packs(dry_run=True) == upkeep.Merged(30, 8, 0)
        assert writer.merge_packs(older_than_s=2e9) == upkeep.Merged()      # younger than that: they wait
        assert len(_packs(tmp_path)) == 30
        done = ObjectStore(str(tmp_path)).merge_packs()
    finally:
        stop.set()
        worker.join(10)
    assert misses == []
    assert done.merged == 30 and done.written == 8 and done.objects == 90
    packs = _packs(tmp_path)
    assert len(packs) == 8 <= -(-len(digests) // upkeep.FULL_OBJECTS)       # 7 of 12 objects, 1 of 6: ≤ ceil(90 / 10)
    assert _loose(tmp_path) == []
    for pack in packs:
        assert pack.name == digest_bytes(pack.read_bytes())[3:] + ".pack"
        assert 1_000_000 <= pack.stat().st_mtime < 1_000_030                # never younger than what it merged
    assert [before.get_bytes(d, verify=True) for d in digests] == blobs   # the stale index re-lists
    assert sorted(ObjectStore(str(tmp_path)).iter_digests()) == sorted(digests)
    assert ObjectStore(str(tmp_path)).merge_packs().merged == 0             # all but one are full


def test_a_merge_that_cannot_write_its_pack_removes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The new pack is durable before any old pack goes: a full disk at that write leaves the old packs."""
    from srbench.cas import store as store_module

    store = ObjectStore(str(tmp_path))
    digests = [d for i in range(4) for d in store.put_many(_blobs(2, f"g{i}"))]
    old = _packs(tmp_path)

    def full(path: str, data: bytes, *, durable: bool) -> None:
        raise OSError(28, "No space left on device", path)
    monkeypatch.setattr(store_module, "_atomic_local_write", full)
    with pytest.raises(OSError):
        store.merge_packs()
    assert _packs(tmp_path) == old
    assert all(ObjectStore(str(tmp_path)).verify(d) for d in digests)


def test_a_damaged_pack_is_never_merged(tmp_path: Path) -> None:
    store = ObjectStore(str(tmp_path))
    blobs = _blobs(2, "a")
    store.put_many(blobs)
    store.put_many(_blobs(2, "b"))
    store.put_many(_blobs(2, "c"))
    damaged = next(p for p in _packs(tmp_path) if blobs[0] in p.read_bytes())
    _flip(damaged, damaged.read_bytes(), blobs[0])
    done = ObjectStore(str(tmp_path)).merge_packs()
    assert done.merged == 2 and damaged in _packs(tmp_path) and len(_packs(tmp_path)) == 2


_READER = """
import os, sys
from srbench.cas import ObjectStore
from srbench.errors import NotFound
root, stop, ready, names = sys.argv[1:5]
digests = open(names).read().split()
reader = ObjectStore(root)                     # indexed the old packs before the merge
misses = passes = 0
open(ready, "w").close()
while not os.path.exists(stop) or passes < 2:
    for d in digests:
        try:
            reader.get_bytes(d, verify=True)
        except NotFound:
            misses += 1
    passes += 1
print(misses, passes)
"""


def test_a_reader_in_another_process_finds_every_object_through_merges(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Readers in other processes (the service, a CLI, a second service on a shared store) are as safe through
    a merge as through an unpack: the new pack is durable before an old one goes, and a read that finds its
    pack gone re-lists the directory. A reader in its own interpreter reads every object while packs merge."""
    import subprocess
    import sys

    from srbench.cas import upkeep

    monkeypatch.setattr(upkeep, "FULL_OBJECTS", 6)
    store = ObjectStore(str(tmp_path / "s"))
    digests = [d for i in range(60) for d in store.put_many(_blobs(2, f"group-{i}"))]
    stop, ready = tmp_path / "stop", tmp_path / "ready"
    (tmp_path / "names").write_text("\n".join(digests))
    proc = subprocess.Popen([sys.executable, "-c", _READER, str(tmp_path / "s"), str(stop), str(ready),
                             str(tmp_path / "names")], stdout=subprocess.PIPE, text=True)
    try:
        within(60, ready.exists)
        merged = 0
        for _ in range(3):                      # merges of merges: 60 packs → 20 → 10 (and so on)
            merged += ObjectStore(str(tmp_path / "s")).merge_packs().merged
            monkeypatch.setattr(upkeep, "FULL_OBJECTS", upkeep.FULL_OBJECTS * 2)
        stop.touch()
        out, _ = proc.communicate(timeout=120)
    finally:
        proc.kill()
    misses, passes = map(int, out.split())
    assert merged >= 60 and passes >= 2
    assert misses == 0, (misses, passes, merged)
    assert sorted(ObjectStore(str(tmp_path / "s")).iter_digests()) == sorted(digests)


def test_the_pack_index_answers_every_copy_in_order_across_merges_forgets_and_shared_prefixes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from srbench.cas import pack_table
    from srbench.cas.pack_table import ENTRY, PackTable, Place
    monkeypatch.setattr(pack_table, "MERGE_AT", 40)
    rng = random.Random(7)
    table, listed, added = PackTable(), {}, []
    for n in range(150):
        digests = [rng.randbytes(32) for _ in range(rng.randint(1, 25))]
        if n % 7 == 0 and added:
            digests += rng.sample(added, 3)                          # copies of older objects
        if n % 11 == 0:
            digests.append(digests[0][:8] + rng.randbytes(24))       # the same first 8 bytes, another digest
        whole = [i for i in range(len(digests)) if i % 9 != 8]       # entries past the end are not answered
        path = f"/store/packs/{n}.pack"
        table.add(path, b"".join(ENTRY.pack(d, 100 + i, i + 1) for i, d in enumerate(digests)), whole)
        listed[path] = [(digests[i], i) for i in whole]
        added += digests
        if n % 13 == 5:
            gone = rng.choice(sorted(listed))
            table.forget(gone)
            del listed[gone]
    want: dict[bytes, list[Place]] = {}
    for path in sorted(listed, key=lambda p: int(p.rsplit("/", 1)[1].split(".")[0])):
        for d, i in listed[path]:
            want.setdefault(d, []).append(Place(path, 100 + i, i + 1))
    assert all(table.find(d) == places for d, places in want.items())
    assert sorted(table) == sorted(want) and table.find(rng.randbytes(32)) == []


def test_the_pack_index_holds_an_entry_in_under_100_bytes(tmp_path: Path) -> None:
    """A 100k-cell run packs ~200k objects; the index is kept by the service and by its report-rows worker
    (issue 42, item 3: it was a dict of digest strings to lists of tuples, ~370 bytes an entry)."""
    import tracemalloc

    from srbench.cas.packs import PackIndex, encode
    for n in range(40):
        name, data, _ = encode({digest_bytes(b): b for b in _blobs(500, str(n))})
        (tmp_path / f"{name}.pack").write_bytes(data)
    index = PackIndex(str(tmp_path))
    tracemalloc.start()
    try:
        index.refresh()
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(list(index)) == 20_000
    assert held / 20_000 < 100, f"{held / 20_000:.0f} bytes an entry"


def test_prefetch_asks_for_a_packed_object_in_its_pack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 42, item 5: a page's prefetch asks the kernel for each packed object's own bytes in its pack (the pack
    opened once for all of them), for a loose object's whole file, and for nothing it does not hold — it used to
    look for every object's loose file only, so the objects of a packed store (every store written in groups)
    were never asked for."""
    store = ObjectStore(str(tmp_path))
    blobs = _blobs(4)
    packed = store.put_many(blobs)
    loose = store.put_bytes(b'{"kind":"test","alone":true}')
    asked: list[tuple[int, int, str]] = []
    monkeypatch.setattr(os, "posix_fadvise", lambda fd, offset, length, advice: asked.append(
        (offset, length, os.readlink(f"/proc/self/fd/{fd}"))))
    opened: list[str] = []
    real_open = os.open
    monkeypatch.setattr(os, "open", lambda path, *a, **k: opened.append(str(path)) or real_open(path, *a, **k))
    store.prefetch([*packed, loose, "b3:" + "0" * 64])
    (pack,) = _packs(tmp_path)
    data = pack.read_bytes()
    assert sorted(asked) == sorted([(data.index(b), len(b), str(pack)) for b in blobs] + [(0, 0, store.path_of(loose))])
    assert opened.count(str(pack)) == 1


def test_get_packed_reads_a_page_of_packed_objects_with_one_open_a_pack(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 42, item 5: a page's packed objects are read with one open of their pack, each verified; a loose
    object, one the store does not hold and a damaged packed copy are left out for `get_bytes`, whose rules
    (the loose copy first, every copy tried, a damaged one named) still decide them."""
    store = ObjectStore(str(tmp_path))
    blobs = _blobs(6)
    packed = store.put_many(blobs)
    loose = store.put_bytes(b'{"kind":"test","alone":true}')
    (pack,) = _packs(tmp_path)
    _flip(pack, pack.read_bytes(), blobs[2])
    opened: list[str] = []
    real_open = os.open
    monkeypatch.setattr(os, "open", lambda path, *a, **k: opened.append(str(path)) or real_open(path, *a, **k))
    got = store.get_packed([*packed, packed[0], loose, "b3:" + "0" * 64])
    assert got == {d: b for d, b in zip(packed, blobs, strict=True) if d != packed[2]}
    assert opened == [str(pack)]
    with pytest.raises(DamagedObject):
        store.get_bytes(packed[2])
    assert store.get_bytes(loose) == b'{"kind":"test","alone":true}'


def test_get_packed_reads_a_packs_wanted_entries_in_one_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 42 (item 2): the report-rows worker reads a batch's call records ahead; the entries wanted from one
    pack are read with one pread of their span (each still verified), not one each; a span over `SPAN_READ` is
    read entry by entry."""
    from srbench.cas import store as store_mod

    store = ObjectStore(str(tmp_path))
    blobs = _blobs(8)
    packed = store.put_many(blobs)
    reads: list[int] = []
    real = os.pread
    monkeypatch.setattr(os, "pread", lambda fd, n, off: reads.append(n) or real(fd, n, off))
    want = [packed[1], packed[4], packed[6]]
    assert store.get_packed(want) == {d: blobs[packed.index(d)] for d in want} and len(reads) == 1
    reads.clear()
    monkeypatch.setattr(store_mod, "SPAN_READ", 1)
    assert store.get_packed(want) == {d: blobs[packed.index(d)] for d in want} and len(reads) == 3
