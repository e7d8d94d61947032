"""Sandbox grading while a run dispatches: a pool of threads, each cell graded once (issue 31).

The row builder (service/runs/report_rows.py) hands every finished cell of a sandbox-graded benchmark
(code: LiveCodeBench, SciCode) to this pool, which grades it at once through the service's engine
(stages/report/cells.py `cell_row`: the memoised code-grade rule), records its report row and folds it into
the run's figures so far (service/runs/live.py). The
engine's claims make a key's grade computed by one thread however many ask (rules/engine.py), so the
end-of-run report, which waits for the run's queued cells here (`wait`), only reads rows and grades.

Concurrency: as many threads as the host's grading budget has units (sandbox/capacity.py: the cores
available, cgroup-aware); each job holds 1 unit of that budget while it runs, which Terminal-Bench
trials share (their container's CPU cap), and at most the plan's ``limits.grading_concurrency``
entry for its benchmark when it has one. With a remote backend (Ray) the pool is as wide as the
cluster's CPUs and takes none of this host's. A row that cannot be built is left to the report.
"""

from __future__ import annotations

import logging
import queue
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from srbench.rules import Engine
from srbench.sandbox import capacity
from srbench.service.journal.report_rows import put_memo_rows
from srbench.service.journal.writer import Journal
from srbench.stages.grading.code import remote_slots
from srbench.stages.report.cells import ReportInputs, cell_row, memo_entry

log = logging.getLogger("srbench.service")


@dataclass
class Job:
    run_id: str
    ctx: str
    inputs: ReportInputs
    cell_id: str
    cell: list[Any]
    limit: threading.Semaphore | None        # the plan's cap for the cell's benchmark, if any


class GradePool:
    """Threads that grade finished cells of sandbox benchmarks (see the module docstring)."""

    def __init__(self, journal: Journal, engine: Engine, budget: capacity.Budget | None = None,
                 fold: Callable[[str, list[tuple[str, str]]], None] | None = None) -> None:
        """`fold(run_id, [(target_id, row JSON)])` is told of each row once it is recorded (the run's live
        figures: service/runs/live.py)."""
        self.journal, self.engine, self.fold = journal, engine, fold
        self._budget = budget
        self._queue: queue.Queue[Job | None] = queue.Queue()
        self._threads: list[threading.Thread] = []
        self._pending: dict[str, int] = {}
        self._limits: dict[tuple[str, str], threading.Semaphore] = {}
        self._active: set[str] = set()
        self._cond = threading.Condition()
        self._closed = False
        self.graded = 0

    @property
    def budget(self) -> capacity.Budget:
        return self._budget or capacity.GRADING

    def begin(self, run_id: str) -> None:
        with self._cond:
            self._active.add(run_id)

    def submit(self, run_id: str, ctx: str, ri: ReportInputs, cell_id: str, cell: list[Any]) -> None:
        bench = ri.cases[cell[1]].benchmark
        cap = (ri.plan.limits.grading_concurrency or {}).get(bench)
        with self._cond:
            if run_id not in self._active:
                return
            self._pending[run_id] = self._pending.get(run_id, 0) + 1
            limit = None
            if cap:
                limit = self._limits.setdefault((run_id, bench), threading.Semaphore(int(cap)))
            n = max(1, int(self.budget.capacity), remote_slots() or 0)
            while len(self._threads) < n:
                t = threading.Thread(target=self._work, name=f"sr-bench-grade-{len(self._threads)}", daemon=True)
                self._threads.append(t)
                t.start()
        self._queue.put(Job(run_id, ctx, ri, cell_id, cell, limit))

    def pending(self, run_id: str) -> int:
        with self._cond:
            return self._pending.get(run_id, 0)

    def wait(self, run_id: str, timeout_s: float) -> bool:
        """Block until every cell submitted for this run is graded, or the pool closed (False: the
        timeout came first)."""
        with self._cond:
            return self._cond.wait_for(lambda: self._closed or not self._pending.get(run_id), timeout_s)

    def forget(self, run_id: str) -> None:
        """Grade nothing more for this run (queued jobs are dropped as they come up)."""
        with self._cond:
            self._active.discard(run_id)
            self._limits = {k: v for k, v in self._limits.items() if k[0] != run_id}

    def close(self) -> None:
        """Queued cells are dropped (their report grades them later); running ones finish."""
        with self._cond:
            self._closed = True
            self._active.clear()
            self._cond.notify_all()
        for _ in self._threads:
            self._queue.put(None)
        for t in self._threads:
            t.join(timeout=30)
        self._threads = []

    # -- the threads -----------------------------------------------------------------------------
    def _work(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                return
            try:
                if job.run_id in self._active:
                    self._grade(job)
            except Exception as exc:  # noqa: BLE001 - a cache: the report builds this row itself
                log.warning("cell %s of run %s not graded ahead of the report: %s", job.cell_id, job.run_id, exc)
            finally:
                with self._cond:
                    left = self._pending.get(job.run_id, 0) - 1
                    if left > 0:
                        self._pending[job.run_id] = left
                    else:
                        self._pending.pop(job.run_id, None)
                    self._cond.notify_all()

    def _grade(self, job: Job) -> None:
        if job.limit is not None:
            job.limit.acquire()
        try:
            # one barrier per cell, before its row; a remote backend's jobs take none of this host's cores
            with self.budget.hold(0 if remote_slots() else 1), self.engine.batch():
                built = cell_row(self.engine, job.inputs, job.cell_id, job.cell)
        finally:
            if job.limit is not None:
                job.limit.release()
        self.graded += 1
        if built.volatile or job.run_id not in self._active:
            return
        basis, row, scrubbed, grade, turns = memo_entry(job.cell, built)
        values = (job.run_id, job.cell[2], job.cell_id, job.ctx, *basis, row, scrubbed, grade, turns)

        def w(c: sqlite3.Connection) -> None:
            put_memo_rows(c, [values])
        self.journal.submit_sync(w)
        if self.fold is not None:
            self.fold(job.run_id, [(job.cell[2], row)])
