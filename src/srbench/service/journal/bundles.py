"""A run's journal rows as a run bundle carries them (service/team/sync.py: push and pull, DC-5), read and
imported by typed functions. The rows stay column dicts: they are the bundle's wire form (schemas/bundle.py)."""

from __future__ import annotations

import json
import sqlite3
import time

from pydantic import JsonValue

from srbench.schemas.bundle import (
    CALL_COLUMNS,
    CELL_COLUMNS,
    RUN_COLUMNS,
    BundledBudget,
    BundledEvent,
    Columns,
)
from srbench.schemas.event_data import Pulled
from srbench.service.journal.writer import Journal, add_event


def run_columns(journal: Journal, run_id: str) -> Columns | None:
    """The run's row, every bundled column as stored."""
    row = journal.one("SELECT * FROM runs WHERE id=?", (run_id,))
    return None if row is None else {c: row[c] for c in RUN_COLUMNS}


def cell_columns(journal: Journal, run_id: str) -> list[Columns]:
    """The run's cells in sequence order, every bundled column."""
    return [{c: r[c] for c in CELL_COLUMNS}
            for r in journal.query("SELECT * FROM cells WHERE run_id=? ORDER BY seq", (run_id,))]


def call_columns(journal: Journal, run_id: str) -> list[Columns]:
    """The run's journaled calls (multi-call cells), by cell and call order."""
    return [{c: r[c] for c in CALL_COLUMNS}
            for r in journal.query("SELECT * FROM calls WHERE run_id=? ORDER BY cell_id, idx", (run_id,))]


def bundled_events(journal: Journal, run_id: str) -> list[BundledEvent]:
    """The run's events but its `pulled` ones, in order."""
    return [BundledEvent(ts=r["ts"], type=r["type"], data=json.loads(r["data"]))
            for r in journal.query("SELECT ts, type, data FROM events WHERE run_id=? AND type != 'pulled' "
                                   "ORDER BY seq", (run_id,))]


def import_rows(c: sqlite3.Connection, run: Columns, cells: list[Columns], calls: list[Columns],
                events: list[BundledEvent], budget: BundledBudget | None,
                corrections: dict[str, list[dict[str, JsonValue]]], digest: str) -> bool:
    """In one writer transaction: the run's rows, its budget and correction histories, and a `pulled`
    event naming the bundle. False (nothing written) when the run is already there."""
    run_id = str(run["id"])
    if c.execute("SELECT 1 FROM runs WHERE id=?", (run_id,)).fetchone() is not None:
        return False                               # a concurrent pull got there first
    c.execute(f"INSERT INTO runs({','.join(RUN_COLUMNS)}) VALUES({','.join('?' * len(RUN_COLUMNS))})",
              tuple(run[k] for k in RUN_COLUMNS))
    c.executemany(f"INSERT INTO cells(run_id,{','.join(CELL_COLUMNS)}) "
                  f"VALUES(?,{','.join('?' * len(CELL_COLUMNS))})",
                  [(run_id, *(cell[k] for k in CELL_COLUMNS)) for cell in cells])
    c.executemany(f"INSERT INTO calls(run_id,{','.join(CALL_COLUMNS)}) "
                  f"VALUES(?,{','.join('?' * len(CALL_COLUMNS))})",
                  [(run_id, *(call[k] for k in CALL_COLUMNS)) for call in calls])
    c.executemany("INSERT INTO events(run_id, ts, type, data) VALUES(?,?,?,?)",
                  [(run_id, e.ts, e.type, json.dumps(e.data, sort_keys=True)) for e in events])
    if budget is not None:
        b = budget
        c.execute("INSERT OR IGNORE INTO budgets(run_id, cap_usd, spent_usd, reserved_usd, unknown_calls) "
                  "VALUES(?,?,?,?,?)", (run_id, b.cap_usd, b.spent_usd, b.reserved_usd, b.unknown_calls))
    for kind, history in corrections.items():
        c.execute("INSERT OR REPLACE INTO refs(kind,name,value,updated_at) VALUES(?,?,?,?)",
                  (kind, run_id, json.dumps(history, sort_keys=True), time.time()))
    add_event(c, run_id, "pulled", Pulled(bundle=digest))
    return True
