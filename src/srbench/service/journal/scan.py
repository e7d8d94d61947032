"""A scan of every text value the journal holds, in one read snapshot (the store's garbage collection and
verify look for the objects it names: service/store/maintenance.py), and the runs still active."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from functools import partial
from typing import NamedTuple

from srbench.service.journal.writer import Journal


class TextValue(NamedTuple):
    """One text value of a journal row."""
    table: str
    column: str
    value: str
    key: Callable[[], str]
    """The row's key (its primary key's values joined by ``/``, else ``rowid=N``), made when asked."""


def text_values(journal: Journal, skip: frozenset[tuple[str, str]]) -> Iterator[TextValue]:
    """Every text value of every table, except the (table, column) pairs in `skip` ((table, "*"): a whole
    table), read in one snapshot on this thread's reader connection."""
    conn = journal.reader()
    conn.execute("BEGIN")
    try:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        for table in tables:
            if (table, "*") in skip:
                continue
            q = '"' + table.replace('"', '""') + '"'
            info = conn.execute(f"PRAGMA table_info({q})").fetchall()
            pks = [r["name"] for r in sorted((r for r in info if r["pk"]), key=lambda r: r["pk"])]
            cols = [r["name"] for r in info if (table, r["name"]) not in skip]
            select = ", ".join('"' + c.replace('"', '""') + '"' for c in dict.fromkeys([*pks, *cols]))
            for row in conn.execute(f'SELECT rowid AS "_rowid_", {select} FROM {q}'):
                key = partial(_row_key, pks, row)
                for col in cols:
                    value = row[col]
                    if isinstance(value, str):
                        yield TextValue(table, col, value, key)
    finally:
        conn.execute("COMMIT")


def _row_key(pks: list[str], row: sqlite3.Row) -> str:
    return "/".join(str(row[k]) for k in pks) if pks else f"rowid={row['_rowid_']}"


def runs_with_status(journal: Journal, statuses: tuple[str, ...]) -> list[str]:
    """Ids of the runs in one of these statuses, oldest first."""
    marks = ",".join("?" for _ in statuses)
    return [r["id"] for r in journal.query(f"SELECT id FROM runs WHERE status IN ({marks}) ORDER BY created_at",
                                           statuses)]
