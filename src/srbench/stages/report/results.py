"""The per-cell results of a report as pages of rows, so that reading one page costs O(page).

A results object (schema 2) is an index: the total, the rows a page holds, each page's first seq
and each page's digest. A page (`results_page`) holds up to `PAGE_ROWS` consecutive rows in seq
order. Reading rows after a seq reads the index and at most two pages, whatever the run's size;
building streams: a page is written as soon as it is full. Schema 1 (every row inline, written
before pages existed) is still read. The objects are schemas/results.py `ResultsIndex`, `ResultsPage`
and `InlineResults`; a row is handed on as stored (`StoredRow`).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator

from srbench.cas import ObjectStore
from srbench.schemas.results import InlineResults, ResultsIndex, ResultsPage, StoredRow, read_results

PAGE_ROWS = 128


class ResultsWriter:
    """Collects rows in seq order and writes each full page at once (objects without a sync each:
    the rule engine's build ends with one barrier)."""

    def __init__(self, store: ObjectStore, page_rows: int = PAGE_ROWS) -> None:
        self.store = store
        self.page_rows = page_rows
        self.pages: list[str] = []
        self.starts: list[int] = []
        self.total = 0
        self._buf: list[StoredRow] = []

    def add(self, row: StoredRow) -> None:
        self._buf.append(row)
        self.total += 1
        if len(self._buf) >= self.page_rows:
            self._flush()

    def _flush(self) -> None:
        if not self._buf:
            return
        self.starts.append(_seq(self._buf[0]))
        page = ResultsPage.model_construct(rows=self._buf)       # the rows as built: not validated again
        self.pages.append(self.store.put_json(page.model_dump(mode="json", by_alias=True), durable=False))
        self._buf = []

    def finish(self) -> str:
        self._flush()
        index = ResultsIndex(total=self.total, page_rows=self.page_rows, starts=self.starts, pages=self.pages)
        return self.store.put_json(index.model_dump(mode="json", by_alias=True), durable=False)


def _seq(row: StoredRow) -> int:
    """A row's position in the plan."""
    seq = row["seq"]
    if not isinstance(seq, int):
        raise TypeError(f"a result row's seq is {seq!r}, not an integer")
    return seq


def write_results(store: ObjectStore, rows: Iterable[StoredRow]) -> str:
    w = ResultsWriter(store)
    for r in rows:
        w.add(r)
    return w.finish()


def _page_rows(store: ObjectStore, digest: str) -> list[StoredRow]:
    return ResultsPage.model_validate(store.get_json(digest)).rows


def iter_rows(store: ObjectStore, digest: str) -> Iterator[StoredRow]:
    """Every row in seq order, one page in memory at a time."""
    index = read_results(store.get_json(digest))
    if isinstance(index, InlineResults):
        yield from index.rows
        return
    for page in index.pages:
        yield from _page_rows(store, page)


def all_rows(store: ObjectStore, digest: str) -> list[StoredRow]:
    return list(iter_rows(store, digest))


def page(store: ObjectStore, digest: str, *, after: int | None = None, offset: int = 0,
         limit: int = 100) -> tuple[list[StoredRow], int]:
    """(rows, total): `limit` rows with seq > `after` (keyset), else from position `offset`."""
    index = read_results(store.get_json(digest))
    if isinstance(index, InlineResults):
        rows = index.rows
        if after is not None:
            rows = [r for r in rows if _seq(r) > after]
            return rows[:limit], len(index.rows)
        return rows[offset:offset + limit], len(rows)
    starts, pages, size = index.starts, index.pages, index.page_rows
    if after is not None:
        i = max(0, bisect.bisect_right(starts, after) - 1)
    else:
        i = offset // size if size else 0
    out: list[StoredRow] = []
    skip = 0 if after is not None else offset - i * size
    while i < len(pages) and len(out) < limit:
        rows = _page_rows(store, pages[i])
        if after is not None:
            rows = [r for r in rows if _seq(r) > after]
        else:
            rows = rows[skip:]
            skip = 0
        out.extend(rows[:limit - len(out)])
        i += 1
    return out, index.total
