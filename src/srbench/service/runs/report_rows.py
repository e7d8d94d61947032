"""Report rows built while a run goes on, so that its end-of-run report only aggregates (issue 11).

Each cell that reaches a terminal state is queued (`RowBuilder.cell_done`, called by the run's
journal adapter after the cell's row committed). A thread takes the queue in batches: it reads the
cells as the journal has them and has their report rows built (stages/report/cells.py `cell_row`,
which grades a completed answer through the memoised grade rule) by a worker process
(service/runs/report_rows_worker.py: grading is CPU work that would otherwise take turns with the event
loop on the GIL) under one engine batch, so one barrier makes the batch's grade objects durable;
then it records the batch's action-cache entries and rows in one journal transaction, which commits
while the next batch builds. A batch gathers cells until `BATCH_S` after the previous one began (a drain
ends it at once), so the worker adds about one barrier a second, and a worker that fell behind takes
every queued cell at once instead of idling while they wait (issue 42). The worker process is started
as a run begins and answers `ready` once it has imported (~0.5 s; seconds on a busy host): the thread
waits for it up to `WORKER_WAIT_S` after its start (rows built in the service take the GIL from the
dispatching loop: at zero latency they were the largest share of a short run's CPU, issue 42), then builds
the rows itself until it is ready, so the run's live figures never wait longer (issue 41). A store the
worker cannot open (not on the local filesystem), or a worker that died, means the rows are built
on that thread instead; a row the worker could not build is built there too. A cell of a benchmark
graded in a sandbox goes to the grading pool (service/runs/grading.py) instead, which grades it at once on
every core; a run with such cells has its end-of-run report wait for them (`drain`), so the report
only aggregates (issue 31).

`report_rows` is a cache of `cell_row`, nothing more: an entry names the context it was built in
(the plan, the corrections and the installed graders: stages/report/rule.py `row_context`, the report
rule's input cache) and the cell's
state, call, error class and judge call, and the report uses it only when all of them still hold.
A crash, a storage fault or a slow worker only means the report computes more rows itself. The run's
entries are deleted once its end-of-run report is built (`forget`): later rebuilds (a regrade, a
correction) read the calls again.
"""

from __future__ import annotations

import concurrent.futures
import json
import logging
import queue
import sqlite3
import threading
import time
from typing import Any

from srbench.benchmarks import get as get_benchmark
from srbench.cas import ObjectStore
from srbench.rules import Engine
from srbench.schemas.cell import TERMINAL_CELL_STATES
from srbench.service.journal.cell_rows import cells_by_id
from srbench.service.journal.report_rows import delete_memo_rows, memo_rows, put_memo_rows
from srbench.service.journal.writer import Journal, write_action_entries
from srbench.service.runs import report_rows_worker as worker
from srbench.service.runs.grading import GradePool
from srbench.service.runs.live import LiveFigures
from srbench.stages.report.cells import MemoEntry, ReportInputs, cell_row, memo_entry
from srbench.stages.report.rule import row_context

log = logging.getLogger("srbench.service")

TERMINAL_CELL = TERMINAL_CELL_STATES
DRAIN_MIN = 256        # fewer cells left to build at a run's end: its report builds them itself, no waiting
BATCH = 1024           # cells per batch, at most (2,048 held ~7 MiB more in the worker for the same CPU, issue 42)
BATCH_S = 1.0          # and the time a batch gathers cells: one barrier a second at most, beside dispatch's
SANDBOX_BATCH_S = 0.1  # a run graded in a sandbox: its cells reach the grading pool sooner
WORKER_WAIT_S = 1.5    # the longest the rows wait for a starting worker process before the thread builds them


class JournalRowMemo:
    """The report's view of `report_rows` (stages/report/cells.py `RowMemo`)."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    def rows(self, run_id: str, ctx: str, target_id: str) -> dict[str, MemoEntry]:
        return memo_rows(self.journal, run_id, ctx, target_id)


class _Drain:
    """A marker in the queue: every cell queued before it is done (then, with `forget`, the run's rows
    are deleted; with `stop`, the worker process ends if every run left has ended)."""

    def __init__(self, run_id: str, forget: bool = False, stop: bool = False) -> None:
        self.run_id = run_id
        self.forget = forget
        self.stop = stop
        self.done = threading.Event()


class RowBuilder:
    """The worker that builds report rows of finished cells (see the module docstring)."""

    def __init__(self, journal: Journal, store: ObjectStore, engine: Engine) -> None:
        self.journal, self.store, self.engine = journal, store, engine
        self.memo = JournalRowMemo(journal)
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()   # C-level: no Condition per put
        self._runs: dict[str, ReportInputs | None] = {}
        self._plans: dict[str, str] = {}
        self._pending: dict[str, int] = {}       # cells queued and not built yet, per run
        self._ended: set[str] = set()            # runs whose dispatch is over: no cell of theirs is to come
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._pool: worker.WorkerProcess | None = None
        self._pool_lock = threading.Lock()      # starting and stopping the worker process
        self._no_worker = False                  # it could not start, or died: rows are built on the thread
        self._pool_started = 0.0                 # when the worker process was started (time.monotonic)
        self.live = LiveFigures()                # each built row folded into the run's figures so far
        self.grades = GradePool(journal, engine, fold=self.live.fold)      # a sandbox-graded row too
        self._sandboxed: set[str] = set()        # runs with cells graded in a sandbox
        self._writes: list[concurrent.futures.Future[Any]] = []     # batches' rows being recorded

    # -- from the run's tasks --------------------------------------------------------------------
    def begin(self, run_id: str, plan_digest: str) -> None:
        """Build rows for this run's finished cells from now on."""
        with self._lock:
            if self._closed:
                return
            self._runs[run_id] = None
            self._plans[run_id] = plan_digest
            self.live.begin(run_id)
            benchmarks = list(self.store.get_json(plan_digest).get("grader_versions", {}))
            if any(_sandboxed(b) for b in benchmarks):
                self._sandboxed.add(run_id)
                self.grades.begin(run_id)
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="sr-bench-report-rows", daemon=True)
                self._thread.start()
        if not all(_sandboxed(b) for b in benchmarks):     # it imports while the run starts (rows are built here
            threading.Thread(target=self._start_worker, daemon=True).start()    # until it is ready), off the loop

    def cell_done(self, run_id: str, cell_id: str) -> None:
        if run_id in self._runs:
            with self._lock:
                self._pending[run_id] = self._pending.get(run_id, 0) + 1
            self._queue.put((run_id, cell_id))

    def drain(self, run_id: str, timeout_s: float = 600.0) -> None:
        """Block until every cell queued for this run before now has its row (or was given up on);
        at once when fewer than DRAIN_MIN are left (the report builds those itself), unless the run
        has cells graded in a sandbox: those are graded by the pool, on every core, before the report."""
        if run_id not in self._runs or self._thread is None:
            return
        sandboxed = run_id in self._sandboxed
        if not sandboxed and self._pending.get(run_id, 0) < max(1, DRAIN_MIN):
            return
        deadline = time.monotonic() + timeout_s
        d = _Drain(run_id)
        self._queue.put(d)
        d.done.wait(timeout_s)
        if sandboxed:
            self.grades.wait(run_id, max(0.0, deadline - time.monotonic()))

    def ended(self, run_id: str) -> None:
        """The run's dispatch is over. Once every run left has ended, the worker process stops after the
        cells queued so far, before the end-of-run report is built: the report's memory and the worker's
        are not held at once (issue 42, item 3; a new run starts it again)."""
        if run_id not in self._runs or self._thread is None:
            return
        with self._lock:
            self._ended.add(run_id)
        self._queue.put(_Drain(run_id, stop=True))

    def forget(self, run_id: str) -> None:
        """Stop building for this run; its rows are deleted by the worker thread (its end-of-run report
        is built), without keeping the run's task waiting."""
        self._runs.pop(run_id, None)
        self._plans.pop(run_id, None)
        self.live.forget(run_id)
        self._sandboxed.discard(run_id)
        self.grades.forget(run_id)
        with self._lock:
            self._pending.pop(run_id, None)
            self._ended.discard(run_id)
        if self._thread is not None:
            self._queue.put(_Drain(run_id, forget=True))

    def _delete(self, run_id: str) -> None:
        try:
            self.journal.submit_sync(lambda c: delete_memo_rows(c, run_id))
        except Exception as exc:  # noqa: BLE001 - a cache left behind is only space
            log.warning("report rows of run %s were not deleted: %s", run_id, exc)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            t, self._thread = self._thread, None
        if t is not None:
            self._queue.put(None)
            t.join(timeout=30)
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()
        self.grades.close()

    # -- the worker ------------------------------------------------------------------------------
    def _start_worker(self) -> None:
        """The worker process, started as a run begins (it stops when every run left has ended: `_stop_idle`)."""
        with self._pool_lock:
            if self._pool is not None or self._no_worker or self._closed or not self.store.local:
                return
            try:
                self._pool = worker.WorkerProcess(self.store, self.journal.path)
                self._pool_started = time.monotonic()
            except OSError as exc:
                log.warning("no report rows worker (%s); rows are built in the service", exc)
                self._no_worker = True

    def _stop_idle(self) -> None:
        """No run left that finishes cells: the worker process ends, and with it what it held (the runs'
        inputs, its heap), so an idle service is the size it was before its first run (issue 42)."""
        with self._lock:
            if any(run_id not in self._ended for run_id in self._runs):
                return
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    def _work(self) -> None:
        last_start = 0.0
        while True:
            item = self._queue.get()
            if item is None:
                return
            batch: list[tuple[str, str]] = []
            drains: list[_Drain] = []
            started = time.monotonic()
            while True:
                if isinstance(item, _Drain):
                    drains.append(item)
                    break                    # everything queued before it is in `batch`
                if item is None:
                    self._queue.put(None)
                    break
                batch.append(item)
                # a batch gathers until BATCH_S after the last one began: a worker that is behind takes
                # what is queued at once and is never left idle while cells wait
                gather = SANDBOX_BATCH_S if batch[0][0] in self._sandboxed else BATCH_S
                wait = last_start + gather - time.monotonic()
                if len(batch) >= BATCH:
                    break
                try:
                    item = self._queue.get(timeout=wait) if wait > 0 else self._queue.get_nowait()
                except queue.Empty:
                    break
            last_start = started
            if batch:
                self._start_worker()
                self._run_batch(batch)
            for d in drains:
                self._settle_writes()       # every row queued before the drain is in the journal
                if d.forget:
                    self._delete(d.run_id)
                if d.forget or d.stop:
                    self._stop_idle()
                d.done.set()

    def _run_batch(self, batch: list[tuple[str, str]]) -> None:
        by_run: dict[str, list[str]] = {}
        for run_id, cell_id in batch:
            by_run.setdefault(run_id, []).append(cell_id)
        for run_id, cell_ids in by_run.items():
            try:
                self._build(run_id, cell_ids)
            except Exception as exc:  # noqa: BLE001 - a cache: the report computes these rows itself
                log.warning("report rows of run %s not built: %s", run_id, exc)
            with self._lock:
                if run_id in self._pending:
                    self._pending[run_id] -= len(cell_ids)

    def _packs_of(self, todo: list[tuple[str, list[Any]]]) -> list[str] | None:
        """The packs this process's index lists the cells' calls (and judge calls) in: the worker indexes only
        those (report_rows_worker.py `_index_packs`); None on a store without packs."""
        packs = self.store.packs
        if packs is None:
            return None
        return sorted({p.pack for _, cell in todo for d in (cell[4], cell[6]) if d
                       for p in packs.places(d, look=False)})

    def _settle_writes(self) -> None:
        """Wait for the batches' journal writes queued so far (they commit while the next batch builds)."""
        writes, self._writes = self._writes, []
        for fut in writes:
            try:
                fut.result()
            except Exception as exc:  # noqa: BLE001 - a cache: the report computes these rows itself
                log.warning("report rows not recorded: %s", exc)

    def _inputs(self, run_id: str) -> ReportInputs | None:
        """The run's report inputs in this process (only for rows the worker did not build)."""
        got = self._runs.get(run_id)
        if got is None:
            plan = self._plans.get(run_id)
            if plan is None:
                return None
            got = self._runs[run_id] = ReportInputs.load(self.store, {"plan": plan})
        return got

    def _build(self, run_id: str, cell_ids: list[str]) -> None:
        plan = self._plans.get(run_id)
        if plan is None:
            return
        ctx = row_context({"plan": plan})
        todo: list[tuple[str, list[Any]]] = []
        for i in range(0, len(cell_ids), 500):
            part = cell_ids[i:i + 500]
            todo += [(r.cell_id, [r.seq, r.case_id, r.target_id, r.state, r.call, r.error_class, r.judge_call])
                     for r in cells_by_id(self.journal, run_id, part) if r.state in TERMINAL_CELL]
        if run_id in self._sandboxed and todo:       # graded in a sandbox: to the pool, at once
            ri0 = self._inputs(run_id)
            if ri0 is not None:
                mine = [t for t in todo if _sandboxed(ri0.cases[t[1][1]].benchmark)]
                for cell_id, cell in mine:
                    self.grades.submit(run_id, ctx, ri0, cell_id, cell)
                todo = [t for t in todo if not _sandboxed(ri0.cases[t[1][1]].benchmark)]
        if not todo:
            return
        entries: list[Any] = []
        rows: list[tuple[str, Any]] = []
        left = todo
        pool = self._pool
        if pool is not None and not pool.ready(self._pool_started + WORKER_WAIT_S - time.monotonic()):
            pool = None                 # still starting after WORKER_WAIT_S: these rows are built here, at once
        if pool is not None:
            try:
                entries, rows, failed = pool.build(plan, todo, self._packs_of(todo))
                left = [t for t in todo if t[0] in set(failed)]
            except Exception as exc:  # noqa: BLE001 - the worker died: build here from now on
                log.warning("report rows worker stopped (%s); rows are built in the service", exc)
                self._pool, self._no_worker = None, True
                pool.close()
        ri = self._inputs(run_id) if left else None
        if ri is not None:
            with self.engine.batch():       # its own barrier and action-cache write at the end
                for cell_id, cell in left:
                    built = cell_row(self.engine, ri, cell_id, cell)
                    if not built.volatile:
                        rows.append((cell_id, memo_entry(cell, built)))
        target_of = {cell_id: cell[2] for cell_id, cell in todo}
        self.live.fold(run_id, [(target_of[cell_id], entry[1]) for cell_id, entry in rows])
        out = [(run_id, target_of[cell_id], cell_id, ctx, *b, row, scrubbed, grade, turns)
               for cell_id, (b, row, scrubbed, grade, turns) in rows]
        last = [(rule, subject, key, output, json.dumps(i, sort_keys=True), json.dumps(p, sort_keys=True), v)
                for rule, subject, key, output, i, p, v in entries]
        if run_id not in self._runs:
            return

        def w(c: sqlite3.Connection) -> None:   # the worker's grade objects are durable already
            write_action_entries(c, last)
            put_memo_rows(c, out)
        if len(self._writes) > 2:           # at most two batches' writes in flight
            self._settle_writes()
        self._writes.append(self.journal.submit_nowait(w))


def _sandboxed(benchmark: str) -> bool:
    try:
        return bool(getattr(get_benchmark(benchmark), "needs_sandbox", False))
    except Exception:  # noqa: BLE001 - an unknown benchmark is not graded in a sandbox here
        return False
