"""Counters the journal maintains itself, so that a read never recounts a run (issue 11).

SQLite triggers keep, per run, the number of cells in each state (`cell_counts`) and, in
`run_stats`, the latest cell change, its judge calls (`judge_calls`), an exact version of the run's cells (`cell_writes`: one more
on every insert, update or delete of one of its cells) and its number of events. They run inside
the transaction that changes the cell, so a counter is never ahead of or behind the rows it counts,
whichever code path wrote them (dispatch, recovery, a pulled run, the restart sweep).

A store made before these existed is counted once, when the journal is opened, in the same
transaction that creates the triggers. `report_heads` keeps each run's last built report with the
signature of its inputs (stages/report.py `report_signature`); `report_rows` the report rows built
while a run goes on (service/report_rows.py). Also here: the indexes the paged reads use (runs newest
first, a run's children, events by type).
"""

from __future__ import annotations

import sqlite3

COUNTERS = """
CREATE TABLE IF NOT EXISTS cell_counts(
  run_id TEXT NOT NULL, state TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY(run_id, state));
CREATE TABLE IF NOT EXISTS run_stats(
  run_id TEXT PRIMARY KEY, last_change REAL NOT NULL DEFAULT 0, cell_writes INTEGER NOT NULL DEFAULT 0,
  events INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS report_heads(
  run_id TEXT PRIMARY KEY, sig TEXT NOT NULL, results_sig TEXT NOT NULL, report TEXT NOT NULL,
  results TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS report_rows(
  run_id TEXT NOT NULL, target_id TEXT NOT NULL, cell_id TEXT NOT NULL, ctx TEXT NOT NULL, state TEXT NOT NULL,
  call TEXT, error_class TEXT, judge_call TEXT, row TEXT NOT NULL, scrubbed TEXT NOT NULL, grade TEXT, turns TEXT, PRIMARY KEY(run_id, target_id, cell_id));
CREATE TRIGGER IF NOT EXISTS cells_counted_insert AFTER INSERT ON cells BEGIN
  INSERT INTO cell_counts(run_id, state, n) VALUES(new.run_id, new.state, 1)
    ON CONFLICT(run_id, state) DO UPDATE SET n = n + 1;
  INSERT INTO run_stats(run_id, last_change, cell_writes) VALUES(new.run_id, new.updated_at, 1)
    ON CONFLICT(run_id) DO UPDATE SET last_change = MAX(last_change, excluded.last_change),
                                      cell_writes = cell_writes + 1;
END;
CREATE TRIGGER IF NOT EXISTS cells_counted_update AFTER UPDATE ON cells BEGIN
  UPDATE cell_counts SET n = n - 1 WHERE old.state IS NOT new.state AND run_id = old.run_id AND state = old.state;
  INSERT INTO cell_counts(run_id, state, n) SELECT new.run_id, new.state, 1 WHERE old.state IS NOT new.state
    ON CONFLICT(run_id, state) DO UPDATE SET n = n + 1;
  INSERT INTO run_stats(run_id, last_change, cell_writes) VALUES(new.run_id, new.updated_at, 1)
    ON CONFLICT(run_id) DO UPDATE SET last_change = MAX(last_change, excluded.last_change),
                                      cell_writes = cell_writes + 1;
END;
CREATE TRIGGER IF NOT EXISTS cells_counted_delete AFTER DELETE ON cells BEGIN
  UPDATE cell_counts SET n = n - 1 WHERE run_id = old.run_id AND state = old.state;
  UPDATE run_stats SET cell_writes = cell_writes + 1 WHERE run_id = old.run_id;
END;
CREATE TRIGGER IF NOT EXISTS events_counted AFTER INSERT ON events BEGIN
  INSERT INTO run_stats(run_id, events) VALUES(new.run_id, 1)
    ON CONFLICT(run_id) DO UPDATE SET events = events + 1;
END;
CREATE INDEX IF NOT EXISTS runs_by_created ON runs(created_at, id);
CREATE INDEX IF NOT EXISTS runs_by_parent ON runs(parent);
CREATE INDEX IF NOT EXISTS events_by_type ON events(run_id, type, seq);
"""

BACKFILL = """
DELETE FROM cell_counts;
DELETE FROM run_stats;
INSERT INTO cell_counts(run_id, state, n) SELECT run_id, state, COUNT(*) FROM cells GROUP BY run_id, state;
INSERT INTO run_stats(run_id, last_change, cell_writes)
  SELECT run_id, MAX(updated_at), COUNT(*) FROM cells GROUP BY run_id;
INSERT INTO run_stats(run_id, events) SELECT run_id, COUNT(*) FROM events GROUP BY run_id
  ON CONFLICT(run_id) DO UPDATE SET events = excluded.events;
"""


JUDGED = ("({x}.state != 'pending' AND ({x}.judge_request IS NOT NULL OR {x}.judge_call IS NOT NULL OR "
          "{x}.state = 'judge_dispatching' OR IFNULL({x}.error_class, '') = 'ambiguous_judge_dispatch'))")
JUDGE_COUNTER = f"""
CREATE TRIGGER IF NOT EXISTS cells_judge_counted AFTER UPDATE ON cells
  WHEN {JUDGED.format(x="old")} IS NOT {JUDGED.format(x="new")} BEGIN
  UPDATE run_stats SET judge_calls = judge_calls + (CASE WHEN {JUDGED.format(x="new")} THEN 1 ELSE -1 END)
    WHERE run_id = new.run_id;
END;
CREATE TRIGGER IF NOT EXISTS cells_judge_counted_insert AFTER INSERT ON cells WHEN {JUDGED.format(x="new")} BEGIN
  INSERT INTO run_stats(run_id, judge_calls) VALUES(new.run_id, 1)
    ON CONFLICT(run_id) DO UPDATE SET judge_calls = judge_calls + 1;
END;
CREATE TRIGGER IF NOT EXISTS cells_judge_counted_delete AFTER DELETE ON cells WHEN {JUDGED.format(x="old")} BEGIN
  UPDATE run_stats SET judge_calls = judge_calls - 1 WHERE run_id = old.run_id;
END;
UPDATE run_stats SET judge_calls = (SELECT COUNT(*) FROM cells c WHERE c.run_id = run_stats.run_id
  AND {JUDGED.format(x="c")});
"""


def install(conn: sqlite3.Connection) -> None:
    """Create the counters, their triggers and indexes; count an older store's runs once."""
    _install_base(conn)
    _migrate(conn, "cells_judge_counted", "ALTER TABLE run_stats ADD COLUMN judge_calls INTEGER NOT NULL DEFAULT 0;\n"
             + JUDGE_COUNTER)


def _migrate(conn: sqlite3.Connection, trigger: str, script: str) -> None:
    """One later step: applied once, in one transaction, when its trigger is absent."""
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type='trigger' AND name=?", (trigger,)).fetchone():
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE type='trigger' AND name=?", (trigger,)).fetchone():
            for stmt in _statements(script):
                conn.execute(stmt)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _install_base(conn: sqlite3.Connection) -> None:
    have = conn.execute("SELECT 1 FROM sqlite_master WHERE type='trigger' AND name='events_counted'").fetchone()
    if have is not None:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE type='trigger' AND name='events_counted'").fetchone():
            conn.execute("ROLLBACK")
            return
        for stmt in _statements(COUNTERS + BACKFILL):
            conn.execute(stmt)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _statements(script: str) -> list[str]:
    """Split a script into statements (a trigger's body holds semicolons: complete_statement knows)."""
    out, buf = [], ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    return [s for s in out if s]
