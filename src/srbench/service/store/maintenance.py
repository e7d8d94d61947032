"""Store maintenance: `verify` re-hashes every object and checks every journal → object reference
(`service/store/references.py` says which cells and values are references), and `verify --repair` copies
good objects in from a second store. Garbage collection is `service/store/gc.py`.
"""

from __future__ import annotations

import os
import time

from srbench.cas.digest import digest_bytes
from srbench.cas.store import Copy, ObjectStore
from srbench.errors import IntegrityError, InvalidInput, NotFound, hide_credentials
from srbench.service.journal.writer import Journal
from srbench.service.store.maintenance_answers import (
    BadCopy,
    BadFile,
    Missing,
    Unreadable,
    Unrepaired,
    Verified,
)
from srbench.service.store.references import Damaged, journal_roots, name_roots, references_in
from srbench.service.team.reach import unreachable

MAX_REFERRERS = 10            # referrers listed per missing digest (the count is always given)


# -- verify ------------------------------------------------------------------------------------------
def verify(objects: ObjectStore, journal: Journal) -> Verified:
    """Re-hash every copy of every object and check that every reference reachable from the journal resolves.

    A corrupt object (no copy hashes to its name) counts whether or not it is reachable (the disk lost
    bytes); so does each bad copy of an object that also has a good one (`bad_copies` names each bad copy,
    a pack entry whose bytes hash to a digest something names as a "misnamed entry"), each ``*.pack`` that
    is not a readable pack (`bad_files`: a FIFO, a symbolic link, a damaged index, a pack cut short) and
    each journal cell that no longer holds a readable reference. A missing digest counts only when
    something reachable names it. References are followed through corrupt objects too (best effort).
    """
    started = time.monotonic()
    damaged_cells: list[Damaged] = []
    # roots first, so every object a root names was put before the listing
    roots = journal_roots(journal, damaged_cells) + name_roots(objects)
    seen = _Seen(objects)
    for digest in objects.iter_digests():
        seen.load(digest)
    missing: dict[str, list[str]] = {}
    reachable: set[str] = set()
    edges = 0
    stack = [(r.digest, r.where) for r in roots]
    while stack:
        digest, where = stack.pop()
        edges += 1
        if digest not in seen.present and not seen.load(digest):   # load(): an object put after the listing
            missing.setdefault(digest, []).append(where)
            if digest in reachable:
                continue
            reachable.add(digest)               # (its bytes under another name: what they name is checked too)
            stack.extend((child, f"{digest} {path}") for child, path in seen.renamed_children(digest))
            continue
        if digest in reachable:
            continue
        reachable.add(digest)
        stack.extend((child, f"{digest} {path}") for child, path in seen.children.get(digest, ()))
    reachable -= set(missing)
    missing_view = [Missing(digest=d, referenced_from=sorted(w)[:MAX_REFERRERS], references=len(w))
                    for d, w in sorted(missing.items())]
    bad_copies = seen.bad_copies(reachable | set(missing))
    bad_files = [BadFile(where=w, problem=p) for w, p in objects.pack_problems()]
    cells = [Unreadable(digest=None, where=d.where, reason=d.reason) for d in damaged_cells]
    corrupt = sorted(seen.corrupt)
    problems = (len(corrupt) + len(missing_view) + sum(b.digest not in seen.corrupt for b in bad_copies)
                + len(bad_files) + len(cells))
    return Verified(objects=len(seen.present), bytes=seen.total_bytes, reachable=len(reachable), references=edges,
                    corrupt=corrupt, missing=missing_view, bad_copies=bad_copies, bad_files=bad_files,
                    damaged_references=cells, problems=problems, ok=problems == 0,
                    elapsed_s=round(time.monotonic() - started, 3))


class _Seen:
    """What `verify` read: each object's copies re-hashed, what it names, and its bad copies."""

    def __init__(self, objects: ObjectStore) -> None:
        self.objects = objects
        self.present: set[str] = set()
        self.corrupt: set[str] = set()
        self.children: dict[str, list[tuple[str, str]]] = {}
        self.bad: list[tuple[str, Copy, str | None]] = []      # (digest, copy, what its bytes hash to)
        self.renamed: dict[str, bytes] = {}                    # a bad copy's bytes, by what they hash to
        self.total_bytes = 0

    def load(self, digest: str) -> bool:
        copies = self.objects.copies(digest)
        if not copies:
            return False
        self.present.add(digest)
        good = None
        for copy in copies:
            true = None if copy.data is None else digest_bytes(copy.data)
            if true == digest:
                good = good if good is not None else copy.data
                continue
            self.bad.append((digest, copy, true))
            if true is not None and copy.data is not None:
                self.renamed.setdefault(true, copy.data)
        if good is None:
            self.corrupt.add(digest)
        data = good if good is not None else next((c.data for c in copies if c.data is not None), b"")
        self.total_bytes += len(data)
        refs = references_in(data)
        if refs:
            self.children[digest] = refs
        return True

    def renamed_children(self, digest: str) -> list[tuple[str, str]]:
        data = self.renamed.get(digest)
        return [] if data is None else references_in(data)

    def bad_copies(self, named: set[str]) -> list[BadCopy]:
        """Each bad copy, said plainly: a pack entry whose bytes are an object something names is misnamed."""
        out = []
        for digest, copy, true in self.bad:
            if true is None:
                problem = copy.problem or "unreadable"
            elif copy.place is not None and true in named:
                problem = f"misnamed entry: bytes hash to {true}"
            else:
                problem = f"damaged: {len(copy.data or b'')} bytes that hash to {true}"
            out.append(BadCopy(digest=digest, where=copy.where, problem=problem, hashes_to=true))
        return sorted(out, key=lambda b: (b.digest, b.where))


# -- repair ------------------------------------------------------------------------------------------
REPAIR_ENV = "SR_BENCH_REPAIR_FROM"


def repair_sources() -> list[ObjectStore]:
    """The second stores `verify --repair` may copy good objects from: the fsspec URLs in
    ``SR_BENCH_REPAIR_FROM`` (space- or comma-separated; e.g. the team's shared object store or a backup)."""
    urls = [u for u in os.environ.get(REPAIR_ENV, "").replace(",", " ").split() if u]
    return [_open_source(u) for u in urls]


def _open_source(url: str) -> ObjectStore:
    """One repair source, or one line naming it (an unknown protocol, a path under a file: a 500 before)."""
    try:
        return ObjectStore(url)
    except (ImportError, ValueError, OSError) as exc:
        first = str(exc).splitlines()[0][:200] if str(exc) else ""
        raise InvalidInput(hide_credentials(f"{REPAIR_ENV} names {url}, which cannot be opened ({type(exc).__name__}: "
                                            f"{first}): give the service fsspec URLs of stores it can read "
                                            "(s3://bucket/prefix, a directory …), or unset it"),
                           code="service_environment") from None


def verify_and_repair(objects: ObjectStore, journal: Journal, sources: list[ObjectStore]) -> Verified:
    """`verify`, then for each corrupt or missing object a good copy is written in its place: bytes this
    store holds under another name (a misnamed pack entry), else a copy from the first source whose bytes
    hash to its name; the answer is a fresh `verify` of the repaired store, plus ``repaired`` (digests) and
    ``unrepaired`` (``{"digest", "reason"}``), and the ``sources`` asked."""
    first = verify(objects, journal)
    wanted = [*first.corrupt, *(m.digest for m in first.missing)]
    down = {s.url: why for s in (sources if wanted else []) if (why := unreachable(s.url, s.fs)) is not None}
    asked = [s for s in sources if s.url not in down]
    renamed = {b.hashes_to: b for b in first.bad_copies if b.hashes_to is not None}
    repaired: list[str] = []
    unrepaired: list[Unrepaired] = []
    for digest in wanted:
        data = _own_copy(objects, renamed.get(digest), digest)
        if data is None:
            data = _good_copy(asked, digest)
        if data is None:
            unrepaired.append(Unrepaired(digest=digest, reason=_why_not(first, digest, sources, down)))
            continue
        try:
            if objects.local:
                objects.put_bytes(data)      # a damaged local file is rewritten whole (temp file + rename)
            else:
                objects.fs.pipe_file(objects.path_of(digest), data)
        except NotADirectoryError as exc:    # a file where its objects/xx/ folder belongs
            unrepaired.append(Unrepaired(digest=digest, reason=(
                f"a good copy was found but cannot be written: {exc.filename} is not a folder; move that file "
                "aside (it is no object), then repair again")))
            continue
        repaired.append(digest)
    res = verify(objects, journal) if repaired else first
    return res.model_copy(update={"repaired": repaired, "unrepaired": unrepaired,
                                  "sources": [hide_credentials(s.url) for s in sources]})


def _own_copy(objects: ObjectStore, bad: BadCopy | None, digest: str) -> bytes | None:
    """The bytes of `digest` that this store holds under another name (`bad`), when they still verify."""
    if bad is None:
        return None
    for copy in objects.copies(bad.digest):
        if copy.where == bad.where and copy.data is not None and digest_bytes(copy.data) == digest:
            return copy.data
    return None


def _why_not(first: Verified, digest: str, sources: list[ObjectStore], down: dict[str, str]) -> str:
    own = [b.hashes_to for b in first.bad_copies if b.digest == digest and b.hashes_to is not None]
    if own and all(b.startswith("misnamed") for b in (c.problem for c in first.bad_copies if c.digest == digest)):
        return (f"a misnamed entry: its bytes are {own[0]}'s, not an object of its own; once that object has a "
                "good copy, `sr-bench store gc --apply` drops it")
    if not sources:
        return f"no second store configured ({REPAIR_ENV})"
    unreached = "; ".join(f"{hide_credentials(url)} could not be reached ({why})" for url, why in down.items())
    return "no configured source holds a good copy" + (f" ({unreached}: check it answers, then repair again)"
                                                       if unreached else "")


def _good_copy(sources: list[ObjectStore], digest: str) -> bytes | None:
    for source in sources:
        try:
            return source.get_bytes(digest, verify=True)
        except (NotFound, IntegrityError, OSError):
            continue
    return None


__all__ = ["REPAIR_ENV", "repair_sources", "verify", "verify_and_repair"]
