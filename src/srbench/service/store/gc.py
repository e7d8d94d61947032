"""Store `gc`: remove the objects no reference reaches (`service/store/references.py`), once they are older
than a grace period.

**Why `gc` never collects an object of an in-flight run.** Every writer puts an object *before* the
journal row that names it commits (dispatch stores the request, SSE and call record on the journal
writer thread right before the row's transaction; a plan, a report, a grade is stored before its run
row or action-cache row). So at any instant an object may exist that nothing references *yet*. `gc`
marks from a snapshot of the journal and only then lists the objects, and it deletes an unreachable
object only when its modification time is at least ``grace_s`` (default one hour) in the past: an
object written after the mark is younger than that, and so is an object written before the mark
whose row had not committed yet, because rows commit within moments of their objects. An object
whose age the backend does not report is never deleted. Right before deleting, `gc` marks again from
the journal as it is then (a row committed meanwhile rescues its objects) and refuses if a run has
become active.

**Why `gc` never collects what a damaged object hides** (issue 38, item 1). The mark reads every
reachable object verified, trying each copy the store holds. When it meets one it cannot follow — a
journal cell that no longer holds a readable reference, a reachable object that is missing, or whose
every copy is damaged, cut short or not a regular file — what that object names is unknown, so `gc`
deletes nothing, dry run or not, and says which digests and the fix (``unreadable``, ``refused``): get
a good copy with `sr-bench store verify --repair`, then gc again.

**Damaged copies and packs** (issue 38, items 2–5). Every copy of an object the mark did not read whole is
re-hashed: a copy that does not verify is dropped only when the store holds its object well elsewhere (a
good copy of its digest, or of what its bytes hash to); otherwise it, and the pack holding it, stay
(``keep_damaged``: a misnamed entry may be the only copy of another object). Then pack upkeep: regular
``*.pack`` files that are not packs are removed once older than the grace period, and the packs that are
not full are merged (`cas/upkeep.py`), so a store keeps about one pack per 10,000 objects.

The service adds two refusals: no `gc` while a run is queued, running or still finishing (its task
records the final report after the status turns terminal; 409 ``runs_active``), and no `gc --apply`
when the objects live outside the store (``SR_BENCH_OBJECTS_URL``), where journals of other stores
this one cannot see may reference them (409 ``objects_shared``).

The one case the grace period cannot see is a writer re-putting bytes that already exist as *old
garbage* in another process's view of the store: such an object can be deleted between that put and
the commit of the row naming it. A later `verify` reports it as missing with its referrer. Keep the
grace period well above the longest build, and run `gc --apply` when the store is quiet.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from srbench.cas.digest import digest_bytes
from srbench.cas.store import Copy, ObjectStore
from srbench.errors import Conflict, InvalidInput
from srbench.service.journal.scan import runs_with_status
from srbench.service.journal.writer import Journal
from srbench.service.store.maintenance_answers import (
    Collected,
    GcAction,
    GcCopy,
    GcItem,
    PackFile,
    PackFileAction,
    PackUpkeep,
    Unreadable,
)
from srbench.service.store.references import Damaged, conservative_mark

DEFAULT_GRACE_S = 3600.0
ACTIVE_RUN_STATUSES = ("queued", "running")
SHOWN_UNREADABLE = 5          # digests named in the one-line refusal (the answer lists them all)

_GC_LOCKS: dict[str, threading.Lock] = {}
_GC_LOCKS_GUARD = threading.Lock()


def active_runs(journal: Journal) -> list[str]:
    """Ids of runs that are queued or running (their objects may not be referenced yet)."""
    return runs_with_status(journal, ACTIVE_RUN_STATUSES)


# -- gc ----------------------------------------------------------------------------------------------
def _mtime(info: Mapping[str, object]) -> float | None:
    """The modification time an fsspec `info()` reports (backends name it differently), or None."""
    for key in ("mtime", "LastModified", "last_modified", "updated", "modified", "created", "timeCreated"):
        value = info.get(key)
        if value is None:
            continue
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                value = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                continue
        if isinstance(value, _dt.datetime):
            if value.tzinfo is None:
                value = value.replace(tzinfo=_dt.UTC)
            return value.timestamp()
    return None


def _stat(objects: ObjectStore, digest: str) -> tuple[int, float | None] | None:
    info = objects.info(digest)
    if info is None:
        return None
    size = info.get("size")
    return int(size) if isinstance(size, int | float) else 0, _mtime(info)


def _store_lock(objects: ObjectStore) -> threading.Lock:
    with _GC_LOCKS_GUARD:
        return _GC_LOCKS.setdefault(objects.url, threading.Lock())


def gc(objects: ObjectStore, journal: Journal, *, dry_run: bool = True,
       grace_s: float = DEFAULT_GRACE_S) -> Collected:
    """Mark from the journal through nested references; delete unreachable objects older than `grace_s`.

    With ``dry_run`` (the default) nothing is deleted and the result says what would be. Refuses
    (Conflict ``runs_active``) while a run is queued or running, and (``gc_running``) while another gc
    of the same store is under way. An object whose age is unknown (the backend reports no time) is
    never deleted. See the module docstring for why the grace period keeps in-flight objects.

    Returns counts and bytes: ``objects``/``bytes`` (all), ``reachable``, ``unreachable``,
    ``collectable`` (unreachable and older than the grace period), ``young`` (unreachable but kept
    for the grace period), ``rescued`` (referenced by a row committed while gc ran), ``deleted`` —
    each with a ``*_bytes`` twin — and ``items``: every unreachable object with its size, age and
    action (``delete`` in a dry run, ``deleted``, ``keep_young``, ``rescued``).
    """
    if isinstance(grace_s, bool) or not isinstance(grace_s, int | float) or not math.isfinite(grace_s) \
            or grace_s < 0:
        raise InvalidInput("grace_s must be a number of seconds >= 0")
    lock = _store_lock(objects)
    if not lock.acquire(blocking=False):
        raise Conflict("another store gc is running on this store", code="gc_running")
    try:
        return _gc(objects, journal, dry_run=dry_run, grace_s=float(grace_s))
    finally:
        lock.release()


def _refuse_if_active(journal: Journal) -> None:
    active = active_runs(journal)
    if active:
        shown = ", ".join(active[:5]) + (" …" if len(active) > 5 else "")
        raise Conflict(f"store gc refused: {len(active)} run(s) are queued or running ({shown}); wait for them "
                       "to finish or cancel them", code="runs_active")


@dataclass
class _Listing:
    """What gc found listing the store: counts, the unreachable objects, and the bad copies."""

    counts: dict[str, int]
    items: list[GcItem] = field(default_factory=list)
    bad: list[tuple[Copy, GcCopy]] = field(default_factory=list)


def _gc(objects: ObjectStore, journal: Journal, *, dry_run: bool, grace_s: float) -> Collected:
    started = time.monotonic()
    _refuse_if_active(journal)
    objects.relist()
    marked: set[str] = set()
    damaged: list[Damaged] = []
    conservative_mark(objects, journal, marked, damaged)
    listing = _list(objects, marked, grace_s)
    counts, items = listing.counts, listing.items
    work = counts["collectable"] or any(g.action == "drop" for _, g in listing.bad)
    if not dry_run and work and not damaged:
        # rows committed since the first mark rescue their objects; a run that started meanwhile stops gc
        conservative_mark(objects, journal, marked, damaged)
        _refuse_if_active(journal)
    bad = [g for _, g in listing.bad]
    if damaged:                   # what an unreadable object names is unknown: nothing may go
        items = [i.model_copy(update={"action": "blocked"}) if i.action == "delete" else i for i in items]
        bad = [g.model_copy(update={"action": "blocked"}) if g.action == "drop" else g for g in bad]
    elif not dry_run and work:
        # bad copies first (each has a good twin, or its bytes are an object the store holds well)
        objects.drop_copies([c for c, g in listing.bad if g.action == "drop"])
        bad = [g.model_copy(update={"action": "dropped"}) if g.action == "drop" else g for g in bad]
        items = [_collect(item, marked, counts) for item in items]
        # one call: a pack holding several of them is unpacked once (cas/packs.py)
        objects.delete_many([item.digest for item in items if item.action == "deleted"])
        items = [_kept_if_left(objects, item, counts) for item in items]
    packs = _pack_upkeep(objects, dry_run=dry_run or bool(damaged), blocked=bool(damaged), grace_s=grace_s)
    return Collected(dry_run=dry_run, grace_s=grace_s, **counts, items=items, bad_copies=bad, packs=packs,
                     **_refusal(damaged), elapsed_s=round(time.monotonic() - started, 3))


def _pack_upkeep(objects: ObjectStore, *, dry_run: bool, blocked: bool, grace_s: float) -> PackUpkeep | None:
    """Remove the regular ``*.pack`` files that are not packs once older than the grace period, then merge
    the packs that are not full and older than it (`cas/upkeep.py`: the new pack is durable before an old one
    goes, and keeps their newest time)."""
    if objects.packs is None:
        return None
    before = objects.pack_count()
    files: list[PackFile] = []
    for path, why, age in objects.unreadable_packs():
        old = age >= grace_s
        action: PackFileAction = ("blocked" if blocked else "remove" if dry_run else "removed") if old else "keep_young"
        files.append(PackFile(where=f"packs/{os.path.basename(path)}", problem=why, age_s=round(age, 3),
                              action=action))
    if not dry_run:
        objects.remove_packs([f"{objects.packs.directory}/{f.where.removeprefix('packs/')}"
                              for f in files if f.action == "removed"])
    merged = objects.merge_packs(dry_run=dry_run, older_than_s=grace_s)      # (a young pack waits)
    after = objects.pack_count() if not dry_run else before - merged.merged + merged.written
    return PackUpkeep(packs=before, packs_after=after, merged=merged.merged, written=merged.written,
                      unreadable=files)


def _list(objects: ObjectStore, marked: set[str], grace_s: float) -> _Listing:
    """Count every object, list the unreachable ones with their action, and re-hash every copy of each object
    the mark did not read whole (unreachable ones, and those with more than one copy)."""
    now = time.time()
    listing = _Listing({k: 0 for k in ("objects", "bytes", "reachable", "reachable_bytes", "unreachable",
                                       "unreachable_bytes", "collectable", "collectable_bytes", "young",
                                       "young_bytes", "rescued", "rescued_bytes", "deleted", "deleted_bytes")})
    counts = listing.counts
    for digest in objects.iter_digests():
        st = _stat(objects, digest)
        if st is None:            # gone meanwhile
            continue
        size, mtime = st
        counts["objects"] += 1
        counts["bytes"] += size
        kept_bad = False
        if digest not in marked or objects.count_copies(digest) > 1:
            kept_bad = _bad_copies(objects, digest, listing)
        if digest in marked:
            counts["reachable"] += 1
            counts["reachable_bytes"] += size
            continue
        age = None if mtime is None else now - mtime
        counts["unreachable"] += 1
        counts["unreachable_bytes"] += size
        old = age is not None and age >= grace_s
        action: GcAction = "keep_damaged" if kept_bad else "delete" if old else "keep_young"
        if not kept_bad:
            kind = "collectable" if old else "young"
            counts[kind] += 1
            counts[f"{kind}_bytes"] += size
        listing.items.append(GcItem(digest=digest, bytes=size, age_s=None if age is None else round(age, 3),
                                    action=action))
    return listing


def _bad_copies(objects: ObjectStore, digest: str, listing: _Listing) -> bool:
    """Add the copies of `digest` that do not verify to `listing`, each to drop when the store holds its
    object well elsewhere (a good copy of `digest`, or of what its bytes hash to), else to keep (issue 38,
    items 2–3: a misnamed entry may be the only copy of the object it holds). True when one is kept."""
    copies = objects.copies(digest)
    hashes = [None if c.data is None else digest_bytes(c.data) for c in copies]
    has_good = digest in hashes
    kept = False
    for copy, true in zip(copies, hashes, strict=True):
        if true == digest:
            continue
        redundant = has_good or (true is not None and objects.verify(true))
        kept = kept or not redundant
        problem = copy.problem or f"{len(copy.data or b'')} bytes that hash to {true}"
        listing.bad.append((copy, GcCopy(digest=digest, where=copy.where, problem=problem,
                                         action="drop" if redundant else "keep")))
    return kept


def _kept_if_left(objects: ObjectStore, item: GcItem, counts: dict[str, int]) -> GcItem:
    """An object gc deleted that still has a copy (its pack is kept whole for a damaged entry it shares)."""
    if item.action != "deleted" or not objects.count_copies(item.digest):
        return item
    counts["deleted"] -= 1
    counts["deleted_bytes"] -= item.bytes
    return item.model_copy(update={"action": "keep_damaged"})


def _refusal(damaged: list[Damaged]) -> dict[str, object]:
    """The answer's ``unreadable`` list and its one-line ``refused`` (None when the mark read everything)."""
    if not damaged:
        return {"unreadable": [], "refused": None}
    named = [d.digest or d.where for d in damaged]
    shown = ", ".join(named[:SHOWN_UNREADABLE]) + (f" and {len(named) - SHOWN_UNREADABLE} more"
                                                  if len(named) > SHOWN_UNREADABLE else "")
    refused = (f"deleted nothing: {len(damaged)} reachable reference(s) cannot be read or verified ({shown}), "
               "so what they name is unknown; put a good copy back with `sr-bench store verify --repair` "
               "(SR_BENCH_REPAIR_FROM naming a good copy of the store), then run gc again")
    return {"unreadable": [Unreadable(digest=d.digest, where=d.where, reason=d.reason) for d in damaged],
            "refused": refused}


def _collect(item: GcItem, marked: set[str], counts: dict[str, int]) -> GcItem:
    """A collectable object is deleted unless a row committed meanwhile names it (then it is rescued)."""
    if item.action != "delete":
        return item
    kind: GcAction = "rescued" if item.digest in marked else "deleted"
    counts[kind] += 1
    counts[f"{kind}_bytes"] += item.bytes
    return item.model_copy(update={"action": kind})


__all__ = ["ACTIVE_RUN_STATUSES", "DEFAULT_GRACE_S", "active_runs", "gc"]
