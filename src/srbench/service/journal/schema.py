"""The journal's schema in one place, versioned by numbered migrations keyed on ``PRAGMA user_version``.

Every table, index and trigger of ``journal.sqlite3`` is created here, by `MIGRATIONS`: migration N
brings a store from version N-1 to N. `migrate` applies the missing ones in one transaction
(``BEGIN IMMEDIATE``: another process opening the same store waits, then finds them applied) and
sets ``user_version`` in that transaction, so a crash leaves the store at its old version, never
between two. To change the schema, append a migration; never edit one that has shipped.

The counters (migrations 2 and 3, issue 11): SQLite triggers keep, per run, the number of cells in
each state (`cell_counts`) and, in `run_stats`, the latest cell change, its judge calls
(`judge_calls`), an exact version of the run's cells (`cell_writes`: one more on every insert,
update or delete of one of its cells) and its number of events. They run inside the transaction
that changes the cell, so a counter is never ahead of or behind the rows it counts, whichever code
path wrote them (dispatch, recovery, a pulled run, the restart sweep). A store made before them is
counted once, by the migration that creates them. `report_heads` keeps each run's last built report
with the signature of its inputs (stages/report/build.py `report_signature`); `report_rows` the report
rows built while a run goes on (service/runs/report_rows.py). Also here: the indexes the paged reads use
(runs newest first, a run's children, events by type, a run's sent and judged cells) and, kept by triggers
like the counters, the calls page's rows per block of a run's sequence numbers (`call_blocks`, migration 7).

A store made before the schema had a version (``user_version`` 0, tables present) is adopted once:
its version is read from the triggers it holds (`legacy_version`), then the later migrations run as
for any other store. A store written by a newer sr-bench (a version above `LATEST`) is refused with
one line and left unchanged.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from srbench.errors import SrBenchError

BASE = """
CREATE TABLE IF NOT EXISTS refs(
  kind TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, updated_at REAL NOT NULL,
  PRIMARY KEY(kind, name));
CREATE TABLE IF NOT EXISTS runs(
  id TEXT PRIMARY KEY, name TEXT NOT NULL, mode TEXT NOT NULL, profile TEXT, plan TEXT NOT NULL,
  plan_sha256 TEXT NOT NULL, status TEXT NOT NULL, idem_key TEXT UNIQUE, parent TEXT,
  total INTEGER NOT NULL, targets TEXT NOT NULL, created_at REAL NOT NULL, started_at REAL,
  finished_at REAL, updated_at REAL NOT NULL, error TEXT, cancel_requested INTEGER NOT NULL DEFAULT 0,
  extra TEXT NOT NULL DEFAULT '{}');
CREATE TABLE IF NOT EXISTS cells(
  run_id TEXT NOT NULL, cell_id TEXT NOT NULL, seq INTEGER NOT NULL, case_id TEXT NOT NULL,
  target_id TEXT NOT NULL, state TEXT NOT NULL, request TEXT, call TEXT, error_class TEXT,
  error TEXT, updated_at REAL NOT NULL, judge_request TEXT, judge_call TEXT, reserved_usd REAL,
  PRIMARY KEY(run_id, cell_id));
CREATE INDEX IF NOT EXISTS cells_by_seq ON cells(run_id, seq);
CREATE INDEX IF NOT EXISTS cells_by_state ON cells(run_id, state);
CREATE TABLE IF NOT EXISTS calls(
  run_id TEXT NOT NULL, cell_id TEXT NOT NULL, idx INTEGER NOT NULL, role TEXT NOT NULL,
  target_id TEXT NOT NULL, state TEXT NOT NULL, request TEXT NOT NULL, call TEXT, error_class TEXT,
  cost_usd REAL, reserved_usd REAL, updated_at REAL NOT NULL,
  PRIMARY KEY(run_id, cell_id, idx));
CREATE INDEX IF NOT EXISTS calls_by_state ON calls(run_id, state);
CREATE TABLE IF NOT EXISTS events(
  seq INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, ts REAL NOT NULL, type TEXT NOT NULL,
  data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS events_by_run ON events(run_id, seq);
CREATE TABLE IF NOT EXISTS budgets(
  run_id TEXT PRIMARY KEY, cap_usd REAL NOT NULL, spent_usd REAL NOT NULL DEFAULT 0,
  reserved_usd REAL NOT NULL DEFAULT 0, unknown_calls INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS recovery_claims(
  parent TEXT NOT NULL, cell_id TEXT NOT NULL, child TEXT NOT NULL, mode TEXT NOT NULL,
  PRIMARY KEY(parent, cell_id));
CREATE TABLE IF NOT EXISTS action_cache(key TEXT PRIMARY KEY, output TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS action_last(
  rule TEXT NOT NULL, subject TEXT NOT NULL, key TEXT NOT NULL, output TEXT NOT NULL,
  inputs TEXT NOT NULL, params TEXT NOT NULL, version TEXT NOT NULL, PRIMARY KEY(rule, subject));
"""

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
ALTER TABLE run_stats ADD COLUMN judge_calls INTEGER NOT NULL DEFAULT 0;
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

RUN_OWNERS = """
CREATE TABLE IF NOT EXISTS run_owners(run_id TEXT PRIMARY KEY, owner TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS run_owners_by_owner ON run_owners(owner, run_id);
"""

# one line per statement: the text a store made before migrations holds in sqlite_master
EXPERIMENTS = """
CREATE TABLE IF NOT EXISTS experiments(id TEXT PRIMARY KEY, owner TEXT NOT NULL, name TEXT NOT NULL, created_at REAL NOT NULL, updated_at REAL NOT NULL, request_key TEXT, UNIQUE(owner, request_key));
CREATE TABLE IF NOT EXISTS experiment_runs(seq INTEGER PRIMARY KEY AUTOINCREMENT, experiment_id TEXT NOT NULL, run_id TEXT NOT NULL, role TEXT NOT NULL, hypothesis TEXT NOT NULL, linked_at REAL NOT NULL, UNIQUE(experiment_id, run_id));
CREATE TABLE IF NOT EXISTS experiment_deletions(id TEXT PRIMARY KEY, owner TEXT NOT NULL, request_key TEXT, deleted_at REAL NOT NULL, unlinked_runs INTEGER NOT NULL);
"""

# The calls page's rows (service/routes/evidence.py) are a run's sent cells, and a second row for each judged
# one; these partial indexes hold exactly those, in sequence order, so an offset into the page is a cursor
# by one indexed query (journal/evidence.py `call_row_at`), not a walk over the cells in Python.
SENT = "state != 'pending'"
JUDGED_ROW = JUDGED.replace("{x}.", "")
CALL_ROWS = f"""
CREATE INDEX IF NOT EXISTS cells_sent_by_seq ON cells(run_id, seq) WHERE {SENT};
CREATE INDEX IF NOT EXISTS cells_judged_by_seq ON cells(run_id, seq) WHERE {JUDGED_ROW};
"""

# The calls page's rows per block of `CALL_BLOCK` sequence numbers of a run (0, 1 or 2 a cell: `ROWS_OF`), kept by
# triggers in the transaction that changes the cell: an offset finds its block by a running sum over the run's
# blocks (n / CALL_BLOCK rows), then its row by an offset inside that block (< 2 × CALL_BLOCK index entries), never
# a walk over the run's cells before it, in Python or in SQLite (journal/evidence.py `call_row_at`).
CALL_BLOCK = 512
ROWS_OF = "(({x}.state != 'pending') + " + JUDGED + ")"


def _rows(x: str) -> str:
    return ROWS_OF.format(x=x)


CALL_BLOCKS = f"""
CREATE TABLE IF NOT EXISTS call_blocks(
  run_id TEXT NOT NULL, block INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY(run_id, block));
CREATE TRIGGER IF NOT EXISTS cells_blocked_insert AFTER INSERT ON cells WHEN {_rows("new")} > 0 BEGIN
  INSERT INTO call_blocks(run_id, block, n) VALUES(new.run_id, new.seq / {CALL_BLOCK}, {_rows("new")})
    ON CONFLICT(run_id, block) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER IF NOT EXISTS cells_blocked_update AFTER UPDATE ON cells
  WHEN {_rows("old")} != {_rows("new")} OR old.seq IS NOT new.seq OR old.run_id IS NOT new.run_id BEGIN
  UPDATE call_blocks SET n = n - {_rows("old")} WHERE run_id = old.run_id AND block = old.seq / {CALL_BLOCK};
  INSERT INTO call_blocks(run_id, block, n) SELECT new.run_id, new.seq / {CALL_BLOCK}, {_rows("new")}
    WHERE {_rows("new")} > 0 ON CONFLICT(run_id, block) DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER IF NOT EXISTS cells_blocked_delete AFTER DELETE ON cells WHEN {_rows("old")} > 0 BEGIN
  UPDATE call_blocks SET n = n - {_rows("old")} WHERE run_id = old.run_id AND block = old.seq / {CALL_BLOCK};
END;
DELETE FROM call_blocks;
INSERT INTO call_blocks(run_id, block, n) SELECT c.run_id, c.seq / {CALL_BLOCK}, SUM({_rows("c")}) FROM cells c
  GROUP BY c.run_id, c.seq / {CALL_BLOCK} HAVING SUM({_rows("c")}) > 0;
"""


@dataclass(frozen=True)
class Migration:
    """One step of the schema: `script` brings a store from `version` - 1 to `version`."""

    version: int
    summary: str
    script: str


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "refs, runs, cells, calls, events, budgets, recovery claims, the action cache", BASE),
    Migration(2, "cell and event counters kept by triggers, report heads and rows, paged-read indexes",
              COUNTERS),
    Migration(3, "judge-call counter", JUDGE_COUNTER),
    Migration(4, "run owners (actors)", RUN_OWNERS),
    Migration(5, "experiments", EXPERIMENTS),
    Migration(6, "calls-page offset indexes (a run's sent cells, its judged cells, by sequence)", CALL_ROWS),
    Migration(7, "calls-page rows per block of sequence numbers, kept by triggers", CALL_BLOCKS),
)
LATEST = MIGRATIONS[-1].version

# A store from before `user_version`: the trigger each step added, newest first (steps 4 to 6 only
# create tables and indexes IF NOT EXISTS, so running them again over such a store is harmless; step 7
# came after versions, so such a store never holds it).
_LEGACY_MARKERS = ((3, "cells_judge_counted"), (2, "events_counted"))


class JournalTooNew(SrBenchError):
    """The journal was written by a newer sr-bench: opening it here could damage it."""

    code = "journal_too_new"


class ForeignJournal(SrBenchError):
    """The journal is another program's SQLite file (upstream's `vllm-sr benchmark serve` names its own
    journal.sqlite3 too): adopting it would fail half-way, or worse."""

    code = "journal_foreign"


_OURS = frozenset({"runs", "cells"})          # what every sr-bench journal has held since its first version
_UPSTREAM = frozenset({"runs", "results", "calls", "run_provenance"})


def refuse_foreign(path: str) -> None:
    """Refuse (ForeignJournal), reading only, a journal at `path` that holds tables but not sr-bench's: the
    store is not changed (the service has not made its cas/ or store.json there yet). A missing file, an
    sr-bench journal of any version, or a file SQLite cannot read (named by the journal's own open) passes."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error:
        return
    try:
        if version_of(conn) != 0:
            return
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.DatabaseError:
        return
    finally:
        conn.close()
    tables.discard("sqlite_sequence")
    if not tables or _OURS <= tables:
        return
    whose = ("upstream's `vllm-sr benchmark serve` (its tables runs, results, calls)" if _UPSTREAM <= tables
             else f"another program (its tables {', '.join(sorted(tables)[:6])}{' …' if len(tables) > 6 else ''})")
    raise ForeignJournal(f"the journal {path} was written by {whose}, not by sr-bench: give sr-bench a store of "
                         "its own (--store NEW_DIR, or SR_BENCH_STORE); upstream's prepared datasets move over with "
                         "`sr-bench dataset import DIR/datasets/ID`; nothing was changed")


def version_of(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def legacy_version(conn: sqlite3.Connection) -> int:
    """The version of a store made before the schema was versioned (0: an empty store)."""
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='runs'").fetchone():
        return 0
    for version, trigger in _LEGACY_MARKERS:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE type='trigger' AND name=?", (trigger,)).fetchone():
            return version
    return 1


def migrate(conn: sqlite3.Connection, path: str) -> int:
    """Bring the journal at `path` (open on `conn`, autocommit) to `LATEST`; returns the version it had.
    Refuses (JournalTooNew) a store of a newer version, changing nothing."""
    found = version_of(conn)
    _refuse_newer(found, path)
    if found == LATEST:
        return found
    conn.execute("BEGIN IMMEDIATE")
    try:
        found = version_of(conn)                 # another process may have migrated it meanwhile
        _refuse_newer(found, path)
        current = found or legacy_version(conn)
        for step in MIGRATIONS[current:]:
            for statement in statements(step.script):
                conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {LATEST}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return found


def _refuse_newer(version: int, path: str) -> None:
    if version > LATEST:
        raise JournalTooNew(f"the journal {path} has schema version {version}, newer than this sr-bench knows "
                            f"({LATEST}): open the store with the sr-bench that wrote it, or upgrade sr-bench")


def statements(script: str) -> list[str]:
    """Split a script into statements (a trigger's body holds semicolons: complete_statement knows)."""
    out, buf = [], ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    return [s for s in out if s]
