"""Store maintenance: `verify` re-hashes every object and checks every journal → object reference
(`service/store/references.py` says which cells and values are references), and `verify --repair` copies
good objects in from a second store. Garbage collection is `service/store/gc.py`.
"""

from __future__ import annotations

import os
import time

from srbench.cas.digest import digest_bytes
from srbench.cas.store import ObjectStore
from srbench.errors import IntegrityError, NotFound
from srbench.service.journal.writer import Journal
from srbench.service.store.maintenance_answers import Missing, Unrepaired, Verified
from srbench.service.store.references import journal_roots, name_roots, references_in

MAX_REFERRERS = 10            # referrers listed per missing digest (the count is always given)


# -- verify ------------------------------------------------------------------------------------------
def verify(objects: ObjectStore, journal: Journal) -> Verified:
    """Re-hash every object and check that every reference reachable from the journal resolves.

    A corrupt object counts whether or not it is reachable (the disk lost bytes); a
    missing digest counts only when something reachable names it. References are followed through
    corrupt objects too (best effort), so what a corrupt object names is still checked.
    """
    started = time.monotonic()
    roots = journal_roots(journal) + name_roots(objects)      # first, so every object a root names was put before the listing
    present: set[str] = set()
    children: dict[str, list[tuple[str, str]]] = {}
    corrupt: list[str] = []
    total_bytes = 0

    def load(digest: str) -> bool:
        nonlocal total_bytes
        try:
            data = objects.get_bytes(digest, verify=False)
        except NotFound:
            return False
        present.add(digest)
        total_bytes += len(data)
        if digest_bytes(data) != digest:
            corrupt.append(digest)
        refs = references_in(data)
        if refs:
            children[digest] = refs
        return True

    for digest in objects.iter_digests():
        load(digest)
    missing: dict[str, list[str]] = {}
    reachable: set[str] = set()
    edges = 0
    stack = [(r.digest, r.where) for r in roots]
    while stack:
        digest, where = stack.pop()
        edges += 1
        if digest not in present and not load(digest):   # load(): an object put after the listing
            missing.setdefault(digest, []).append(where)
            continue
        if digest in reachable:
            continue
        reachable.add(digest)
        stack.extend((child, f"{digest} {path}") for child, path in children.get(digest, ()))
    missing_view = [Missing(digest=d, referenced_from=sorted(w)[:MAX_REFERRERS], references=len(w))
                    for d, w in sorted(missing.items())]
    problems = len(corrupt) + len(missing_view)
    return Verified(objects=len(present), bytes=total_bytes, reachable=len(reachable), references=edges,
                    corrupt=sorted(corrupt), missing=missing_view, problems=problems, ok=problems == 0,
                    elapsed_s=round(time.monotonic() - started, 3))


# -- repair ------------------------------------------------------------------------------------------
REPAIR_ENV = "SR_BENCH_REPAIR_FROM"


def repair_sources() -> list[ObjectStore]:
    """The second stores `verify --repair` may copy good objects from: the fsspec URLs in
    ``SR_BENCH_REPAIR_FROM`` (space- or comma-separated; e.g. the team's shared object store or a backup)."""
    urls = [u for u in os.environ.get(REPAIR_ENV, "").replace(",", " ").split() if u]
    return [ObjectStore(u) for u in urls]


def verify_and_repair(objects: ObjectStore, journal: Journal, sources: list[ObjectStore]) -> Verified:
    """`verify`, then for each corrupt or missing object a copy from the first source whose bytes hash
    to its name is written in its place; the answer is a fresh `verify` of the repaired store, plus
    ``repaired`` (digests) and ``unrepaired`` (``{"digest", "reason"}``), and the ``sources`` asked."""
    first = verify(objects, journal)
    wanted = [*first.corrupt, *(m.digest for m in first.missing)]
    repaired: list[str] = []
    unrepaired: list[Unrepaired] = []
    for digest in wanted:
        data = _good_copy(sources, digest)
        if data is None:
            unrepaired.append(Unrepaired(digest=digest, reason="no configured source holds a good copy"
                                         if sources else f"no second store configured ({REPAIR_ENV})"))
            continue
        if objects.local:
            objects.put_bytes(data)          # a damaged local file is rewritten whole (temp file + rename)
        else:
            objects.fs.pipe_file(objects.path_of(digest), data)
        repaired.append(digest)
    res = verify(objects, journal) if repaired else first
    return res.model_copy(update={"repaired": repaired, "unrepaired": unrepaired,
                                  "sources": [s.url for s in sources]})


def _good_copy(sources: list[ObjectStore], digest: str) -> bytes | None:
    for source in sources:
        try:
            return source.get_bytes(digest, verify=True)
        except (NotFound, IntegrityError, OSError):
            continue
    return None


__all__ = ["REPAIR_ENV", "repair_sources", "verify", "verify_and_repair"]
