"""Whole-file writes on a local disk: the system calls behind the object store's local backend.

An object or a pack is written whole or not at all: on Linux as an unnamed file (O_TMPFILE) given
its name once complete (linkat), elsewhere as a temporary file renamed over its name; a name that must
be claimed once (a store name) is a hard link that fails when it exists. `SYNCFS` is the durability
barrier for files written without their own fsync.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import itertools
import os
import stat
import threading
from typing import Any


class NotRegularFile(OSError):
    """A name in the store that is not a regular file (a FIFO, socket, device, directory or symbolic link):
    never read (issue 38, item 4: a FIFO would block its reader)."""

    def __init__(self, path: str, kind: str) -> None:
        super().__init__(errno.EINVAL, f"not a regular file ({kind})", path)
        self.kind = kind


_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a directory"), (stat.S_ISLNK, "a symbolic link"))
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def kind_of(mode: int) -> str:
    """What a non-regular file is, from its st_mode."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def open_regular(path: str) -> int:
    """A read-only descriptor of the regular file at `path`, opened so that nothing can block or be followed
    (O_NONBLOCK: a FIFO opens at once; O_NOFOLLOW: a symbolic link is refused): FileNotFoundError when it is
    absent, `NotRegularFile` when it is anything but a regular file."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NotRegularFile(path, "a symbolic link") from None
        raise
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise NotRegularFile(path, kind_of(mode))
    return fd


def is_regular(path: str) -> bool:
    """True when `path` names a regular file itself (not through a symbolic link); FileNotFoundError if absent."""
    return stat.S_ISREG(os.lstat(path).st_mode)


def read_regular(path: str) -> bytes:
    """The whole regular file at `path` (`open_regular`'s errors)."""
    fd = open_regular(path)
    try:
        return read_at(fd, os.fstat(fd).st_size, 0)
    finally:
        os.close(fd)


def exclusive_local_write(path: str, data: bytes) -> None:
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


def same_bytes(path: str, data: bytes) -> bool:
    """A re-put compares the stored bytes (cheap for the small objects re-put in practice): a file
    renamed into place without a sync may hold the right size but not the right bytes after a crash."""
    try:                            # os-level calls: a new object's miss is the common case (half the cost of open())
        fd = open_regular(path)
    except OSError:                 # absent, unreadable or not a regular file: write it
        return False
    try:
        return os.fstat(fd).st_size == len(data) and read_at(fd, len(data), 0) == data
    except OSError:
        return False
    finally:
        os.close(fd)


def read_at(fd: int, length: int, offset: int) -> bytes:
    """`length` bytes at `offset` (fewer only at the file's end)."""
    if length <= 0:
        return b""
    parts, got = [], 0
    while got < length:
        chunk = os.pread(fd, length - got, offset + got)
        if not chunk:
            break
        parts.append(chunk)
        got += len(chunk)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _libc_function(name: str, argtypes: list[Any]) -> Any:
    """The C library's `name` with its argument types (returning int, errno kept), or None where absent."""
    try:
        fn = getattr(ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True), name)
    except (OSError, AttributeError):
        return None
    fn.argtypes = argtypes
    fn.restype = ctypes.c_int
    return fn


SYNCFS = _libc_function("syncfs", [ctypes.c_int])


_tmp_counter = itertools.count()


def rename_whole(directory: str, path: str, data: bytes, durable: bool) -> None:
    tmp = f"{directory}/.tmp-{os.getpid()}-{threading.get_ident()}-{next(_tmp_counter)}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    try:
        fd = os.open(tmp, flags, 0o444)
    except FileNotFoundError:
        os.makedirs(directory, exist_ok=True)
        fd = os.open(tmp, flags, 0o444)
    try:
        try:
            write_all(fd, data, durable)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_all(fd: int, data: bytes, durable: bool) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    if durable:
        os.fsync(fd)


def link_whole(directory: str, path: str, data: bytes, durable: bool) -> bool:
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
        write_all(fd, data, durable)
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
