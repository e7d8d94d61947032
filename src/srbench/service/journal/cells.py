"""The journal writes of one run's cells: dispatching, finished, judged, and the budget they hold.

A multi-call cell (a conversation) writes one `calls` row per model call instead:
`call_dispatching` (request stored, row committed `dispatching` with its reservation, the cell
`dispatching` too, before any byte is sent), `call_finished` (SSE transcript and call record stored,
then the row's state and cost, the reservation settled), and at the end `conversation_finished`
(the conversation record stored, then the cell's terminal state naming it).

Each write is one transaction on the journal's single writer. Objects a row names are written by
the writer first (durable ones behind one barrier per group commit), so a committed row never names
a missing object. The budget (RUN-8) is held in the same transactions: a reservation before a
priced call, settled with the actual cost; an unknown cost keeps its reservation held.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable

from srbench.cas import ObjectStore, digest_json, short
from srbench.schemas.cell import CallState, CellState, TerminalCellState
from srbench.schemas.event import CELL_EVENTS, EventType
from srbench.schemas.event_data import BudgetRefused, CellEvent, EventData
from srbench.service.journal.writer import Journal, Staged, add_event
from srbench.stages.dispatch.calls import Cell


def cell_id(case_id: str, target_id: str) -> str:
    return short(digest_json([case_id, target_id]), 24)


class RunJournalAdapter:
    """The journal writes dispatch needs, for one run. Objects are stored durably before the row."""

    def __init__(self, journal: Journal, run_id: str, store: ObjectStore,
                 on_done: Callable[[str], None] | None = None) -> None:
        """`on_done(cell_id)` is told of a cell's final write once it committed (service/runs/report_rows.py)."""
        self.journal = journal
        self.run_id = run_id
        self.store = store
        self.on_done = on_done

    def _done(self, cell: Cell) -> None:
        if self.on_done is not None:
            self.on_done(cell.cell_id)

    @staticmethod
    def _objects(objects: list[bytes], durable: bool = True) -> Staged | None:
        """The objects a write's rows name, for the journal writer to store first (behind the group's
        durability barrier when they must be on disk before the row commits)."""
        return Staged(objects, durable) if objects else None

    async def dispatching(self, cell: Cell, request: str, objects: list[bytes],
                          reserve_usd: float | None = None) -> bool:
        now = time.time()

        def w(c: sqlite3.Connection) -> bool:
            if reserve_usd is not None and not _reserve(c, self.run_id, reserve_usd):
                add_event(c, self.run_id, "budget_refused", BudgetRefused(cell_id=cell.cell_id, reserve_usd=reserve_usd))
                return False
            c.execute("UPDATE cells SET state='dispatching', request=?, reserved_usd=?, updated_at=? "
                      "WHERE run_id=? AND cell_id=?", (request, reserve_usd, now, self.run_id, cell.cell_id))
            return True
        # the request object is a pure function of the plan and the case (it can be rebuilt), so it
        # need not be fsynced before the send; the commit of the row itself is durable
        return bool(await self.journal.submit(w, self._objects(objects, durable=False)))

    async def finished(self, cell: Cell, state: CellState, call: str | None, error_class: str | None,
                       error: str | None, objects: list[bytes], judge_request: str | None = None,
                       cost_usd: float | None = None, judge_reserve_usd: float | None = None) -> bool:
        now = time.time()

        def w(c: sqlite3.Connection) -> bool:
            # the cell's reservation after this write: released when the cost is known, replaced by the
            # judge's; None keeps it held (an unknown cost). One UPDATE of the cell, not three.
            held = 0.0 if _settle_budget(c, self.run_id, cell.cell_id, cost_usd) else None
            st, ec, er, jr, ok = state, error_class, error, judge_request, True
            if state == "judge_dispatching" and judge_reserve_usd is not None:
                if _reserve(c, self.run_id, judge_reserve_usd):
                    held = judge_reserve_usd
                else:
                    st, ec, jr, ok = "failed", "budget_stop", None, False
                    er = "the judge call's reservation would exceed limits.max_cost_usd; the judge was not called"
            c.execute("UPDATE cells SET state=?, call=?, error_class=?, error=?, judge_request=?, updated_at=?, "
                      "reserved_usd=COALESCE(?, reserved_usd) WHERE run_id=? AND cell_id=?",
                      (st, call, ec, er, jr, now, held, self.run_id, cell.cell_id))
            if st not in ("completed", "judge_dispatching"):
                add_event(c, self.run_id, CELL_EVENTS[st], CellEvent(cell_id=cell.cell_id, case_id=cell.case_id,
                                                                 target_id=cell.target_id, error_class=ec, error=er))
            return ok
        ok = bool(await self.journal.submit(w, self._objects(objects)))
        if state != "judge_dispatching" or not ok:
            self._done(cell)
        return ok

    async def judged(self, cell: Cell, state: TerminalCellState, judge_call: str | None, error_class: str | None,
                     error: str | None, objects: list[bytes], cost_usd: float | None = None) -> None:
        now = time.time()

        def w(c: sqlite3.Connection) -> None:
            _settle(c, self.run_id, cell.cell_id, cost_usd)
            c.execute("UPDATE cells SET state=?, judge_call=?, error_class=?, error=?, updated_at=? "
                      "WHERE run_id=? AND cell_id=?", (state, judge_call, error_class, error, now, self.run_id,
                                                       cell.cell_id))
            if state != "completed":
                add_event(c, self.run_id, CELL_EVENTS[state], CellEvent(cell_id=cell.cell_id, case_id=cell.case_id,
                                                                    target_id=cell.target_id,
                                                                    error_class=error_class, error=error))
        await self.journal.submit(w, self._objects(objects))
        self._done(cell)

    # -- multi-call cells (stages/dispatch/conversations.py) ---------------------------------------
    async def call_dispatching(self, cell: Cell, index: int, role: str, target_id: str, request: str,
                               objects: list[bytes], reserve_usd: float | None = None) -> bool:
        """Store the request, then commit call `index` of the cell `dispatching` (the cell too) with its
        reservation; False (nothing committed) when the reservation does not fit the budget."""
        now = time.time()

        def w(c: sqlite3.Connection) -> bool:
            if reserve_usd is not None and not _reserve(c, self.run_id, reserve_usd):
                add_event(c, self.run_id, "budget_refused", BudgetRefused(cell_id=cell.cell_id, call_index=index,
                                                                          role=role, reserve_usd=reserve_usd))
                return False
            c.execute("INSERT INTO calls(run_id, cell_id, idx, role, target_id, state, request, reserved_usd, "
                      "updated_at) VALUES(?,?,?,?,?,'dispatching',?,?,?)",
                      (self.run_id, cell.cell_id, index, role, target_id, request, reserve_usd, now))
            c.execute("UPDATE cells SET state='dispatching', request=COALESCE(request, ?), updated_at=? "
                      "WHERE run_id=? AND cell_id=?", (request, now, self.run_id, cell.cell_id))
            return True
        return bool(await self.journal.submit(w, self._objects(objects, durable=False)))

    async def call_finished(self, cell: Cell, index: int, state: CallState, call: str, error_class: str | None,
                            objects: list[bytes], cost_usd: float | None = None) -> None:
        """Store the call's objects durably, then commit its state and cost (its reservation settled;
        an unknown cost keeps it held)."""
        now = time.time()

        def w(c: sqlite3.Connection) -> None:
            row = c.execute("SELECT reserved_usd FROM calls WHERE run_id=? AND cell_id=? AND idx=?",
                            (self.run_id, cell.cell_id, index)).fetchone()
            if _settle_held(c, self.run_id, (row["reserved_usd"] or 0.0) if row else 0.0, cost_usd):
                c.execute("UPDATE calls SET reserved_usd=0 WHERE run_id=? AND cell_id=? AND idx=?",
                          (self.run_id, cell.cell_id, index))
            c.execute("UPDATE calls SET state=?, call=?, error_class=?, cost_usd=?, updated_at=? "
                      "WHERE run_id=? AND cell_id=? AND idx=?",
                      (state, call, error_class, cost_usd, now, self.run_id, cell.cell_id, index))
            c.execute("UPDATE cells SET updated_at=? WHERE run_id=? AND cell_id=?", (now, self.run_id, cell.cell_id))
        await self.journal.submit(w, self._objects(objects))

    async def conversation_finished(self, cell: Cell, state: TerminalCellState, call: str, error_class: str | None,
                                    error: str | None, objects: list[bytes], cost_usd: float | None = None) -> None:
        """Store the conversation record (and make every object the cell stored durably), then commit
        the cell's terminal state with `call` naming the record. `cost_usd` (the calls' total, None when
        one is unknown) is for observers (early stop); the calls' costs were settled one by one."""
        now = time.time()

        def w(c: sqlite3.Connection) -> None:
            c.execute("UPDATE cells SET state=?, call=?, error_class=?, error=?, updated_at=? WHERE run_id=? "
                      "AND cell_id=?", (state, call, error_class, error, now, self.run_id, cell.cell_id))
            if state != "completed":
                add_event(c, self.run_id, CELL_EVENTS[state], CellEvent(cell_id=cell.cell_id, case_id=cell.case_id,
                                                                    target_id=cell.target_id, error_class=error_class,
                                                                    error=error))
        await self.journal.submit(w, self._objects(objects))
        self._done(cell)

    async def event(self, type_: EventType, data: EventData) -> None:
        await self.journal.submit(lambda c: add_event(c, self.run_id, type_, data))


def _reserve(c: sqlite3.Connection, run_id: str, amount: float) -> bool:
    """Hold `amount` against the run's cap; False when spent + reserved + amount would exceed it."""
    b = c.execute("SELECT cap_usd, spent_usd, reserved_usd FROM budgets WHERE run_id=?", (run_id,)).fetchone()
    if b is None:
        return True
    if b["spent_usd"] + b["reserved_usd"] + amount > b["cap_usd"]:
        return False
    c.execute("UPDATE budgets SET reserved_usd=reserved_usd+? WHERE run_id=?", (amount, run_id))
    return True


def _settle(c: sqlite3.Connection, run_id: str, cell_id: str, cost_usd: float | None) -> None:
    """A known cost is spent and its reservation released; an unknown cost keeps the reservation held."""
    if _settle_budget(c, run_id, cell_id, cost_usd):
        c.execute("UPDATE cells SET reserved_usd=0 WHERE run_id=? AND cell_id=?", (run_id, cell_id))


def _settle_budget(c: sqlite3.Connection, run_id: str, cell_id: str, cost_usd: float | None) -> bool:
    """The run's side of `_settle`, in one statement: True when the cell's reservation is to be cleared."""
    if cost_usd is None:
        c.execute("UPDATE budgets SET unknown_calls=unknown_calls+1 WHERE run_id=?", (run_id,))
        return False
    c.execute("UPDATE budgets SET spent_usd=spent_usd+?, reserved_usd=MAX(0, reserved_usd-COALESCE("
              "(SELECT reserved_usd FROM cells WHERE run_id=? AND cell_id=?), 0.0)) WHERE run_id=?",
              (cost_usd, run_id, cell_id, run_id))
    return True


def _settle_held(c: sqlite3.Connection, run_id: str, held: float, cost_usd: float | None) -> bool:
    """Spend a known cost and release `held`; True then (the holder's reservation is cleared). An
    unknown cost counts an unknown call and keeps `held` reserved (False)."""
    if cost_usd is None:
        c.execute("UPDATE budgets SET unknown_calls=unknown_calls+1 WHERE run_id=?", (run_id,))
        return False
    c.execute("UPDATE budgets SET spent_usd=spent_usd+?, reserved_usd=MAX(0, reserved_usd-?) WHERE run_id=?",
              (cost_usd, held, run_id))
    return True
