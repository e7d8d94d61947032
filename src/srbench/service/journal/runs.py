"""The journal's `runs` rows and what a run's lifecycle reads and writes beside them (its cells' counters,
budget, report head): typed repository functions, so that service/runs/manager.py holds no SQL.

Reads take the `Journal` (any thread); a write is a function of the writer's connection, given to
`journal.submit`/`submit_sync` by the caller, so it runs in the single writer's transaction as before.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict

from srbench.schemas.cell import RunStatus
from srbench.schemas.early_stop import EarlyStopRecord
from srbench.schemas.event import EventType
from srbench.schemas.event_data import (
    CancellationRequested,
    CellEvent,
    EventData,
    NoData,
    Pulled,
    ReplayOf,
    RunEnded,
    parse_event,
)
from srbench.schemas.plan import PlanMode
from srbench.schemas.recovery import RecoveryMode
from srbench.service.journal.writer import Journal, add_event
from srbench.stages.dispatch.calls import Cell

# SQL: the cell row `cells` is a multi-call cell that has journaled at least one call
_CONVERSATION = "EXISTS (SELECT 1 FROM calls k WHERE k.run_id=cells.run_id AND k.cell_id=cells.cell_id)"
_REPORT_CELLS = ("SELECT cell_id, seq, case_id, target_id, state, call, error_class, judge_call, judge_request "
                 "FROM cells WHERE run_id=?")
# (cell_id, seq, case_id, target_id, state, call, error_class, judge_call, judge_request)
ReportCell = tuple[str, int, str, str, str, str | None, str | None, str | None, str | None]


class RunRow(BaseModel):
    """One row of the journal's `runs` table, as stored."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    id: str
    """The run's id (`run-` and 20 hex digits)."""
    name: str
    """The plan's name."""
    mode: PlanMode
    """The plan's mode."""
    profile: str | None
    """The plan's profile, if any."""
    plan: str
    """The frozen plan object's digest."""
    plan_sha256: str
    """The plan's own sha256 (what an idempotency key is bound to)."""
    status: RunStatus
    """The run's status."""
    idem_key: str | None
    """The idempotency key the run was submitted with."""
    parent: str | None
    """The run this one recovers (lineage), if any."""
    total: int
    """Cells planned."""
    targets: str
    """The subject target ids, a JSON list."""
    created_at: float
    """When the run was submitted (epoch seconds)."""
    started_at: float | None
    """When it started running."""
    finished_at: float | None
    """When it ended."""
    updated_at: float
    """The run row's last change."""
    error: str | None
    """Why it did not complete."""
    cancel_requested: int
    """1 once a cancellation was requested."""
    extra: str
    """Further facts (final_report, early_stop …), a JSON object: `RunExtras`."""

    def extras(self) -> RunExtras:
        """The `extra` JSON object as its model."""
        return RunExtras.model_validate_json(self.extra or "{}")


class RecoveryBinding(BaseModel):
    """The recovery submission a child run binds to its idempotency key (service/runs/recovery.py)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    parent: str
    """The run recovered."""
    mode: RecoveryMode
    """undispatched | failed."""
    cells: list[str]
    """The parent's cells claimed, sorted."""


class RunExtras(BaseModel):
    """A run row's further facts (its `extra` JSON), each set by one writer; absent until then. Keys an
    older sr-bench may have written are ignored on reading (the row's text is never rewritten from this)."""

    model_config = ConfigDict(extra="ignore", frozen=True, use_attribute_docstrings=True)
    final_report: str | None = None
    """The digest of the report recorded when the run ended (service/runs/manager.py)."""
    early_stop: EarlyStopRecord | None = None
    """The early stop's record (written as `EarlyStopRecord.dump()`: the fields set; the closing fields are
    absent until the run closes)."""
    pulled: Pulled | None = None
    """The bundle this run was pulled from (service/team/sync.py)."""
    recovery_binding: RecoveryBinding | None = None
    """A recovery child's submission (service/journal/recovery.py)."""
    replay: ReplayOf | None = None
    """The runs a replay run joins (service/runs/replays.py)."""


class IdemBinding(NamedTuple):
    """The run an idempotency key is bound to, and its plan."""
    run_id: str
    plan_sha256: str


class Budget(NamedTuple):
    """A run's budget row (RUN-8)."""
    cap_usd: float
    spent_usd: float
    reserved_usd: float
    unknown_calls: int


class ReportHead(NamedTuple):
    """The last report built for a run, with the signatures it was built under."""
    sig: str
    results_sig: str
    report: str
    results: str


def _run(row: sqlite3.Row) -> RunRow:
    return RunRow.model_validate(dict(row))


# -- reads ---------------------------------------------------------------------------------------
def run_row(journal: Journal, run_id: str) -> RunRow | None:
    row = journal.one("SELECT * FROM runs WHERE id=?", (run_id,))
    return None if row is None else _run(row)


def run_by_idem_key(journal: Journal, key: str) -> RunRow | None:
    row = journal.one("SELECT * FROM runs WHERE idem_key=?", (key,))
    return None if row is None else _run(row)


def idem_binding(journal: Journal, key: str) -> IdemBinding | None:
    row = journal.one("SELECT id, plan_sha256 FROM runs WHERE idem_key=?", (key,))
    return None if row is None else IdemBinding(row["id"], row["plan_sha256"])


def cancel_requested(journal: Journal, run_id: str) -> bool:
    row = journal.one("SELECT cancel_requested FROM runs WHERE id=?", (run_id,))
    return row is not None and bool(row["cancel_requested"])


def child_runs(journal: Journal, run_id: str) -> list[str]:
    """The runs recovering this one, oldest first."""
    return [r["id"] for r in journal.query("SELECT id FROM runs WHERE parent=? ORDER BY created_at", (run_id,))]


def budget(journal: Journal, run_id: str) -> Budget | None:
    b = journal.one("SELECT cap_usd, spent_usd, reserved_usd, unknown_calls FROM budgets WHERE run_id=?", (run_id,))
    return None if b is None else Budget(b["cap_usd"], b["spent_usd"], b["reserved_usd"], b["unknown_calls"])


def runs_page(journal: Journal, limit: int, before: tuple[float, str] | None = None) -> list[RunRow]:
    """Newest runs first, strictly older than `before` = (created_at, id) when given."""
    if before is None:
        rows = journal.query("SELECT * FROM runs ORDER BY created_at DESC, id DESC LIMIT ?", (limit,))
    else:
        rows = journal.query("SELECT * FROM runs WHERE (created_at, id) < (?, ?) "
                             "ORDER BY created_at DESC, id DESC LIMIT ?", (*before, limit))
    return [_run(r) for r in rows]


def owned_runs_page(journal: Journal, owner: str, limit: int,
                    before: tuple[float, str] | None = None) -> list[RunRow]:
    """An actor's own runs (run_owners), newest first, keyset like `runs_page`."""
    join = "SELECT runs.* FROM runs JOIN run_owners ON run_owners.run_id=runs.id WHERE run_owners.owner=?"
    if before is None:
        rows = journal.query(join + " ORDER BY runs.created_at DESC, runs.id DESC LIMIT ?", (owner, limit))
    else:
        rows = journal.query(join + " AND (runs.created_at, runs.id) < (?, ?) ORDER BY runs.created_at DESC, "
                             "runs.id DESC LIMIT ?", (owner, *before, limit))
    return [_run(r) for r in rows]


def cell_counts(journal: Journal, run_ids: list[str]) -> dict[str, dict[str, int]]:
    """Each run's cells by state (non-zero counters only), from the maintained counters."""
    counts: dict[str, dict[str, int]] = {i: {} for i in run_ids}
    if run_ids:
        marks = ",".join("?" * len(run_ids))
        for r in journal.query(f"SELECT run_id, state, n FROM cell_counts WHERE run_id IN ({marks})", tuple(run_ids)):
            if r["n"]:
                counts[r["run_id"]][r["state"]] = r["n"]
    return counts


def last_changes(journal: Journal, run_ids: list[str]) -> dict[str, float]:
    """Each run's latest persisted cell change (run_stats), 0.0 when none."""
    last: dict[str, float] = dict.fromkeys(run_ids, 0.0)
    if run_ids:
        marks = ",".join("?" * len(run_ids))
        for r in journal.query(f"SELECT run_id, last_change FROM run_stats WHERE run_id IN ({marks})",
                               tuple(run_ids)):
            last[r["run_id"]] = r["last_change"] or 0.0
    return last


def state_counts(journal: Journal, run_id: str) -> dict[str, int]:
    """The run's cells by state, from the maintained counters (no scan of its cells)."""
    return {r["state"]: r["n"] for r in journal.query("SELECT state, n FROM cell_counts WHERE run_id=? AND n > 0",
                                                      (run_id,))}


def cell_writes(journal: Journal, run_id: str) -> int:
    """The run's cell-write counter (the report's cells version)."""
    row = journal.one("SELECT cell_writes FROM run_stats WHERE run_id=?", (run_id,))
    return 0 if row is None else int(row["cell_writes"])


def pending_cells(journal: Journal, run_id: str) -> list[Cell]:
    """The run's pending cells in sequence order (the cells of one case, or of one target, share its id's
    string: each row read is a new one, and a 100k-cell run's are held while it dispatches), read as the
    query streams them (the whole result as row objects was ~40 MiB more at 100k cells, at the run's start)."""
    names: dict[str, str] = {}
    return [Cell(cell, seq, names.setdefault(case, case), names.setdefault(target, target))
            for cell, seq, case, target in journal.reader().execute(       # streamed: no list of 100k rows beside
                "SELECT cell_id, seq, case_id, target_id FROM cells WHERE run_id=? AND state='pending' ORDER BY seq",
                (run_id,))]


def report_cells(journal: Journal, run_id: str, *, by_target: bool = False) -> Iterator[ReportCell]:
    """The run's cells as the report reads them, streamed from a reader connection (ordered by target
    and sequence when `by_target`)."""
    sql = _REPORT_CELLS + (" ORDER BY target_id, seq" if by_target else "")
    for r in journal.reader().execute(sql, (run_id,)):
        yield tuple(r)


def events_data(journal: Journal, run_id: str, type_: EventType) -> list[EventData]:
    """The data of the run's events of one type, in order, as that kind's model."""
    return [parse_event(type_, r["data"]) for r in journal.query("SELECT data FROM events WHERE run_id=? AND type=? "
                                                                 "ORDER BY seq", (run_id, type_))]


def report_head(journal: Journal, run_id: str) -> ReportHead | None:
    row = journal.one("SELECT sig, results_sig, report, results FROM report_heads WHERE run_id=?", (run_id,))
    return None if row is None else ReportHead(row["sig"], row["results_sig"], row["report"], row["results"])


# -- writes (each runs on the writer's connection, in its transaction) ----------------------------
def recover_after_restart(c: sqlite3.Connection) -> dict[str, int]:
    """Every cell left dispatching becomes ambiguous (a conversation too, with its calls in flight),
    every unfinished run interrupted (RUN-5, REC-1); each with its event."""
    now = time.time()
    amb = c.execute("SELECT run_id, cell_id, case_id, target_id FROM cells "
                    "WHERE state IN ('dispatching', 'judge_dispatching')").fetchall()
    for r in amb:
        add_event(c, r["run_id"], "cell_ambiguous", CellEvent(cell_id=r["cell_id"], case_id=r["case_id"],
                                                               target_id=r["target_id"]))
    c.execute("UPDATE cells SET state='ambiguous', error_class='ambiguous_dispatch', error=CASE WHEN "
              f"{_CONVERSATION} THEN 'the service stopped during this conversation; a call may have been "
              "billed; it is never resumed' ELSE 'the service stopped while this call was in flight; it "
              "may have been billed' END, updated_at=? WHERE state='dispatching'", (now,))
    c.execute("UPDATE calls SET state='ambiguous', error_class='ambiguous_dispatch', updated_at=? "
              "WHERE state='dispatching'", (now,))
    c.execute("UPDATE cells SET state='ambiguous', error_class='ambiguous_judge_dispatch', "
              "error='the service stopped while the judge call was in flight; it may have been billed', "
              "updated_at=? WHERE state='judge_dispatching'", (now,))
    runs = c.execute("SELECT id FROM runs WHERE status IN ('queued','running')").fetchall()
    for r in runs:
        add_event(c, r["id"], "interrupted", RunEnded(reason="service restarted"))
    c.execute("UPDATE runs SET status='interrupted', finished_at=COALESCE(finished_at, ?), updated_at=?, "
              "error=COALESCE(error, 'service stopped during the run') "
              "WHERE status IN ('queued','running')", (now, now))
    return {"ambiguous_cells": len(amb), "interrupted_runs": len(runs)}


def bound_run(c: sqlite3.Connection, key: str) -> IdemBinding | None:
    """`idem_binding` inside the writer's transaction."""
    row = c.execute("SELECT id, plan_sha256 FROM runs WHERE idem_key=?", (key,)).fetchone()
    return None if row is None else IdemBinding(row["id"], row["plan_sha256"])


def insert_run(c: sqlite3.Connection, run: RunRow) -> None:
    """The run's row, every column as given."""
    c.execute("INSERT INTO runs(id,name,mode,profile,plan,plan_sha256,status,idem_key,parent,total,targets,created_at,"
              "started_at,finished_at,updated_at,error,cancel_requested,extra) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
              (run.id, run.name, run.mode, run.profile, run.plan, run.plan_sha256, run.status, run.idem_key,
               run.parent, run.total, run.targets, run.created_at, run.started_at, run.finished_at, run.updated_at,
               run.error, run.cancel_requested, run.extra))


def insert_cells(c: sqlite3.Connection, rows: list[tuple[str, str, int, str, str, str, float]]) -> None:
    """Cells, each (run_id, cell_id, seq, case_id, target_id, state, updated_at)."""
    c.executemany("INSERT INTO cells(run_id,cell_id,seq,case_id,target_id,state,updated_at) VALUES(?,?,?,?,?,?,?)",
                  rows)


def insert_finished_cells(c: sqlite3.Connection,
                          rows: list[tuple[str, str, int, str, str, str, str | None, str | None, str | None, float]]
                          ) -> None:
    """Cells that are already done (a replay's), each (run_id, cell_id, seq, case_id, target_id, state, request,
    call, judge_call, updated_at)."""
    c.executemany("INSERT INTO cells(run_id,cell_id,seq,case_id,target_id,state,request,call,judge_call,"
                  "updated_at) VALUES(?,?,?,?,?,?,?,?,?,?)", rows)


def insert_budget(c: sqlite3.Connection, run_id: str, cap_usd: float) -> None:
    c.execute("INSERT INTO budgets(run_id, cap_usd) VALUES(?,?)", (run_id, cap_usd))


def mark_running(c: sqlite3.Connection, run_id: str, now: float) -> bool:
    """A queued run starts running (with its event); False if it is no longer queued."""
    r = c.execute("SELECT status, cancel_requested FROM runs WHERE id=?", (run_id,)).fetchone()
    if r["status"] != "queued":
        return False
    c.execute("UPDATE runs SET status='running', started_at=?, updated_at=? WHERE id=?", (now, now, run_id))
    add_event(c, run_id, "running", NoData())
    return True


def request_cancel(c: sqlite3.Connection, run_id: str, reason: str) -> None:
    c.execute("UPDATE runs SET cancel_requested=1, updated_at=? WHERE id=?", (time.time(), run_id))
    add_event(c, run_id, "cancellation_requested", CancellationRequested(reason=reason))


def set_extra(c: sqlite3.Connection, run_id: str, key: str, value: Any) -> None:
    """One key of the run's `extra` object."""
    row = c.execute("SELECT extra FROM runs WHERE id=?", (run_id,)).fetchone()
    extra = json.loads(row["extra"])
    extra[key] = value
    c.execute("UPDATE runs SET extra=? WHERE id=?", (json.dumps(extra, sort_keys=True), run_id))


def put_report_head(c: sqlite3.Connection, run_id: str, head: ReportHead) -> None:
    c.execute("INSERT INTO report_heads(run_id, sig, results_sig, report, results) VALUES(?,?,?,?,?) "
              "ON CONFLICT(run_id) DO UPDATE SET sig=excluded.sig, results_sig=excluded.results_sig, "
              "report=excluded.report, results=excluded.results", (run_id, *head))
