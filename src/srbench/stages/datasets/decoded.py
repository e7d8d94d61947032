"""A dataset object's cases by id, decoded once while anything in the process holds them (issue 42, item 3).

A run's dispatcher, the report rows the service builds itself and the run's end-of-run report each read the
same dataset object; each decoded its own copy (~8 MiB at 2,000 MMLU-Pro cases), so a run's end held two or
three. `cases_by_id` hands every caller the same table while one is alive, weakly held here: nothing stays once
the last caller lets it go. The table and its cases are shared, so callers only read them.
"""

from __future__ import annotations

import threading
import weakref

from srbench.cas import ObjectStore
from srbench.schemas.dataset import Case, decode_cases


class CaseTable(dict[str, Case]):
    """The cases of one dataset object by id (a dict that can be held weakly)."""

    __slots__ = ("__weakref__",)


_decoded: weakref.WeakValueDictionary[str, CaseTable] = weakref.WeakValueDictionary()
_lock = threading.Lock()


def cases_by_id(store: ObjectStore, digest: str) -> CaseTable:
    """The cases of the dataset object `digest`, by id: the table another caller holds, or decoded now (a read
    verifies the bytes against `digest`, so one table serves every store holding that object)."""
    with _lock:
        got = _decoded.get(digest)
    if got is not None:
        return got
    table = CaseTable((c.id, c) for c in decode_cases(store.get_bytes(digest)))
    with _lock:
        return _decoded.setdefault(digest, table)


__all__ = ["CaseTable", "cases_by_id"]
