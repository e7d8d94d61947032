"""What the journal and the stored objects reference: the roots and edges store `verify` and `gc` follow.

The roots are the journal: every text cell of every journal table that is an object digest
(``b3:<64 hex>``), or a JSON document holding digests (a dataset ref's manifest names its ``object``),
e.g. ``cells.request``, ``cells.call``, ``runs.plan``, ``refs.value``, ``action_cache.output``. A few
columns hold digests that are *not* references and are skipped (`NOT_REFERENCES`): rule keys
(``action_cache.key``, ``action_last.key``), the inputs and params the action cache keeps only to explain
a rebuild (``action_last.inputs``/``params``), a report head's signatures of its inputs
(``report_heads.sig``/``results_sig``), the context digest of a memoised report row (``report_rows.ctx``),
and the event log. Tables added later are scanned the same way, so a new column naming objects is
protected by default. The store's bound names are roots too.

From the roots, references are followed through objects: in any object that is a JSON object, any string
value that is a digest is a reference (a plan names its dataset ``object``, a call record its ``request``
and ``sse``, a report its ``results`` and ``plan``, results rows their ``call`` and ``grade``). Blobs
(JSON Lines datasets, SSE transcripts, parquet) name nothing.

**A damaged reference is never skipped** (issue 38, item 1): a journal cell that looks like a digest but
is not one (``b3:`` and a byte changed), or a JSON cell naming digests that no longer parses, is reported
(`Damaged`), and so is a reachable object that is missing or whose every copy fails to verify — what it
named is unknown, so garbage collection must not run on a store that holds one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from srbench.cas.digest import PREFIX, is_digest
from srbench.cas.store import ObjectStore
from srbench.errors import IntegrityError, NotFound
from srbench.service.journal.scan import text_values
from srbench.service.journal.writer import Journal

# (table, column) pairs that hold digests which are not references; "*" skips the whole table
NOT_REFERENCES: frozenset[tuple[str, str]] = frozenset({
    ("action_cache", "key"), ("action_last", "key"), ("action_last", "inputs"), ("action_last", "params"),
    ("events", "*"), ("report_heads", "sig"), ("report_heads", "results_sig"), ("report_rows", "ctx"),
})
# keys whose digest names a value that is never stored as an object: a recipe capture's `projection_hash`
# (targets/router_config.py) digests the capture's own config and recipes; a sandbox receipt's `harness_digest`
# (sandbox/base.py) digests the grading harness's sources, which ship with sr-bench
NOT_REFERENCE_KEYS = frozenset({"projection_hash", "harness_digest"})


@dataclass(frozen=True)
class Reference:
    """One edge: `digest` is named at `where` (a journal cell, or a path inside another object)."""

    digest: str
    where: str


@dataclass(frozen=True)
class Damaged:
    """A reference that could not be followed: `digest` (None for a journal cell that no longer holds a
    readable reference) named at `where`, and why."""

    digest: str | None
    where: str
    reason: str


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
          missing: Callable[[str], None] | None = None,
          damaged: Callable[[str, Exception], None] | None = None,
          parents: dict[str, str] | None = None) -> set[str]:
    """Add to `seen` every digest reachable from `roots` through the JSON objects of `objects`;
    `missing(digest)` is told of each absent one (default: skip it), and with `verify`, `damaged(digest,
    error)` of each whose every copy is damaged (default: raise); `parents` gets, for each digest reached
    through another object, that object's digest and path. Returns `seen`."""
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
        except (IntegrityError, OSError) as exc:     # (OSError: a copy that cannot be read at all)
            if damaged is None:
                raise
            damaged(digest, exc)
            continue
        refs = references_in(data)
        if parents is not None:
            for child, path in refs:
                parents.setdefault(child, f"{digest} {path}")
        stack.extend(child for child, _ in refs)
    return seen


def _text_references(text: str) -> Iterator[tuple[str, str]]:
    """The digests a journal text cell names; ValueError when it looks like a reference that was damaged."""
    if is_digest(text):
        yield text, ""
        return
    if text.startswith(PREFIX) or (len(text) == 67 and text[2:3] == ":" and _mostly_hex(text[3:])):
        raise ValueError(f"not an object digest: {text[:80]!r}")
    if "b3:" not in text or text.lstrip()[:1] not in ("{", "["):
        return
    try:
        value = json.loads(text)
    except ValueError:
        raise ValueError("a JSON document naming objects that no longer parses") from None
    yield from digests_in(value)


def _mostly_hex(text: str) -> bool:
    return sum(c in "0123456789abcdef" for c in text) >= len(text) - 4


def journal_roots(journal: Journal, damaged: list[Damaged] | None = None) -> list[Reference]:
    """Every reference the journal holds, read in one snapshot, labelled ``table.column key [path]``; a
    cell that looks like a damaged reference goes to `damaged` (default: skipped)."""
    out: list[Reference] = []
    for tv in text_values(journal, NOT_REFERENCES):
        key = None
        try:
            for digest, path in _text_references(tv.value):
                if key is None:
                    key = tv.key()
                out.append(Reference(digest, f"{tv.table}.{tv.column} {key}" + (f" {path}" if path else "")))
        except ValueError as exc:
            if damaged is not None:
                damaged.append(Damaged(None, f"{tv.table}.{tv.column} {tv.key()}", str(exc)))
    return out


def name_roots(objects: ObjectStore) -> list[Reference]:
    """The object store's bound names (a pushed run's bundle, a shared dataset): roots too."""
    return [Reference(digest, f"names/{name}") for name, digest in objects.iter_names()]


def conservative_mark(objects: ObjectStore, journal: Journal, marked: set[str], damaged: list[Damaged]) -> None:
    """Add to `marked` everything the journal and the names reach, reading each object verified (every copy
    is tried); each reference that cannot be followed — a damaged journal cell, a reachable object missing
    or with no copy that verifies — goes to `damaged`."""
    journal_damage: list[Damaged] = []
    roots = journal_roots(journal, journal_damage) + name_roots(objects)
    damaged.extend(journal_damage)
    where = {r.digest: r.where for r in roots}
    reach(objects, [r.digest for r in roots], marked, verify=True, parents=where,
          missing=lambda d: damaged.append(Damaged(d, where.get(d, "?"), "missing")),
          damaged=lambda d, exc: damaged.append(Damaged(d, where.get(d, "?"), _short(str(exc)))))


def _short(message: str) -> str:
    """A DamagedObject's message without its advice (gc gives its own)."""
    return message.split("; run `sr-bench", 1)[0]


__all__ = ["NOT_REFERENCES", "NOT_REFERENCE_KEYS", "Damaged", "Reference", "conservative_mark", "digests_in",
           "journal_roots", "name_roots", "reach", "references_in"]
