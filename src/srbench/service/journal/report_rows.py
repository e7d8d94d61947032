"""The journal's `report_rows` (the report's row memo, service/runs/report_rows.py) and the action cache as the
report-rows worker process reads it: typed functions, so that no service module holds their SQL."""

from __future__ import annotations

import sqlite3
from typing import Any

from srbench.service.journal.writer import Journal
from srbench.stages.report.cells import MemoEntry

# (run_id, target_id, cell_id, ctx, state, call, error_class, judge_call, row, scrubbed, grade, turns)
ReportRowRecord = tuple[str, str, str, str, Any, Any, Any, Any, str, str, str | None, str | None]


def memo_rows(journal: Journal, run_id: str, ctx: str, target_id: str) -> dict[str, MemoEntry]:
    """One target's memo rows built in context `ctx`: cell id → (basis, row, scrubbed, grade, turns)."""
    return {r[0]: ([r[1], r[2], r[3], r[4]], r[5], r[6], r[7], r[8]) for r in journal.query(
        "SELECT cell_id, state, call, error_class, judge_call, row, scrubbed, grade, turns FROM report_rows "
        "WHERE run_id=? AND target_id=? AND ctx=?", (run_id, target_id, ctx))}


def put_memo_rows(c: sqlite3.Connection, rows: list[ReportRowRecord]) -> None:
    """Memo rows, each replacing the cell's row in its context."""
    c.executemany("INSERT OR REPLACE INTO report_rows(run_id, target_id, cell_id, ctx, state, call, "
                  "error_class, judge_call, row, scrubbed, grade, turns) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)", rows)


def delete_memo_rows(c: sqlite3.Connection, run_id: str) -> None:
    c.execute("DELETE FROM report_rows WHERE run_id=?", (run_id,))


WORKER_CACHE_KIB = 256


def open_read_only(journal_path: str) -> sqlite3.Connection:
    """A read-only connection of a process of its own (the report-rows worker) to the journal at `journal_path`,
    with a page cache of 256 KiB, not SQLite's 2 MiB: it looks up one action-cache key a row, and the pages the
    cache would keep are in the kernel's page cache anyway (-1.8 MiB in the worker, no more CPU: issue 42)."""
    conn = sqlite3.connect(f"file:{journal_path}?mode=ro", uri=True, timeout=30, check_same_thread=False)
    conn.execute(f"PRAGMA cache_size=-{WORKER_CACHE_KIB}")
    return conn


def action_output(conn: sqlite3.Connection, key: str) -> str | None:
    """The action cache's output for `key`, on a connection of the reader's own (the worker process's)."""
    row = conn.execute("SELECT output FROM action_cache WHERE key=?", (key,)).fetchone()
    return None if row is None else str(row[0])
