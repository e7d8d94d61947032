"""The object store: immutable, content-addressed objects on any fsspec filesystem.

Layout under the root: ``objects/<2 hex>/<62 hex>`` (loose objects), ``packs/<64 hex>.pack`` (objects
written together, local stores only: `cas/packs.py`), and ``names/<kind>/<...>``: small files, each
bound once to an object digest (create-if-absent), for what a team must find by name (a pushed run,
a registered dataset). A put is idempotent (an object whose stored
bytes match is not written again; one cut short or garbled by a crash is). On the local filesystem a
write is atomic: on Linux an unnamed file (O_TMPFILE) given its name once whole, elsewhere a temporary
file in the same directory, then a rename (`cas/localfs.py`); it is durable either by its
own fsync (and the directory's) or, with ``durable=False``, by a later ``sync`` barrier. On other backends (NFS through fsspec,
object storage, ``memory://`` in tests) the backend's own whole-object write is used. A read tries
every copy it knows — the loose file, then each pack listing the digest — and serves the first that
verifies (issue 38, item 3: a damaged copy never hides a good one); `copies` lists them all for
maintenance. Only regular files are opened, without blocking (a FIFO, socket, device or symbolic link
is a bad copy, never read). `path_of` always names a loose file (a packed object's pack is unpacked
when its path is asked for).

Every read is verified against its digest (a local disk loses bytes too; BLAKE3 hashes at GB/s, see
``benchmarks/read_verify.py``): bytes that do not hash to their name raise `DamagedObject`, never
come back as good. Only maintenance, which re-hashes on its own, reads with ``verify=False``.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

import orjson

from srbench.cas import files, localfs, upkeep
from srbench.cas.digest import PREFIX, canonical_json, digest_bytes, is_digest
from srbench.cas.names import NamedObjects
from srbench.cas.packs import SUFFIX, PackIndex, Place, encode
from srbench.errors import DamagedObject, IntegrityError, InvalidInput, NotFound

SPAN_READ = 1 << 20      # `get_packed` reads a pack's wanted entries in one read when they lie within this span


class Copy(NamedTuple):
    """One stored copy of an object: where (relative to the store), its bytes as stored (None: it could not
    be read, `problem` says why) and, for a packed copy, its pack entry."""

    where: str
    data: bytes | None
    problem: str | None = None
    place: Place | None = None


class ObjectStore(NamedObjects):
    """Put, get and check objects by digest. Safe for many concurrent writers (objects are immutable)."""

    def __init__(self, url: str, *, verify_reads: bool | None = None, create: bool = True) -> None:
        """`create=False` opens an existing store only (NotFound when its objects/ is absent)."""
        self.url = url.rstrip("/")
        self._fs: Any = None
        root = _local_root(self.url)
        if root is None:
            self._fs, self.root = _url_to_fs(self.url)
            protocols = self._fs.protocol
            self.local = "file" in (protocols if isinstance(protocols, tuple) else (protocols,))
        else:
            self.root, self.local = root, True
        self.verify_reads = True if verify_reads is None else verify_reads
        self.packs = PackIndex(self._join("packs")) if self.local else None
        if not self.local:
            if create:
                self.fs.makedirs(self._join("objects"), exist_ok=True)
            elif not self.fs.exists(self._join("objects")) and not self.fs.exists(self._join("names")):
                raise NotFound(f"no object store at {self.url}")
            return
        self._check_layout()
        if create:
            os.makedirs(self._join("objects"), exist_ok=True)
        elif not os.path.exists(self._join("objects")) and not os.path.exists(self._join("names")):
            raise NotFound(f"no object store at {self.url}")

    def _check_layout(self) -> None:
        """A local store's folders are folders: a file where `packs/` belongs made every read 'internal error:
        NotADirectoryError' (and one where `objects/` belongs 'File exists'); it is named once, at opening."""
        if os.path.lexists(self.root) and not os.path.isdir(self.root):     # a URL that names no folder: the
            raise NotADirectoryError(errno.ENOTDIR, "not a folder", self.root)   # caller says what it was given
        for name in ("objects", "packs", "names", files.DIR):
            path = self._join(name)
            if os.path.lexists(path) and not os.path.isdir(path):
                raise IntegrityError(f"{path} is not a folder: the object store is damaged; restore it from a copy "
                                     "of the store, or give another --store (nothing was changed)")

    @property
    def fs(self) -> Any:
        """The fsspec filesystem of the store; a local store's is made on first use (listings, maintenance):
        its reads and writes go through `cas/localfs.py`, so a process that only reads and writes objects
        (the report-rows worker) never imports fsspec (~13 MiB, issue 42 item 3)."""
        if self._fs is None:
            self._fs = _url_to_fs(self.root)[0]
        return self._fs

    # -- paths ---------------------------------------------------------------------------------
    def _join(self, *parts: str) -> str:
        return "/".join([self.root.rstrip("/"), *parts])

    def _loose(self, digest: str) -> str:
        if not is_digest(digest):
            raise InvalidInput(f"not an object digest: {digest!r}")
        return self._join("objects", digest[3:5], digest[5:])

    def path_of(self, digest: str) -> str:
        """The backend path of an object (for a local store: a real file path). A packed object's pack
        is unpacked first (its objects written loose, then the pack removed), so that this file is
        the object's only copy, as for any loose object; a loose name that is not a regular file is
        replaced by a verified copy (DamagedObject when there is none)."""
        path = self._loose(digest)
        if self.packs is None:
            return path
        try:
            os.close(localfs.open_regular(path))
            return path
        except FileNotFoundError:
            places = self.packs.places(digest)
            if not places:
                return path
        except OSError:
            places = self.packs.places(digest)
        _atomic_local_write(path, self.get_bytes(digest, verify=True), durable=True)
        for place in places:
            self._unpack(place.pack, set())
        return path

    # -- writes --------------------------------------------------------------------------------
    def put_bytes(self, data: bytes, *, durable: bool = True) -> str:
        digest = digest_bytes(data)
        path = self._loose(digest)
        if self.local:
            if not self._stored_same(digest, path, data):
                # absent, or cut short or garbled by a power loss before a barrier: (re)write it whole
                _atomic_local_write(path, data, durable=durable)
        elif self.fs.exists(path):
            return digest
        else:
            self.fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
            self.fs.pipe_file(path, data)
        return digest

    def put_many(self, blobs: list[bytes], *, durable: bool = True) -> list[str]:
        """Put several objects; their digests in order. On a local store two or more new ones are
        written as one pack (`cas/packs.py`): one file and one name instead of one each."""
        digests = [digest_bytes(b) for b in blobs]
        if self.packs is None:
            for data in blobs:
                self.put_bytes(data, durable=durable)
            return digests
        new: dict[str, bytes] = {}
        objects = self._join("objects")
        for digest, data in zip(digests, blobs, strict=True):      # (digests of our own: no re-validation)
            if digest not in new and not self._stored_same(digest, f"{objects}/{digest[3:5]}/{digest[5:]}", data):
                new[digest] = data
        if len(new) == 1:
            ((digest, data),) = new.items()
            _atomic_local_write(self._loose(digest), data, durable=durable)
        elif new:
            name, packed, places = encode(new)
            path = self._join("packs", name + SUFFIX)
            _atomic_local_write(path, packed, durable=durable)      # (makes packs/ when it is absent)
            self.packs.add(path, places)
        return digests

    def _stored_same(self, digest: str, path: str, data: bytes) -> bool:
        """True when the store holds these exact bytes under `digest`, loose or in a pack this store has
        indexed (a write does not list packs/ again: at worst another process's packed copy gets a loose
        twin); its age is refreshed so gc's grace period covers a writer re-putting it."""
        if localfs.same_bytes(path, data):
            where = path
        else:
            places = [] if self.packs is None else self.packs.places(digest, look=False)
            place = next((p for p in places if self._read_packed(p) == data), None)
            if place is None:
                return False
            where = place.pack
        try:
            os.utime(where)
        except OSError:
            pass
        return True

    def put_json(self, value: Any, *, durable: bool = True) -> str:
        return self.put_bytes(canonical_json(value), durable=durable)

    def sync(self) -> None:
        """Durability barrier for objects written with durable=False: after it returns they are on
        disk. One `syncfs` of the store's filesystem (Linux) instead of one fsync per object and
        per directory; elsewhere a global `sync`. Non-local backends make each write durable."""
        if not self.local:
            return
        if localfs.SYNCFS is not None:
            fd = os.open(self.root, os.O_RDONLY)
            try:
                if localfs.SYNCFS(fd) == 0:
                    return
            finally:
                os.close(fd)
        os.sync()

    # -- reads ---------------------------------------------------------------------------------
    def has(self, digest: str) -> bool:
        path = self._loose(digest)
        if self.local:
            # (the second look: its pack may have been unpacked, loose copy first, since the first)
            return os.path.lexists(path) or (self.packs is not None and bool(self.packs.places(digest))) \
                or os.path.lexists(path)
        self.fs.invalidate_cache(path)           # another host may have written it since a listing
        return bool(self.fs.exists(path))

    def get_bytes(self, digest: str, *, verify: bool | None = None) -> bytes:
        """The object's bytes: the first copy that verifies (with `verify` False: the first that reads).
        NotFound when no copy is stored; DamagedObject when none verifies, naming the first bad one."""
        check = self.verify_reads if verify is None else verify
        bad: Copy | None = None
        for copy in self._iter_copies(digest):
            if copy.data is not None and (not check or digest_bytes(copy.data) == digest):
                return copy.data
            bad = bad or copy
        if bad is None:
            raise NotFound(f"object {digest} is not in the store; if a run names it, `sr-bench store verify` lists "
                           "what is missing (with `--repair` to fetch a good copy from SR_BENCH_REPAIR_FROM)")
        if bad.data is None:
            raise DamagedObject(digest, f" ({bad.where}: {bad.problem})")
        raise DamagedObject(digest, f" ({len(bad.data)} bytes that hash to {digest_bytes(bad.data)})")

    def count_copies(self, digest: str) -> int:
        """How many copies of `digest` the store lists (nothing is read)."""
        path = self._loose(digest)
        if not self.local:
            return int(bool(self.fs.exists(path)))
        return int(os.path.lexists(path)) + (0 if self.packs is None else len(self.packs.places(digest, look=False)))

    def copies(self, digest: str) -> list[Copy]:
        """Every stored copy of `digest` (maintenance re-hashes each: `store verify`, `store gc`)."""
        return list(self._iter_copies(digest))

    def _iter_copies(self, digest: str) -> Iterator[Copy]:
        """The loose copy, then each packed one; a pack removed meanwhile (gc, repack: the objects it held are
        loose or in a newer pack first) makes the listing be read again and the loose file looked at again."""
        path = self._loose(digest)
        rel = f"objects/{digest[3:5]}/{digest[5:]}"
        loose = self._loose_copy(path, rel)
        if loose is not None:
            yield loose
        if self.packs is None:
            return
        tried: set[Place] = set()
        for _ in range(2):
            vanished = False
            for place in self.packs.places(digest):
                if place in tried:
                    continue
                tried.add(place)
                data = self._read_packed(place)
                if data is None:
                    self.packs.forget(place.pack)
                    vanished = True
                    continue
                yield Copy(f"packs/{os.path.basename(place.pack)} at {place.offset}", data, None, place)
            if not vanished:
                break
        if loose is None:
            again = self._loose_copy(path, rel)
            if again is not None:
                yield again

    def _loose_copy(self, path: str, rel: str) -> Copy | None:
        try:
            return Copy(rel, self._read_loose(path))
        except FileNotFoundError:
            return None
        except OSError as exc:              # not a regular file (never opened), or unreadable
            return Copy(rel, None, exc.strerror or str(exc))

    def _read_loose(self, path: str) -> bytes:
        if self.local:
            return localfs.read_regular(path)
        return bytes(self.fs.cat_file(path))

    def _read_packed(self, place: Place) -> bytes | None:
        """A packed entry's bytes as stored (unverified), or None when its pack is gone."""
        try:
            fd = localfs.open_regular(place.pack)
        except FileNotFoundError:
            return None
        except OSError:                     # replaced by something that is not a pack file
            return None
        try:
            return localfs.read_at(fd, place.length, place.offset)
        finally:
            os.close(fd)

    def get_packed(self, digests: list[str]) -> dict[str, bytes]:
        """The verified bytes of those of `digests` the store holds in a pack and not loose, read with one open a
        pack (a page's objects: a read of each costs one pread, not five system calls). Any other — loose,
        absent, damaged, in a pack gone meanwhile — is left out, for `get_bytes` to read by its full rules."""
        out: dict[str, bytes] = {}
        spans: dict[str, list[tuple[str, Place]]] = {}
        for digest in dict.fromkeys(digests):
            places = [] if self.packs is None else self.packs.places(digest, look=False)
            if places and not os.path.lexists(self._loose(digest)):
                spans.setdefault(places[0].pack, []).append((digest, places[0]))
        for pack, entries in spans.items():
            try:
                fd = localfs.open_regular(pack)
            except OSError:
                continue
            try:
                entries.sort(key=lambda e: e[1].offset)
                start = entries[0][1].offset
                span = max(p.offset + p.length for _, p in entries) - start
                whole = localfs.read_at(fd, span, start) if span <= SPAN_READ else None   # one read a pack
                for digest, place in entries:
                    data = (localfs.read_at(fd, place.length, place.offset) if whole is None
                            else whole[place.offset - start:place.offset - start + place.length])
                    if len(data) == place.length and digest_bytes(data) == digest:
                        out[digest] = data
            except OSError:
                pass
            finally:
                os.close(fd)
        return out

    def prefetch(self, digests: list[str]) -> None:
        """Ask the kernel to start reading these objects now (local stores; a hint, never an error):
        a page that reads a hundred objects not in the page cache waits for the disk once, not a
        hundred times in a row. A packed object's entry is asked for in its pack (each pack opened once),
        a loose one's file whole."""
        if not self.local or not hasattr(os, "posix_fadvise"):
            return
        spans: dict[str, list[Place]] = {}
        for digest in digests:
            places = [] if self.packs is None else self.packs.places(digest, look=False)
            if places:
                spans.setdefault(places[0].pack, []).append(places[0])
                continue
            try:
                fd = localfs.open_regular(self._loose(digest))
            except (OSError, InvalidInput):
                continue
            _will_need(fd, [(0, 0)])
        for pack, entries in spans.items():
            try:
                fd = localfs.open_regular(pack)
            except OSError:
                continue
            _will_need(fd, [(p.offset, p.length) for p in entries])

    def get_json(self, digest: str, *, verify: bool | None = None) -> Any:
        return loads(self.get_bytes(digest, verify=verify))

    def iter_digests(self) -> Iterator[str]:
        """Every stored object's digest, once (loose ones first, then the packed ones)."""
        base = self._join("objects")
        loose = set()
        for path in self.fs.find(base):
            rel = path[len(base) :].strip("/").split("/")
            if len(rel) == 2 and len(rel[0]) == 2 and len(rel[1]) == 62:
                loose.add(PREFIX + rel[0] + rel[1])
                yield PREFIX + rel[0] + rel[1]
        if self.packs is not None:
            self.packs.refresh(reread=True)       # (maintenance lists: an index damaged on disk is seen)
            yield from (d for d in self.packs if d not in loose)

    def relist(self) -> None:
        """Read every pack's index again (maintenance, before it reads: an index damaged on disk is seen)."""
        if self.packs is not None:
            self.packs.refresh(reread=True)

    def info(self, digest: str) -> Mapping[str, object] | None:
        """What the backend says of the file holding an object (fsspec `info`: ``size``, a time), or
        None when it is not stored; a packed object's size is its own, its time its pack's."""
        try:
            return dict(self.fs.info(self._loose(digest)))
        except (FileNotFoundError, NotADirectoryError):     # (a file where its objects/xx/ folder belongs)
            pass
        for place in [] if self.packs is None else self.packs.places(digest):
            try:
                return {"size": place.length, "mtime": os.stat(place.pack).st_mtime}
            except FileNotFoundError:
                continue
        return None

    def pack_problems(self) -> list[tuple[str, str]]:
        """(``packs/<name>``, why) for each ``*.pack`` that is not a whole readable pack, as last listed."""
        if self.packs is None:
            return []
        found = [(path, why) for path, why in self.packs.unreadable.items()]
        found += [(path, f"cut short: {n} entr{'y' if n == 1 else 'ies'} past its end") for path, n in self.packs.cut.items()]
        return sorted((f"packs/{os.path.basename(path)}", why) for path, why in found)

    def verify(self, digest: str) -> bool:
        """True when the stored bytes hash to `digest`."""
        try:
            self.get_bytes(digest, verify=True)
        except (IntegrityError, NotFound):
            return False
        return True

    def delete(self, digest: str) -> None:
        """Remove one object (only garbage collection calls this)."""
        self.delete_many([digest])

    def delete_many(self, digests: list[str]) -> None:
        """Remove objects (only garbage collection calls this), with their suffixed files (`cas/files.py`). A
        pack holding any of them is unpacked: the objects it keeps are written loose and durable first, then
        the pack is removed."""
        doomed_in: dict[str, set[str]] = {}
        for digest in digests:
            path = self._loose(digest)
            if self.local:
                files.drop(self, digest)
            if os.path.lexists(path) if self.local else self.fs.exists(path):
                self.fs.rm_file(path)
            for place in [] if self.packs is None else self.packs.places(digest):
                doomed_in.setdefault(place.pack, set()).add(digest)
        for pack, doomed in doomed_in.items():
            self._unpack(pack, doomed)

    def drop_copies(self, copies: list[Copy]) -> None:
        """Remove bad copies (garbage collection, once it has found a good copy of each elsewhere): a loose
        one is unlinked, a packed one leaves its pack by an unpack that keeps every other entry."""
        drop_in: dict[str, set[int]] = {}
        for copy in copies:
            if copy.place is None:
                try:
                    os.unlink(self._join(copy.where))
                except FileNotFoundError:
                    pass
            else:
                drop_in.setdefault(copy.place.pack, set()).add(copy.place.offset)
        for pack, offsets in drop_in.items():
            self._unpack(pack, set(), offsets)

    def _unpack(self, pack: str, doomed: set[str], drop: set[int] | frozenset[int] = frozenset()) -> bool:
        """`cas/upkeep.py` `unpack`: the objects `pack` keeps are written loose (durable), then it is removed;
        a pack holding an entry that does not verify — damaged, misnamed (issue 38, item 2) or cut short —
        is left whole unless that entry is dropped. True when the pack is gone."""
        assert self.packs is not None
        return upkeep.unpack(self.packs, self._loose, self._write_durable, pack, doomed, drop)

    def merge_packs(self, *, dry_run: bool = False, older_than_s: float = 0.0) -> upkeep.Merged:
        """Merge the packs that are not full (and at least `older_than_s` old: `cas/upkeep.py`); nothing on a
        store without packs."""
        if self.packs is None:
            return upkeep.Merged()
        return upkeep.merge_small(self.packs, self._write_durable, dry_run=dry_run, older_than_s=older_than_s)

    def pack_count(self) -> int:
        """How many packs the store holds (as listed now)."""
        if self.packs is None:
            return 0
        self.packs.refresh(force=True)
        return len(self.packs.pack_paths())

    def unreadable_packs(self) -> list[tuple[str, str, float]]:
        """(path, why, age s) of each regular ``*.pack`` file that is not a readable pack."""
        return [] if self.packs is None else upkeep.unreadable_packs(self.packs)

    def remove_packs(self, paths: list[str]) -> None:
        """Remove unreadable pack files (garbage collection only)."""
        if self.packs is not None:
            upkeep.remove_unreadable(self.packs, paths)

    @staticmethod
    def _write_durable(path: str, data: bytes) -> None:
        _atomic_local_write(path, data, durable=True)


def _local_root(url: str) -> str | None:
    """The absolute root of a store on the local filesystem named by a plain POSIX path or a ``file://`` URL, as
    fsspec names it (`make_path_posix`: ``~`` expanded, a relative path made absolute); None for any other URL
    (a protocol, a chained URL, a Windows path: fsspec reads those)."""
    path = url.removeprefix("file://")
    if os.sep != "/" or "://" in path or "::" in path or not path:
        return None
    if path.startswith("~"):
        path = os.path.expanduser(path)
    elif not path.startswith("/"):
        path = os.getcwd() + "/" + ("" if path == "." else path.removeprefix("./"))
    return path.rstrip("/") or "/"


def _url_to_fs(url: str) -> tuple[Any, str]:
    # deferred: fsspec (~13 MiB: asyncio, email); a local store reads and writes without it
    from srbench.cas.remote import open_filesystem

    return open_filesystem(url)


def _will_need(fd: int, spans: list[tuple[int, int]]) -> None:
    """posix_fadvise(WILLNEED) over each (offset, length) of the open file `fd` (length 0: to its end), then close it."""
    try:
        for offset, length in spans:
            os.posix_fadvise(fd, offset, length, os.POSIX_FADV_WILLNEED)
    except OSError:
        pass
    finally:
        os.close(fd)


def _atomic_local_write(path: str, data: bytes, *, durable: bool) -> None:
    """Write `path` whole or not at all: an unnamed file named once written (`localfs.link_whole`), else a
    temporary file (created read-only: the open descriptor still writes) renamed over the name;
    fsynced (and the directory) when `durable`, else left to the `sync` barrier."""
    directory = os.path.dirname(path)
    if not localfs.link_whole(directory, path, data, durable):
        localfs.rename_whole(directory, path, data, durable)
    if durable:
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


_DIGITS = bytes(0x30 if 0x30 <= i <= 0x39 else 0x2E for i in range(256))   # each ASCII digit -> "0", the rest "."
_LONG_RUN = b"0" * 20


def loads(data: bytes) -> Any:
    """`json.loads(data)`, by orjson (~4x less CPU: a report row reads four objects, issue 42). What orjson
    reads otherwise goes to json: 20 digits in a row (orjson makes an integer beyond 64 bits a float), and
    what it refuses (a lone surrogate, NaN, UTF-16). The digits are looked for by one translation and a substring
    search: a regular expression's scan cost 7x orjson's parse of a call record."""
    if _LONG_RUN not in data.translate(_DIGITS):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    return json.loads(data)
