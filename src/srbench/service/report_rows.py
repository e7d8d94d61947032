"""Report rows built while a run goes on, so that its end-of-run report only aggregates (issue 11).

Each cell that reaches a terminal state is queued (`RowBuilder.cell_done`, called by the run's
journal adapter after the cell's row committed). A worker thread takes the queue in batches: it
reads the cells as the journal has them, builds their report rows (stages/report_cells.py
`cell_row`, which grades a completed answer through the memoised grade rule) under one engine
batch (one barrier for the grade objects, one action-cache write), then records the rows in
`report_rows` in one journal transaction, after the objects they name are durable.

`report_rows` is a cache of `cell_row`, nothing more: an entry names the context it was built in
(the plan, the corrections and the installed graders: stages/report.py `row_context`) and the cell's
state, call, error class and judge call, and the report uses it only when all of them still hold.
A crash, a storage fault or a slow worker only means the report computes more rows itself. The run's
entries are deleted once its end-of-run report is built (`forget`): later rebuilds (a regrade, a
correction) read the calls again.
"""

from __future__ import annotations

import json
import logging
import queue
import sqlite3
import threading
from typing import Any

from srbench.cas import ObjectStore
from srbench.rules import Engine
from srbench.service.journal import Journal
from srbench.stages.report import row_context
from srbench.stages.report_cells import MemoEntry, ReportInputs, cell_row, memo_entry

log = logging.getLogger("srbench.service")

TERMINAL_CELL = ("completed", "failed", "cancelled", "ambiguous")
BATCH = 256


class JournalRowMemo:
    """The report's view of `report_rows` (stages/report_cells.py `RowMemo`)."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    def rows(self, run_id: str, ctx: str, target_id: str) -> dict[str, MemoEntry]:
        return {r["cell_id"]: (json.loads(r["basis"]), r["row"], r["scrubbed"], r["grade"], r["turns"])
                for r in self.journal.query("SELECT * FROM report_rows WHERE run_id=? AND target_id=? AND ctx=?",
                                            (run_id, target_id, ctx))}


class _Drain:
    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.done = threading.Event()


class RowBuilder:
    """The worker that builds report rows of finished cells (see the module docstring)."""

    def __init__(self, journal: Journal, store: ObjectStore, engine: Engine) -> None:
        self.journal, self.store, self.engine = journal, store, engine
        self.memo = JournalRowMemo(journal)
        self._queue: queue.Queue[Any] = queue.Queue()
        self._runs: dict[str, tuple[ReportInputs, str] | None] = {}
        self._plans: dict[str, str] = {}
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False

    # -- from the run's tasks --------------------------------------------------------------------
    def begin(self, run_id: str, plan_digest: str) -> None:
        """Build rows for this run's finished cells from now on."""
        with self._lock:
            if self._closed:
                return
            self._runs[run_id] = None
            self._plans[run_id] = plan_digest
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="sr-bench-report-rows", daemon=True)
                self._thread.start()

    def cell_done(self, run_id: str, cell_id: str) -> None:
        if run_id in self._runs:
            self._queue.put((run_id, cell_id))

    def drain(self, run_id: str, timeout_s: float = 600.0) -> None:
        """Block until every cell queued for this run before now has its row (or was given up on)."""
        if run_id not in self._runs or self._thread is None:
            return
        d = _Drain(run_id)
        self._queue.put(d)
        d.done.wait(timeout_s)

    def forget(self, run_id: str) -> None:
        """Stop building for this run and delete its rows (its end-of-run report is built)."""
        self._runs.pop(run_id, None)
        self._plans.pop(run_id, None)
        try:
            self.journal.submit_sync(lambda c: c.execute("DELETE FROM report_rows WHERE run_id=?", (run_id,)))
        except Exception as exc:  # noqa: BLE001 - a cache left behind is only space
            log.warning("report rows of run %s were not deleted: %s", run_id, exc)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            t, self._thread = self._thread, None
        if t is not None:
            self._queue.put(None)
            t.join(timeout=30)

    # -- the worker ------------------------------------------------------------------------------
    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            batch: list[tuple[str, str]] = []
            drains: list[_Drain] = []
            while True:
                if isinstance(item, _Drain):
                    drains.append(item)
                    break                    # everything queued before it is in `batch`
                if item is None:
                    self._queue.put(None)
                    break
                batch.append(item)
                if len(batch) >= BATCH:
                    break
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            by_run: dict[str, list[str]] = {}
            for run_id, cell_id in batch:
                by_run.setdefault(run_id, []).append(cell_id)
            for run_id, cell_ids in by_run.items():
                try:
                    self._build(run_id, cell_ids)
                except Exception as exc:  # noqa: BLE001 - a cache: the report computes these rows itself
                    log.warning("report rows of run %s not built: %s", run_id, exc)
            for d in drains:
                d.done.set()

    def _inputs(self, run_id: str) -> tuple[ReportInputs, str] | None:
        got = self._runs.get(run_id)
        if got is None:
            plan = self._plans.get(run_id)
            if plan is None:
                return None
            got = (ReportInputs.load(self.store, {"plan": plan}), row_context(plan, None, None))
            self._runs[run_id] = got
        return got

    def _build(self, run_id: str, cell_ids: list[str]) -> None:
        got = self._inputs(run_id)
        if got is None:
            return
        ri, ctx = got
        marks = ",".join("?" * len(cell_ids))
        cells = self.journal.query(f"SELECT * FROM cells WHERE run_id=? AND cell_id IN ({marks})",
                                   (run_id, *cell_ids))
        out: list[tuple[Any, ...]] = []
        with self.engine.batch():
            for r in cells:
                if r["state"] not in TERMINAL_CELL:
                    continue
                cell = [r["seq"], r["case_id"], r["target_id"], r["state"], r["call"], r["error_class"],
                        r["judge_call"]]
                built = cell_row(self.engine, ri, r["cell_id"], cell)
                if built.volatile:
                    continue
                b, row, scrubbed, grade, turns = memo_entry(cell, built)
                out.append((run_id, r["target_id"], r["cell_id"], ctx, json.dumps(b), row, scrubbed, grade, turns))
        if out and run_id in self._runs:       # after the batch's barrier: the grades they name are durable

            def w(c: sqlite3.Connection) -> None:
                c.executemany("INSERT OR REPLACE INTO report_rows(run_id, target_id, cell_id, ctx, basis, row, "
                              "scrubbed, grade, turns) VALUES(?,?,?,?,?,?,?,?,?)", out)
            self.journal.submit_sync(w)
