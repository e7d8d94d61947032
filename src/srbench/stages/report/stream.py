"""Streaming pieces of the report build, so that its memory does not grow with the run (issue 11).

The report is built one target at a time; each target's rows are spilled here as canonical JSON
(the row, and the row without its volatile fields) and dropped. `RowSpill.finish` then reads the
rows back in seq order once: it writes the results pages from the stored bytes (no second
encoding) and feeds the report's content digest, which hashes exactly the bytes
``content_digest(report | {"rows": rows})`` would (the rows are spliced into the report's canonical
JSON where the key ``rows`` sorts), so the digest does not change with the way it is built.

The spill is an anonymous temporary file outside the store: scratch space, gone when the build ends
(a build cut short leaves nothing the store or the journal depends on).
"""

from __future__ import annotations

import heapq
import json
import os
import secrets
import sys
import tempfile
from array import array
from collections.abc import Iterable, Iterator
from typing import Any

import blake3
import orjson
from pydantic import JsonValue

from srbench.cas import ObjectStore
from srbench.cas.digest import canonical_json
from srbench.schemas.results import ResultRow, ResultsIndex, RunCells, RunCellsPart, StoredRow
from srbench.stages.plan.identity import scrub
from srbench.stages.report.results import PAGE_ROWS

_PAGE_HEAD = b'{"kind":"results_page","rows":['
_PAGE_TAIL = b'],"schema":1}'


def iter_cells(data: bytes) -> Iterator[tuple[str, list[Any]]]:
    """The (cell id, cell) entries of a cells object (canonical JSON: no whitespace), one at a time,
    without building the whole map."""
    text = data.decode()
    del data
    dec = json.JSONDecoder()
    if text[1:2] == "}":
        return
    i = 1
    while True:
        key, i = dec.raw_decode(text, i)
        value, i = dec.raw_decode(text, i + 1)       # after the ':'
        yield key, value
        if text[i] == "}":
            return
        i += 1                                       # the ','


class CellSource:
    """A report's cells one target at a time, in seq order. `cells` is the map itself, the digest of
    one object holding it (read entry by entry, the repeated strings shared), or the digest of a
    `run_cells` index naming one `run_cells_part` object per target (service/runs/manager.py: a finished
    run's), so that only one target's cells are in memory at a time."""

    def __init__(self, store: ObjectStore, cells: dict[str, list[Any]] | str, targets: list[str]) -> None:
        self.store = store
        self.parts: dict[str, str] | None = None
        self.grouped: dict[str, list[tuple[str, list[Any]]]] = {tid: [] for tid in targets}
        if isinstance(cells, str):
            data = store.get_bytes(cells)
            if data.startswith(b'{"kind":"run_cells",'):
                self.parts = RunCells.model_validate_json(data).targets
                return
            entries: Iterable[tuple[str, list[Any]]] = iter_cells(data)
            del data
        else:
            entries = cells.items()
        for cell_id, cell in entries:
            cell[1:4] = [sys.intern(x) for x in cell[1:4]]
            if cell[5] is not None:
                cell[5] = sys.intern(cell[5])
            self.grouped[cell[2]].append((cell_id, cell))
        for cs in self.grouped.values():
            cs.sort(key=lambda kv: kv[1][0])

    def target(self, tid: str) -> list[tuple[str, list[Any]]]:
        if self.parts is None:
            return self.grouped.pop(tid, [])
        digest = self.parts.get(tid)
        if digest is None:
            return []
        data = orjson.loads(self.store.get_bytes(digest))
        cells = data.pop("cells", None)       # its envelope validated; each cell's fields where its row is built
        RunCellsPart.model_validate(data | {"cells": []})
        if not isinstance(cells, list):
            raise ValueError(f"run cells part {digest} has no list of cells")
        return [(str(c[0]), c[1:]) for c in cells]


def write_run_cells(store: ObjectStore, rows: Iterable[tuple[Any, ...]]) -> str:
    """The `run_cells` index of (cell_id, seq, case_id, target_id, ...) rows ordered by target and seq,
    one part per target (objects without a sync each: the report build ends with one barrier)."""
    parts: dict[str, str] = {}
    buf: list[list[JsonValue]] = []
    current: str | None = None

    def flush() -> None:
        if current is not None:      # `RunCellsPart`'s JSON, built, not validated: the rows are the journal's own
            part = {"kind": "run_cells_part", "schema": 1, "target_id": current, "cells": buf}
            parts[current] = store.put_json(part, durable=False)
    for r in rows:
        if r[3] != current:
            flush()
            current, buf = r[3], []
        buf.append(list(r))
    flush()
    return store.put_json(RunCells(targets=parts).model_dump(mode="json", by_alias=True), durable=False)


READ_CHUNK = 1 << 16      # bytes one read of a spill segment takes (a read per row released the GIL per row)


class RowSpill:
    """Rows of one report build, in any target order; read back in seq order. The encoded rows are
    appended to a scratch file; only their (seq, offset, lengths) stay in memory, as arrays. Each `add`
    or `add_raw` writes one segment (a target's rows, in seq order as the build gives them); reading back
    merges the segments, each read in chunks of `READ_CHUNK` (a segment out of seq order: every row is
    sorted and read on its own)."""

    def __init__(self) -> None:
        self.file = tempfile.TemporaryFile(prefix="sr-bench-report-", suffix=".spill")
        self.seqs = array("q")
        self.offsets = array("q")
        self.full_lens = array("q")
        self.scrubbed_lens = array("q")
        self.pos = 0
        self.total = 0
        self.segments: list[tuple[int, int]] = []      # (first row, end) of each add / add_raw

    def _append(self, seq: int, full: bytes, scrubbed: bytes) -> None:
        self.file.write(full)
        self.file.write(scrubbed)
        self.seqs.append(seq)
        self.offsets.append(self.pos)
        self.full_lens.append(len(full))
        self.scrubbed_lens.append(len(scrubbed))
        self.pos += len(full) + len(scrubbed)
        self.total += 1

    def add(self, rows: list[ResultRow]) -> None:
        first = self.total
        for row in rows:
            r = row.dump()
            self._append(row.seq, canonical_json(r), canonical_json(scrub(r)))
        self._segment(first)

    def add_raw(self, rows: list[tuple[int, str, str]]) -> None:
        """Rows already encoded: (seq, canonical JSON, canonical JSON without the volatile fields)."""
        first = self.total
        for seq, full, scrubbed in rows:
            self._append(seq, full.encode(), scrubbed.encode())
        self._segment(first)

    def _segment(self, first: int) -> None:
        if self.total > first:
            self.segments.append((first, self.total))

    def _in_order(self) -> Iterator[tuple[int, bytes, bytes]]:
        self.file.flush()
        fd = self.file.fileno()
        seqs = self.seqs
        if all(all(seqs[i] < seqs[i + 1] for i in range(a, b - 1)) for a, b in self.segments):
            for _, i, data in heapq.merge(*(self._segment_rows(fd, a, b) for a, b in self.segments)):
                n = self.full_lens[i]
                yield seqs[i], data[:n], data[n:]
            return
        for i in sorted(range(self.total), key=seqs.__getitem__):
            n = self.full_lens[i]
            data = os.pread(fd, n + self.scrubbed_lens[i], self.offsets[i])
            yield seqs[i], data[:n], data[n:]

    def _segment_rows(self, fd: int, first: int, end: int) -> Iterator[tuple[int, int, bytes]]:
        """(seq, row, its bytes) of one segment, in order, read `READ_CHUNK` bytes at a time."""
        buf, start = b"", self.offsets[first]
        for i in range(first, end):
            off, n = self.offsets[i], self.full_lens[i] + self.scrubbed_lens[i]
            if off + n > start + len(buf):
                start, buf = off, os.pread(fd, max(READ_CHUNK, n), off)
            yield self.seqs[i], i, buf[off - start:off - start + n]

    def rows(self) -> Iterator[StoredRow]:
        """Every row in seq order, decoded (the paired section reads them)."""
        for _, full, _ in self._in_order():
            yield json.loads(full)

    def finish(self, store: ObjectStore, report: dict[str, JsonValue], page_rows: int = PAGE_ROWS) -> tuple[str, str]:
        """(results digest, content digest of `report | {"rows": rows}`), one pass in seq order. The
        results object is the one `results.write_results` writes for the same rows."""
        marker = "sr-bench-rows-" + secrets.token_hex(16)
        head, tail = canonical_json(scrub(report | {"rows": marker})).split(json.dumps(marker).encode(), 1)
        h = blake3.blake3(head + b"[")
        pages: list[str] = []
        starts: list[int] = []
        buf: list[bytes] = []
        first = True
        for seq, full, scrubbed in self._in_order():
            if not first:
                h.update(b",")
            h.update(scrubbed)
            first = False
            if not buf:
                starts.append(seq)
            buf.append(full)
            if len(buf) >= page_rows:
                pages.append(store.put_bytes(_PAGE_HEAD + b",".join(buf) + _PAGE_TAIL, durable=False))
                buf = []
        if buf:
            pages.append(store.put_bytes(_PAGE_HEAD + b",".join(buf) + _PAGE_TAIL, durable=False))
        h.update(b"]" + tail)
        index = ResultsIndex(total=self.total, page_rows=page_rows, starts=starts, pages=pages)
        results = store.put_json(index.model_dump(mode="json", by_alias=True), durable=False)
        return results, h.hexdigest()

    def close(self) -> None:
        self.file.close()
