"""An object under a file name with a suffix, for a program that picks its parser by the name's suffix.

A local store keeps objects as ``objects/<2 hex>/<62 hex>``, names without a suffix. Upstream's
``vllm-sr benchmark plan`` reads a dataset by path and parses it as JSONL only when the name ends in
``.jsonl`` (issue 39), so the path answered for a dataset is ``files/<64 hex><suffix>``: a hard link to
the loose object (the same inode: the same bytes, no second copy), or where the filesystem has no hard
links a copy of the verified bytes. It is made idempotently (an existing name that already is the object,
or holds its bytes, is kept; anything else is replaced whole), is never read by the store itself
(`iter_digests` lists only ``objects/`` and packs, so content addressing is untouched), and garbage
collection removes it with its object (`ObjectStore.delete_many` calls `drop`).
"""

from __future__ import annotations

import os
import threading
from itertools import count
from typing import TYPE_CHECKING, Literal, get_args

from srbench.cas import localfs

if TYPE_CHECKING:
    from srbench.cas.store import ObjectStore

DIR = "files"
Suffix = Literal[".jsonl"]
_counter = count()


def suffixed(store: ObjectStore, digest: str, suffix: Suffix) -> str:
    """The path of a local file named ``files/<hex><suffix>`` holding object `digest`'s bytes (made once)."""
    source = store.path_of(digest)                  # loose, a regular file (a packed object is unpacked)
    directory = os.path.join(store.root, DIR)
    path = os.path.join(directory, digest.split(":", 1)[1] + suffix)
    if _is_object(path, source):
        return path
    os.makedirs(directory, exist_ok=True)
    tmp = os.path.join(directory, f".tmp-{os.getpid()}-{threading.get_ident()}-{next(_counter)}")
    try:
        os.link(source, tmp)
    except OSError:                                 # no hard links here: a copy of the verified bytes
        localfs.rename_whole(directory, path, store.get_bytes(digest, verify=True), True)
        return path
    try:
        os.replace(tmp, path)                       # whole or not at all, over a stale or damaged name
    except BaseException:
        os.unlink(tmp)
        raise
    return path


def drop(store: ObjectStore, digest: str) -> None:
    """Remove every suffixed file of `digest` (its object is being removed)."""
    for suffix in get_args(Suffix):
        try:
            os.unlink(os.path.join(store.root, DIR, digest.split(":", 1)[1] + suffix))
        except FileNotFoundError:
            pass


def _is_object(path: str, source: str) -> bool:
    """True when `path` is a regular file that is the object's file, or holds the same bytes."""
    try:
        if not localfs.is_regular(path):
            return False
        if os.path.samefile(path, source):
            return True
    except OSError:
        return False
    return localfs.same_bytes(path, localfs.read_regular(source))
