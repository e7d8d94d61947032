"""The object store: immutable, content-addressed objects on any fsspec filesystem.

Layout under the root: ``objects/<2 hex>/<62 hex>``, and ``names/<kind>/<...>``: small files, each
bound once to an object digest (create-if-absent), for what a team must find by name (a pushed run,
a registered dataset). A put is idempotent (an object whose stored
bytes match is not written again; one cut short or garbled by a crash is). On the local filesystem a
write is atomic: on Linux an unnamed file (O_TMPFILE) given its name once whole, elsewhere a temporary
file in the same directory, then a rename; it is durable either by its
own fsync (and the directory's) or, with ``durable=False``, by a later ``sync`` barrier. On other backends (NFS through fsspec,
object storage, ``memory://`` in tests) the backend's own whole-object write is used.

Every read is verified against its digest (a local disk loses bytes too; BLAKE3 hashes at GB/s, see
``benchmarks/read_verify.py``): bytes that do not hash to their name raise `DamagedObject`, never
come back as good. Only maintenance, which re-hashes on its own, reads with ``verify=False``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import itertools
import json
import os
import re
import threading
from collections.abc import Iterator
from typing import Any

import fsspec

from srbench.cas.digest import PREFIX, canonical_json, digest_bytes, is_digest
from srbench.errors import DamagedObject, IntegrityError, InvalidInput, NotFound


class ObjectStore:
    """Put, get and check objects by digest. Safe for many concurrent writers (objects are immutable)."""

    def __init__(self, url: str, *, verify_reads: bool | None = None, create: bool = True) -> None:
        """`create=False` opens an existing store only (NotFound when its objects/ is absent)."""
        self.url = url.rstrip("/")
        self.fs, self.root = fsspec.core.url_to_fs(self.url)
        self.local = "file" in (self.fs.protocol if isinstance(self.fs.protocol, tuple) else (self.fs.protocol,))
        self.verify_reads = True if verify_reads is None else verify_reads
        if create:
            self.fs.makedirs(self._join("objects"), exist_ok=True)
        elif not self.fs.exists(self._join("objects")) and not self.fs.exists(self._join("names")):
            raise NotFound(f"no object store at {self.url}")

    # -- paths ---------------------------------------------------------------------------------
    def _join(self, *parts: str) -> str:
        return "/".join([self.root.rstrip("/"), *parts])

    def path_of(self, digest: str) -> str:
        """The backend path of an object (for a local store: a real file path)."""
        if not is_digest(digest):
            raise InvalidInput(f"not an object digest: {digest!r}")
        hexd = digest.removeprefix(PREFIX)
        return self._join("objects", hexd[:2], hexd[2:])

    # -- writes --------------------------------------------------------------------------------
    def put_bytes(self, data: bytes, *, durable: bool = True) -> str:
        digest = digest_bytes(data)
        path = self.path_of(digest)
        if self.local:
            if _same_bytes(path, data):
                try:  # refresh the age so gc's grace period covers a writer re-putting it
                    os.utime(path)
                except OSError:
                    pass
                return digest
            # absent, or cut short or garbled by a power loss before a barrier: (re)write it whole
            _atomic_local_write(path, data, durable=durable)
        elif self.fs.exists(path):
            return digest
        else:
            self.fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
            self.fs.pipe_file(path, data)
        return digest

    def put_json(self, value: Any, *, durable: bool = True) -> str:
        return self.put_bytes(canonical_json(value), durable=durable)

    def sync(self) -> None:
        """Durability barrier for objects written with durable=False: after it returns they are on
        disk. One `syncfs` of the store's filesystem (Linux) instead of one fsync per object and
        per directory; elsewhere a global `sync`. Non-local backends make each write durable."""
        if not self.local:
            return
        if _SYNCFS is not None:
            fd = os.open(self.root, os.O_RDONLY)
            try:
                if _SYNCFS(fd) == 0:
                    return
            finally:
                os.close(fd)
        os.sync()

    # -- reads ---------------------------------------------------------------------------------
    def has(self, digest: str) -> bool:
        path = self.path_of(digest)
        if self.local:
            return os.path.exists(path)
        self.fs.invalidate_cache(path)           # another host may have written it since a listing
        return bool(self.fs.exists(path))

    def get_bytes(self, digest: str, *, verify: bool | None = None) -> bytes:
        path = self.path_of(digest)
        try:
            if self.local:
                with open(path, "rb") as fh:
                    data = fh.read()
            else:
                data = self.fs.cat_file(path)
        except FileNotFoundError:
            raise NotFound(f"object {digest} is not in the store") from None
        if (self.verify_reads if verify is None else verify) and digest_bytes(data) != digest:
            raise DamagedObject(digest, f" ({len(data)} bytes that hash to {digest_bytes(data)})")
        return data

    def prefetch(self, digests: list[str]) -> None:
        """Ask the kernel to start reading these objects now (local stores; a hint, never an error):
        a page that reads a hundred objects not in the page cache waits for the disk once, not a
        hundred times in a row."""
        if not self.local or not hasattr(os, "posix_fadvise"):
            return
        for digest in digests:
            try:
                fd = os.open(self.path_of(digest), os.O_RDONLY)
            except (OSError, InvalidInput):
                continue
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_WILLNEED)
            except OSError:
                pass
            finally:
                os.close(fd)

    def get_json(self, digest: str, *, verify: bool | None = None) -> Any:
        return json.loads(self.get_bytes(digest, verify=verify))

    def iter_digests(self) -> Iterator[str]:
        base = self._join("objects")
        for path in self.fs.find(base):
            rel = path[len(base) :].strip("/").split("/")
            if len(rel) == 2 and len(rel[0]) == 2 and len(rel[1]) == 62:
                yield PREFIX + rel[0] + rel[1]

    def verify(self, digest: str) -> bool:
        """True when the stored bytes hash to `digest`."""
        try:
            self.get_bytes(digest, verify=True)
        except (IntegrityError, NotFound):
            return False
        return True

    # -- names: claimed once ------------------------------------------------------------------
    def claim_name(self, name: str, digest: str) -> str:
        """Bind `name` to `digest` if it is unbound (create-if-absent: O_EXCL locally, If-None-Match
        on S3); returns the digest the name is bound to, which may be another writer's."""
        if not is_digest(digest):
            raise InvalidInput(f"not an object digest: {digest!r}")
        path = self._name_path(name)
        data = digest.encode()
        try:
            if self.local:
                _exclusive_local_write(path, data)
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

    def delete(self, digest: str) -> None:
        """Remove one object (only garbage collection calls this)."""
        path = self.path_of(digest)
        if self.fs.exists(path):
            self.fs.rm_file(path)


_NAME = re.compile(r"[a-z][a-z0-9-]{0,40}(/[A-Za-z0-9][A-Za-z0-9._-]{0,127}){0,4}")


def _exclusive_local_write(path: str, data: bytes) -> None:
    """Write a whole file under a name nobody holds yet: a durable temp file, then a hard link,
    which fails with FileExistsError when another writer got there first."""
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    tmp = f"{directory}/.tmp-{os.getpid()}-{threading.get_ident()}-{next(_tmp_counter)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
    try:
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.link(tmp, path)
    finally:
        os.unlink(tmp)
    dfd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def _same_bytes(path: str, data: bytes) -> bool:
    """A re-put compares the stored bytes (cheap for the small objects re-put in practice): a file
    renamed into place without a sync may hold the right size but not the right bytes after a crash."""
    try:
        with open(path, "rb") as fh:
            return os.fstat(fh.fileno()).st_size == len(data) and fh.read() == data
    except OSError:                 # absent (or unreadable): write it
        return False


def _libc_function(name: str, argtypes: list[Any]) -> Any:
    """The C library's `name` with its argument types (returning int, errno kept), or None where absent."""
    try:
        fn = getattr(ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True), name)
    except (OSError, AttributeError):
        return None
    fn.argtypes = argtypes
    fn.restype = ctypes.c_int
    return fn


_SYNCFS = _libc_function("syncfs", [ctypes.c_int])


_tmp_counter = itertools.count()


def _atomic_local_write(path: str, data: bytes, *, durable: bool) -> None:
    """Write `path` whole or not at all: an unnamed file named once written (`_link_whole`), else a
    temporary file (created read-only: the open descriptor still writes) renamed over the name;
    fsynced (and the directory) when `durable`, else left to the `sync` barrier."""
    directory = os.path.dirname(path)
    if not _link_whole(directory, path, data, durable):
        _rename_whole(directory, path, data, durable)
    if durable:
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def _rename_whole(directory: str, path: str, data: bytes, durable: bool) -> None:
    tmp = f"{directory}/.tmp-{os.getpid()}-{threading.get_ident()}-{next(_tmp_counter)}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    try:
        fd = os.open(tmp, flags, 0o444)
    except FileNotFoundError:
        os.makedirs(directory, exist_ok=True)
        fd = os.open(tmp, flags, 0o444)
    try:
        try:
            _write_all(fd, data, durable)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _write_all(fd: int, data: bytes, durable: bool) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    if durable:
        os.fsync(fd)


def _link_whole(directory: str, path: str, data: bytes, durable: bool) -> bool:
    """Linux: write `data` to an unnamed file in `directory` (O_TMPFILE) and give it its name only once
    whole (linkat AT_EMPTY_PATH) — one directory operation, not a temporary name's create and rename
    (issue 31, item 5: ~40 % less CPU a new object); a crash leaves no file behind. False when the
    name is taken (a damaged object being repaired, or another writer's) or the system cannot (not
    Linux, a filesystem without O_TMPFILE, AT_EMPTY_PATH refused without CAP_DAC_READ_SEARCH): the
    caller renames a temporary file over the name instead."""
    if _LINKAT is None or _TMPFILE_OFF:
        return False
    try:
        try:
            fd = os.open(directory, _O_TMPFILE | os.O_WRONLY, 0o444)
        except FileNotFoundError:
            os.makedirs(directory, exist_ok=True)
            fd = os.open(directory, _O_TMPFILE | os.O_WRONLY, 0o444)
    except OSError as exc:
        if exc.errno in _NO_TMPFILE:
            _TMPFILE_OFF.append(exc.errno)
            return False
        raise
    try:
        _write_all(fd, data, durable)
        if _LINKAT(fd, b"", _AT_FDCWD, os.fsencode(path), _AT_EMPTY_PATH) == 0:
            return True
        err = ctypes.get_errno()
    finally:
        os.close(fd)
    if err == errno.EEXIST:
        return False
    if err in _NO_TMPFILE:
        _TMPFILE_OFF.append(err)
        return False
    raise OSError(err, os.strerror(err), path)


_O_TMPFILE = getattr(os, "O_TMPFILE", 0)
_AT_FDCWD, _AT_EMPTY_PATH = -100, 0x1000
# errors that say "this system or filesystem cannot": the rename path is used from then on
_NO_TMPFILE = frozenset({errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT, errno.EPERM, errno.EXDEV,
                         errno.EACCES, errno.ENOSYS})
_TMPFILE_OFF: list[int] = []        # non-empty once the system refused (the errno that said so)
_LINKAT = (_libc_function("linkat", [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_int])
           if hasattr(os, "O_TMPFILE") else None)
