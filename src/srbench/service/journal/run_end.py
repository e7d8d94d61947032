"""The journal writes that end a run (service/runs/end.py decides when): its terminal status, its cells and
calls still in flight made ambiguous, and the early-stop record; each a function of the writer's connection."""

from __future__ import annotations

import sqlite3
import time

from srbench import TERMINAL_STATUSES as TERMINAL
from srbench.schemas.cell import CALL_IN_FLIGHT, IN_FLIGHT, TerminalRunStatus
from srbench.schemas.early_stop import EarlyStopRecord
from srbench.schemas.event_data import CellEvent, EarlyStopRecorded, RunEnded, StorageFault
from srbench.service.journal.runs import set_extra
from srbench.service.journal.writer import Journal, add_event


def terminal(c: sqlite3.Connection, run_id: str, status: TerminalRunStatus, error: str | None) -> None:
    """The run's terminal status and error (unless it already ended), with its event."""
    now = time.time()
    c.execute("UPDATE runs SET status=?, error=?, finished_at=?, updated_at=? WHERE id=? AND status NOT IN "
              f"({','.join('?' * len(TERMINAL))})", (status, error, now, now, run_id, *TERMINAL))
    add_event(c, run_id, status, RunEnded(error=error) if error else RunEnded())


def end_run(c: sqlite3.Connection, run_id: str, status: TerminalRunStatus, error: str | None, why: str,
            fault: tuple[str, str] | None) -> None:
    """End the run: every cell still in flight becomes ambiguous with `why` (an event each), every call
    in flight too (the rule: `schemas.cell.IN_FLIGHT`); a storage `fault` (code, message) is an event with what it left; then `terminal`."""
    now = time.time()
    states, classes = list(IN_FLIGHT), [x for pair in IN_FLIGHT.items() for x in pair]
    marks = ",".join("?" * len(states))
    stuck = c.execute(f"SELECT cell_id, case_id, target_id, state FROM cells WHERE run_id=? AND state IN ({marks})",
                      (run_id, *states)).fetchall()
    for r in stuck:
        add_event(c, run_id, "cell_ambiguous", CellEvent(cell_id=r["cell_id"], case_id=r["case_id"],
                                                          target_id=r["target_id"], error=why))
    whens = " ".join("WHEN ? THEN ?" for _ in IN_FLIGHT)
    c.execute(f"UPDATE cells SET error_class=CASE state {whens} END, state='ambiguous', error=?, updated_at=? "
              f"WHERE run_id=? AND state IN ({marks})", (*classes, why, now, run_id, *states))
    for state, error_class in CALL_IN_FLIGHT.items():
        c.execute("UPDATE calls SET state='ambiguous', error_class=?, updated_at=? WHERE run_id=? AND state=?",
                  (error_class, now, run_id, state))
    if fault is not None:
        pending = c.execute("SELECT COUNT(*) FROM cells WHERE run_id=? AND state='pending'",
                            (run_id,)).fetchone()[0]
        add_event(c, run_id, "storage_fault", StorageFault(code=fault[0], message=fault[1],
                                                           ambiguous=len(stuck), not_dispatched=pending))
    terminal(c, run_id, status, error)


def pending_by_target(journal: Journal, run_id: str) -> dict[str, int]:
    """The run's cells never sent, by target."""
    return {r["target_id"]: r["n"] for r in journal.query(
        "SELECT target_id, COUNT(*) AS n FROM cells WHERE run_id=? AND state='pending' GROUP BY target_id",
        (run_id,))}


def record_early_stop(c: sqlite3.Connection, run_id: str, record: EarlyStopRecord, saving: float | None) -> None:
    """The early stop's record in the run's extra (its dump), with its event."""
    set_extra(c, run_id, "early_stop", record.dump())
    add_event(c, run_id, "early_stop_recorded", EarlyStopRecorded(cells_not_sent=record.cells_not_sent or 0,
                                                                     estimated_saving_usd=saving))
