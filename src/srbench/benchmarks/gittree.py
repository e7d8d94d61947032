"""Git tree ids computed without git: how Terminal-Bench's ``tasks/`` is checked against its pin.

A tree id is what ``git rev-parse <commit>:tasks`` prints: the SHA-1 of the tree object whose entries
(``<mode> <name>\\0<20-byte id>``, sorted as git sorts them: a directory as if its name ended in ``/``)
name blobs (``blob <size>\\0<bytes>``, mode 100644, or 100755 when the owner may execute), symlinks
(mode 120000, the link text as the blob) and subtrees (mode 40000). Empty directories are not in git
and are left out; ``.git`` is skipped. `tree_of_dir` reads a checkout's directory; `tree_of_entries`
takes ``{relative path: (mode, bytes)}`` (a tarball's members).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path

FILE, EXEC, LINK, TREE = "100644", "100755", "120000", "40000"
SKIP = {".git"}


def _object(kind: str, body: bytes) -> bytes:
    return hashlib.sha1(f"{kind} {len(body)}\0".encode() + body, usedforsecurity=False).digest()


def _tree(entries: list[tuple[str, str, bytes]]) -> bytes:
    """(mode, name, 20-byte id) entries → the tree's id."""
    order = sorted(entries, key=lambda e: e[1] + ("/" if e[0] == TREE else ""))
    body = b"".join(f"{mode} {name}".encode() + b"\0" + oid for mode, name, oid in order)
    return _object("tree", body)


class _Dir:
    def __init__(self) -> None:
        self.dirs: dict[str, _Dir] = {}
        self.files: dict[str, tuple[str, bytes]] = {}      # name → (mode, blob id)

    def oid(self) -> bytes | None:
        out = [(mode, name, oid) for name, (mode, oid) in self.files.items()]
        for name, sub in self.dirs.items():
            got = sub.oid()
            if got is not None:
                out.append((TREE, name, got))
        return _tree(out) if out else None


def tree_of_entries(entries: Mapping[str, tuple[str, bytes]]) -> str:
    """The tree id of ``{posix relative path: (mode, content)}`` (mode one of FILE, EXEC, LINK)."""
    root = _Dir()
    for rel, (mode, data) in entries.items():
        parts = rel.split("/")
        node = root
        for part in parts[:-1]:
            node = node.dirs.setdefault(part, _Dir())
        node.files[parts[-1]] = (mode, _object("blob", data))
    return (root.oid() or _tree([])).hex()


def _entry(path: Path) -> tuple[str, bytes] | None:
    st = path.lstat()
    if stat.S_ISLNK(st.st_mode):
        return LINK, os.fsencode(os.readlink(path))
    if stat.S_ISREG(st.st_mode):
        return (EXEC if st.st_mode & stat.S_IXUSR else FILE), path.read_bytes()
    return None


def tree_of_dir(root: Path) -> str:
    """The tree id of a directory on disk (``.git`` skipped, symlinks not followed)."""
    root = Path(root)
    entries: dict[str, tuple[str, bytes]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP and not (Path(dirpath) / d).is_symlink()]
        links = [d for d in os.listdir(dirpath) if d not in SKIP and (Path(dirpath) / d).is_symlink()]
        for name in {*filenames, *links}:
            path = Path(dirpath) / name
            got = _entry(path)
            if got is not None:
                entries[path.relative_to(root).as_posix()] = got
    return tree_of_entries(entries)


__all__ = ["EXEC", "FILE", "LINK", "tree_of_dir", "tree_of_entries"]
