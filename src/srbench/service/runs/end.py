"""The end of a run, recorded in one transaction, and recorded even after the store was full.

`end_write` is that transaction: the run's terminal status and error, and every cell still
`dispatching`/`judge_dispatching` made ambiguous (its call may have been sent and billed; its
outcome was not recorded), each with an event; so is every call of a conversation still in flight. Pending cells stay pending: they were never sent,
and `recover-plan --mode undispatched` continues them.

`Endings` keeps the ends that could not be written because of a storage fault (a full disk, an
I/O error): the run views show them at once (`status` as it will be recorded, and `end_recorded:
false`; the calls pages show its cells in flight as the end will record them, by the same rule), and the write is retried with backoff until it lands — freeing space is enough, no
restart is needed; a route that reads the run's cells to decide (recover-plan, recover) first asks
for the retry at once and waits for it (`Endings.settle`), so what it answers does not change a moment
later. A service that stops first leaves the run to the restart recovery, which makes the same
classification.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from srbench.errors import SrBenchError, storage_fault
from srbench.schemas.cell import CALL_IN_FLIGHT, IN_FLIGHT, TerminalRunStatus
from srbench.service.journal.cell_rows import CallRow, CellRow
from srbench.service.journal.run_end import end_run
from srbench.service.journal.writer import Journal
from srbench.service.runs.state import RunState

log = logging.getLogger("srbench.service")
MAX_RETRY_DELAY_S = 2.0


def _why(fault: SrBenchError | None) -> str:
    """The error a cell in flight is left with when its run ends."""
    return (f"{fault.message.split(';')[0]} while this call was in flight; it may have been billed" if fault
            else "the run ended while this call was in flight; it may have been billed")


def end_write(run_id: str, status: TerminalRunStatus, error: str | None, fault: SrBenchError | None = None) -> Any:
    """The journal write that ends a run (see the module docstring)."""
    about = None if fault is None else (fault.code, fault.message)
    why = _why(fault)
    return lambda c: end_run(c, run_id, status, error, why, about)


class Endings:
    """Run ends waiting for the store to take writes again: run id → (status, error)."""

    def __init__(self) -> None:
        self.unrecorded: dict[str, tuple[TerminalRunStatus, str | None]] = {}
        self._why: dict[str, str] = {}              # what each unrecorded end leaves its cells in flight with
        self.closing = False
        self._retry_now: dict[str, asyncio.Event] = {}
        self._failures: dict[str, int] = {}            # failed attempts to record each unrecorded end

    async def record(self, journal: Journal, run_id: str, status: TerminalRunStatus, error: str | None,
                     fault: SrBenchError | None = None) -> bool:
        """Write the end; after a storage fault, show it and retry until it lands. False when the service
        stopped first (the restart recovery ends the run then)."""
        delay = 0.1
        while True:
            try:
                await journal.submit(end_write(run_id, status, error, fault))
            except Exception as exc:
                problem = storage_fault(exc)
                if problem is None:
                    raise
                if run_id not in self.unrecorded:
                    log.warning("run %s ended %s but the journal cannot record it yet: %s", run_id, status,
                                problem.message)
                self._why[run_id] = _why(fault)
                self.unrecorded[run_id] = (status, error)
                self._failures[run_id] = self._failures.get(run_id, 0) + 1
                if self.closing:
                    return False
                now = self._retry_now.setdefault(run_id, asyncio.Event())
                try:
                    await asyncio.wait_for(now.wait(), delay)      # a backoff `settle` can cut short
                except TimeoutError:
                    pass
                now.clear()
                delay = min(delay * 2, MAX_RETRY_DELAY_S)
                continue
            self.unrecorded.pop(run_id, None)
            self._why.pop(run_id, None)
            self._retry_now.pop(run_id, None)
            self._failures.pop(run_id, None)
            return True

    async def settle(self, run_id: str, timeout_s: float = 10.0) -> bool:
        """Retry `run_id`'s unrecorded end once, now, and wait for that attempt: True once the journal holds
        the run's end (its in-flight cells made ambiguous), False if the store still refuses it."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        failed = self._failures.get(run_id, 0)
        while (run_id in self.unrecorded and self._failures.get(run_id, 0) == failed and not self.closing
               and loop.time() < deadline):
            now = self._retry_now.get(run_id)
            if now is not None:
                now.set()
            await asyncio.sleep(0.01)
        return run_id not in self.unrecorded

    def overlay(self, view: RunState) -> RunState:
        """A run view with its unrecorded end, if it has one: status, error and progress as they will be
        recorded (no cell of an ended run is shown running)."""
        end = self.unrecorded.get(view.id)
        if end is None:
            return view
        status, error = end
        progress = view.progress
        if progress.running:                # in flight when the store filled: ambiguous once recorded (IN_FLIGHT)
            progress = progress.model_copy(update={"ambiguous": progress.ambiguous + progress.running, "running": 0})
        return view.model_copy(update={"status": status, "error": error, "end_recorded": False,
                                       "progress": progress})

    def cell(self, row: CellRow) -> CellRow:
        """A cell as its run's unrecorded end will record it (in flight: ambiguous, `schemas.cell.IN_FLIGHT`),
        else as the journal holds it: what the calls pages show agrees with the run view's progress."""
        why = self._why.get(row.run_id)
        if why is None or row.state not in IN_FLIGHT or row.run_id not in self.unrecorded:
            return row
        return row.model_copy(update={"state": "ambiguous", "error_class": IN_FLIGHT[row.state], "error": why})

    def call(self, row: CallRow) -> CallRow:
        """One call of a conversation as its run's unrecorded end will record it (`schemas.cell.CALL_IN_FLIGHT`)."""
        if row.run_id not in self.unrecorded or row.state not in CALL_IN_FLIGHT:
            return row
        return row.model_copy(update={"state": "ambiguous", "error_class": CALL_IN_FLIGHT[row.state]})
