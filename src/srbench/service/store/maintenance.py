"""Store maintenance: `verify` re-hashes every object and checks journal → CAS references; `gc` removes
objects that no reference reaches.

**References.** The roots are the journal: every text cell of every journal table that is an object
digest (``b3:<64 hex>``), or a JSON document holding digests (a dataset ref's manifest names its
``object``), e.g. ``cells.request``, ``cells.call``, ``runs.plan``, ``refs.value``,
``action_cache.output``. A few columns hold digests that are *not* references and are skipped
(`NOT_REFERENCES`): rule keys (``action_cache.key``, ``action_last.key``), the inputs and params the
action cache keeps only to explain a rebuild (``action_last.inputs``/``params``), a report head's
signatures of its inputs (``report_heads.sig``/``results_sig``), the context digest of a memoised
report row (``report_rows.ctx``), and the event log.
Tables added later are scanned the same way, so a new column naming objects is protected by default.
From the roots, references are followed through objects: in any object that is a JSON object, any
string value that is a digest is a reference (a plan names its dataset ``object``, a call record its
``request`` and ``sse``, a report its ``results`` and ``plan``, results rows their ``call`` and
``grade``). Blobs (JSON Lines datasets, SSE transcripts, parquet) name nothing.

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

The service adds two refusals: no `gc` while a run is queued, running or still finishing (its task
records the final report after the status turns terminal; 409 ``runs_active``), and no `gc --apply`
when the objects live outside the store (``SR_BENCH_OBJECTS_URL``), where journals of other stores
this one cannot see may reference them (409 ``objects_shared``).

The one case the grace period cannot see is a writer re-putting bytes that already exist as *old
garbage*: a re-put is a no-op that does not refresh the file's time, so such an object can be deleted
between that put and the commit of the row naming it. A later `verify` reports it as missing with
its referrer. Keep the grace period well above the longest build, and run `gc --apply` when the
store is quiet.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from srbench.cas.digest import digest_bytes, is_digest
from srbench.cas.store import ObjectStore
from srbench.errors import Conflict, IntegrityError, InvalidInput, NotFound
from srbench.service.journal.scan import runs_with_status, text_values
from srbench.service.journal.writer import Journal
from srbench.service.store.maintenance_answers import (
    Collected,
    GcAction,
    GcItem,
    Missing,
    Unrepaired,
    Verified,
)

DEFAULT_GRACE_S = 3600.0
# (table, column) pairs that hold digests which are not references; "*" skips the whole table
NOT_REFERENCES: frozenset[tuple[str, str]] = frozenset({
    ("action_cache", "key"), ("action_last", "key"), ("action_last", "inputs"), ("action_last", "params"),
    ("events", "*"), ("report_heads", "sig"), ("report_heads", "results_sig"), ("report_rows", "ctx"),
})
# keys whose digest names a value that is never stored as an object: a recipe capture's `projection_hash`
# (targets/router_config.py) digests the capture's own config and recipes; a sandbox receipt's `harness_digest`
# (sandbox/base.py) digests the grading harness's sources, which ship with sr-bench
NOT_REFERENCE_KEYS = frozenset({"projection_hash", "harness_digest"})
ACTIVE_RUN_STATUSES = ("queued", "running")
MAX_REFERRERS = 10            # referrers listed per missing digest (the count is always given)

_GC_LOCKS: dict[str, threading.Lock] = {}
_GC_LOCKS_GUARD = threading.Lock()


@dataclass(frozen=True)
class Reference:
    """One edge: `digest` is named at `where` (a journal cell, or a path inside another object)."""

    digest: str
    where: str


# -- finding references ------------------------------------------------------------------------------
def digests_in(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every (digest, JSON path) among the string values nested in `value` (keys are not references)."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        v, p = stack.pop()
        if isinstance(v, str):
            if is_digest(v):
                yield v, p
        elif isinstance(v, dict):
            stack.extend((child, f"{p}.{k}" if p else str(k)) for k, child in v.items() if k not in NOT_REFERENCE_KEYS)
        elif isinstance(v, list):
            stack.extend((child, f"{p}[{i}]") for i, child in enumerate(v))


def references_in(data: bytes) -> list[tuple[str, str]]:
    """The (digest, path) pairs an object's bytes name: only a JSON object names anything."""
    if not data[:64].lstrip().startswith(b"{") or b"b3:" not in data:
        return []
    try:
        value = json.loads(data)
    except (ValueError, UnicodeDecodeError):   # JSON Lines, or not JSON at all: a blob
        return []
    return list(digests_in(value)) if isinstance(value, dict) else []


def reach(objects: ObjectStore, roots: list[str], seen: set[str], *, verify: bool = False,
          missing: Callable[[str], None] | None = None) -> set[str]:
    """Add to `seen` every digest reachable from `roots` through the JSON objects of `objects`;
    `missing(digest)` is told of each absent one (default: skip it). Returns `seen`."""
    stack = list(roots)
    while stack:
        digest = stack.pop()
        if digest in seen:
            continue
        seen.add(digest)
        try:
            data = objects.get_bytes(digest, verify=verify)
        except NotFound:
            if missing is not None:
                missing(digest)
            continue
        stack.extend(child for child, _ in references_in(data))
    return seen


def _text_references(text: str) -> Iterator[tuple[str, str]]:
    if is_digest(text):
        yield text, ""
        return
    if "b3:" not in text or text.lstrip()[:1] not in ("{", "["):
        return
    try:
        value = json.loads(text)
    except ValueError:
        return
    yield from digests_in(value)


def journal_roots(journal: Journal) -> list[Reference]:
    """Every reference the journal holds, read in one snapshot, labelled ``table.column key [path]``."""
    out: list[Reference] = []
    for tv in text_values(journal, NOT_REFERENCES):
        key = None
        for digest, path in _text_references(tv.value):
            if key is None:
                key = tv.key()
            out.append(Reference(digest, f"{tv.table}.{tv.column} {key}" + (f" {path}" if path else "")))
    return out


def name_roots(objects: ObjectStore) -> list[Reference]:
    """The object store's bound names (a pushed run's bundle, a shared dataset): roots too."""
    return [Reference(digest, f"names/{name}") for name, digest in objects.iter_names()]


def active_runs(journal: Journal) -> list[str]:
    """Ids of runs that are queued or running (their objects may not be referenced yet)."""
    return runs_with_status(journal, ACTIVE_RUN_STATUSES)


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


def _gc(objects: ObjectStore, journal: Journal, *, dry_run: bool, grace_s: float) -> Collected:
    started = time.monotonic()
    _refuse_if_active(journal)
    marked: set[str] = set()

    def mark(roots: list[Reference]) -> None:
        reach(objects, [r.digest for r in roots], marked)

    mark(journal_roots(journal) + name_roots(objects))
    now = time.time()
    counts = {k: 0 for k in ("objects", "bytes", "reachable", "reachable_bytes", "unreachable",
                             "unreachable_bytes", "collectable", "collectable_bytes", "young", "young_bytes",
                             "rescued", "rescued_bytes", "deleted", "deleted_bytes")}
    items: list[GcItem] = []
    for digest in objects.iter_digests():
        st = _stat(objects, digest)
        if st is None:            # gone meanwhile
            continue
        size, mtime = st
        counts["objects"] += 1
        counts["bytes"] += size
        if digest in marked:
            counts["reachable"] += 1
            counts["reachable_bytes"] += size
            continue
        age = None if mtime is None else now - mtime
        counts["unreachable"] += 1
        counts["unreachable_bytes"] += size
        old = age is not None and age >= grace_s
        kind = "collectable" if old else "young"
        counts[kind] += 1
        counts[f"{kind}_bytes"] += size
        items.append(GcItem(digest=digest, bytes=size, age_s=None if age is None else round(age, 3),
                            action="delete" if old else "keep_young"))
    if not dry_run and counts["collectable"]:
        # rows committed since the first mark rescue their objects; a run that started meanwhile stops gc
        mark(journal_roots(journal) + name_roots(objects))
        _refuse_if_active(journal)
        items = [_collect(item, marked, counts) for item in items]
        # one call: a pack holding several of them is unpacked once (cas/packs.py)
        objects.delete_many([item.digest for item in items if item.action == "deleted"])
    return Collected(dry_run=dry_run, grace_s=grace_s, **counts, items=items,
                     elapsed_s=round(time.monotonic() - started, 3))


def _collect(item: GcItem, marked: set[str], counts: dict[str, int]) -> GcItem:
    """A collectable object is deleted unless a row committed meanwhile names it (then it is rescued)."""
    if item.action != "delete":
        return item
    kind: GcAction = "rescued" if item.digest in marked else "deleted"
    counts[kind] += 1
    counts[f"{kind}_bytes"] += item.bytes
    return item.model_copy(update={"action": kind})


__all__ = ["DEFAULT_GRACE_S", "NOT_REFERENCES", "REPAIR_ENV", "Reference", "active_runs", "digests_in", "gc",
           "journal_roots", "name_roots", "reach", "references_in", "repair_sources", "verify", "verify_and_repair"]
