"""The journal reads behind a run's evidence pages (service/routes/evidence.py): typed functions,
so that the handlers hold no SQL. Totals come from the maintained counters (journal_schema.py),
never from a count over the run's cells."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from srbench.service.journal.writer import Journal


def call_total(journal: Journal, run_id: str) -> int:
    """Subject calls (cells that left pending) plus judge calls."""
    row = journal.one("SELECT (SELECT COALESCE(SUM(n), 0) FROM cell_counts WHERE run_id=? AND state!='pending') AS n, "
                      "(SELECT judge_calls FROM run_stats WHERE run_id=?) AS j", (run_id, run_id))
    return 0 if row is None else int(row["n"]) + int(row["j"] or 0)


def sent_cell_roles(journal: Journal, run_id: str) -> list[sqlite3.Row]:
    """Every cell that left pending, in sequence order, with what tells its calls' roles."""
    return journal.query("SELECT seq, state, judge_request, judge_call, error_class FROM cells WHERE run_id=? "
                         "AND state!='pending' ORDER BY seq", (run_id,))


def sent_cells_from(journal: Journal, run_id: str, seq: int, limit: int) -> list[sqlite3.Row]:
    """At most `limit` cells that left pending, from sequence number `seq` on."""
    return journal.query("SELECT * FROM cells WHERE run_id=? AND state!='pending' AND seq>=? ORDER BY seq "
                         "LIMIT ?", (run_id, seq, limit))


def cell_by_seq(journal: Journal, run_id: str, seq: int) -> sqlite3.Row | None:
    return journal.one("SELECT * FROM cells WHERE run_id=? AND seq=?", (run_id, seq))


def cell_by_id(journal: Journal, run_id: str, cell_id: str) -> sqlite3.Row | None:
    return journal.one("SELECT * FROM cells WHERE run_id=? AND cell_id=?", (run_id, cell_id))


def events_after(journal: Journal, run_id: str, after: int, limit: int) -> list[sqlite3.Row]:
    """At most `limit` events of the run after sequence number `after`."""
    return journal.query("SELECT * FROM events WHERE run_id=? AND seq>? ORDER BY seq LIMIT ?", (run_id, after, limit))


def event_count(journal: Journal, run_id: str) -> int:
    stat = journal.one("SELECT events FROM run_stats WHERE run_id=?", (run_id,))
    return 0 if stat is None else int(stat["events"])


def events_of_types(journal: Journal, run_id: str, types: tuple[str, ...]) -> list[tuple[str, dict[str, Any]]]:
    """The run's events of these types, in order: (type, data)."""
    marks = ", ".join("?" * len(types))
    return [(r["type"], json.loads(r["data"])) for r in journal.query(
        f"SELECT type, data FROM events WHERE run_id=? AND type IN ({marks}) ORDER BY seq", (run_id, *types))]
