"""The journal's schema, versioned (issue 26, item 4): numbered migrations keyed on PRAGMA user_version.

A store made before versions (user_version 0) is adopted in place with its data and counters; a fresh
store gets the latest version; a store from a newer sr-bench is refused in one line, unchanged.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from srbench.service.app import Service
from srbench.service.journal import schema as journal_schema
from srbench.service.journal.schema import LATEST, MIGRATIONS, JournalTooNew, statements
from srbench.service.journal.writer import Journal

# Shipped migrations are never edited (a store at version N must hold what a fresh store at N holds):
# each script's sha256 is pinned here; a schema change appends a migration and a line.
SHIPPED = {
    1: "b3d2f3c7fd94a985ffd98284578e9fed5be2c4db85664e67898be850879687c4",
    2: "132fb55fdc5e6c3ea237fa69474aa8128fef65b4dc4693a8ddf93951c970ae7f",
    3: "6dda403029ddb2adb6b41d982fa6a22840e29d78d6d2c1fb7aa0cc3efa8fd06c",
    4: "b908ef29de2938cbf489d5d81d30cd2c68bc1437a3dedf2fb34e3d2ffb10b079",
    5: "7c522f24f092d10faf81f34d25d66b3448f7d20ba04a69c4664b5bf9fa63da54",
    6: "cb49717600e0f40f1a5e50a761f00fbba7860c55cb4301e1cfcc2e19b4442819",
    7: "37770436a6b707471d90991d1d2c9d6996283993758117e0ca26c0789bd73b7b",
}
SCHEMA_SQL = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"


def _legacy_store(path: Path, upto: int) -> None:
    """A store as the code before versions made it: the DDL of steps 1..`upto` (the same text, pinned
    above), user_version left at 0; with a run whose cells changed more often than they number."""
    conn = sqlite3.connect(path, isolation_level=None)
    for step in MIGRATIONS[:upto]:
        for statement in statements(step.script):
            conn.execute(statement)
    conn.execute("INSERT INTO runs(id, name, mode, plan, plan_sha256, status, total, targets, created_at, updated_at)"
                 " VALUES('run-1', 'r', 'live', 'b3:p', 'sha', 'finished', 2, '[]', 1.0, 1.0)")
    for seq in range(2):
        conn.execute("INSERT INTO cells(run_id, cell_id, seq, case_id, target_id, state, updated_at) "
                     "VALUES('run-1', ?, ?, 'c', 't', 'pending', 1.0)", (f"cell-{seq}", seq))
    conn.execute("UPDATE cells SET state='completed', updated_at=2.0 WHERE run_id='run-1'")
    conn.execute("INSERT INTO events(run_id, ts, type, data) VALUES('run-1', 1.0, 'created', '{}')")
    conn.execute("INSERT INTO refs VALUES('dataset', 'd', '\"b3:x\"', 1.0)")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 0
    conn.close()


def _schema(path: Path) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(SCHEMA_SQL).fetchall()
    finally:
        conn.close()


def test_shipped_migrations_are_numbered_and_unchanged():
    assert [m.version for m in MIGRATIONS] == list(range(1, LATEST + 1))
    got = {m.version: hashlib.sha256(m.script.encode()).hexdigest() for m in MIGRATIONS}
    assert {v: d for v, d in got.items() if v in SHIPPED} == SHIPPED, "a shipped migration was edited"


def test_a_fresh_store_gets_the_latest_version(tmp_path):
    j = Journal(str(tmp_path / "j.sqlite3"))
    try:
        assert j.one("PRAGMA user_version")[0] == LATEST
        tables = {r["name"] for r in j.query("SELECT name FROM sqlite_master WHERE type='table'")}
        assert {"runs", "cells", "calls", "cell_counts", "run_stats", "run_owners", "experiments"} <= tables
    finally:
        j.close()


def test_a_store_from_before_versions_is_migrated_in_place(tmp_path):
    legacy = tmp_path / "old.sqlite3"
    _legacy_store(legacy, upto=LATEST)            # everything today's code made, but no version
    conn = sqlite3.connect(legacy)
    writes = conn.execute("SELECT cell_writes FROM run_stats WHERE run_id='run-1'").fetchone()[0]
    conn.close()
    assert writes == 4                            # two inserts, two updates: more than the 2 cells
    j = Journal(str(legacy))
    try:
        assert j.one("PRAGMA user_version")[0] == LATEST
        assert j.one("SELECT status FROM runs WHERE id='run-1'")["status"] == "finished"
        assert j.get_ref("dataset", "d") == "b3:x"
        # the maintained counters were kept, not recounted (cell_writes is a cache key's version)
        stats = j.one("SELECT cell_writes, events, judge_calls FROM run_stats WHERE run_id='run-1'")
        assert tuple(stats) == (4, 1, 0)
        j.submit_sync(lambda c: c.execute("UPDATE cells SET state='failed' WHERE cell_id='cell-0'"))
        counts = {r["state"]: r["n"] for r in j.query("SELECT state, n FROM cell_counts WHERE n > 0")}
        assert counts == {"completed": 1, "failed": 1}
    finally:
        j.close()
    fresh = tmp_path / "fresh.sqlite3"
    Journal(str(fresh)).close()
    assert _schema(legacy) == _schema(fresh)      # the same tables, indexes and triggers, same text


def test_a_store_from_before_the_counters_is_counted_once(tmp_path):
    legacy = tmp_path / "old.sqlite3"
    _legacy_store(legacy, upto=1)                 # the base tables only
    j = Journal(str(legacy))
    try:
        assert j.one("PRAGMA user_version")[0] == LATEST
        assert {r["state"]: r["n"] for r in j.query("SELECT state, n FROM cell_counts")} == {"completed": 2}
        stats = j.one("SELECT cell_writes, events, judge_calls FROM run_stats WHERE run_id='run-1'")
        assert tuple(stats) == (2, 1, 0)          # recounted from the rows: the only count there is
    finally:
        j.close()


def test_a_store_from_a_newer_sr_bench_is_refused_unchanged(tmp_path):
    path = tmp_path / "j.sqlite3"
    Journal(str(path)).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {LATEST + 1}")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(JournalTooNew) as err:
        Journal(str(path))
    message = err.value.message
    assert "\n" not in message and f"schema version {LATEST + 1}" in message and "upgrade sr-bench" in message
    assert err.value.code == "journal_too_new"
    assert path.read_bytes() == before


def test_a_failed_migration_leaves_the_old_version(tmp_path, monkeypatch):
    legacy = tmp_path / "old.sqlite3"
    _legacy_store(legacy, upto=1)
    broken = (*MIGRATIONS[:2], journal_schema.Migration(3, "broken", "CREATE TABLE runs(x);"), *MIGRATIONS[3:])
    monkeypatch.setattr(journal_schema, "MIGRATIONS", broken)
    with pytest.raises(sqlite3.OperationalError):
        Journal(str(legacy))
    conn = sqlite3.connect(legacy)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 0
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        assert "cell_counts" not in names         # step 2 rolled back with the failing step 3
    finally:
        conn.close()


def test_the_schema_is_defined_in_one_module():
    """Tables, indexes and triggers come from service/journal/schema.py's migrations only: DDL elsewhere would
    never reach a store already at the latest version."""
    import re

    schema = Path(journal_schema.__file__)
    src = schema.parent.parent.parent                       # the srbench package
    ddl = re.compile(r"\b(CREATE\s+(TABLE|INDEX|TRIGGER|VIEW|UNIQUE\s+INDEX)|ALTER\s+TABLE|DROP\s+(TABLE|INDEX|TRIGGER))\b")
    found = [f"{p.relative_to(src)}:{n}" for p in sorted(src.rglob("*.py")) if p != schema
             for n, line in enumerate(p.read_text("utf-8").splitlines(), 1) if ddl.search(line)]
    assert not found, f"schema statements outside service/journal/schema.py (add a migration there): {found}"


@pytest.mark.parametrize(("tables", "whose"), [
    (("runs", "results", "calls", "run_provenance", "events"), "upstream's `vllm-sr benchmark serve`"),
    (("notes",), "another program (its tables notes)"),
    (("runs",), "another program (its tables runs)"),
])
def test_another_programs_journal_is_refused_and_the_store_left_as_it_is(tmp_path, tables, whose):
    """A store upstream's service made (its journal is journal.sqlite3 too) was half-adopted: the service made
    cas/ and store.json in it, then died on 'sqlite3.OperationalError: no such table: main.cells'."""
    store = tmp_path / "up-store"
    store.mkdir()
    conn = sqlite3.connect(store / "journal.sqlite3")
    for table in tables:
        conn.execute(f"CREATE TABLE {table}(id TEXT PRIMARY KEY, body TEXT)")
    conn.commit()
    conn.close()
    before = {p.name: p.read_bytes() for p in store.iterdir()}
    with pytest.raises(journal_schema.ForeignJournal) as err:
        Service(store)
    message = err.value.message
    assert message.startswith(f"the journal {store / 'journal.sqlite3'} was written by {whose}"), message
    assert ", not by sr-bench: give sr-bench a store of its own (--store NEW_DIR" in message, message
    assert "\n" not in message and message.endswith("nothing was changed")
    assert {p.name: p.read_bytes() for p in store.iterdir()} == before
