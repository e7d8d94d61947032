"""Histories kept in the journal's `refs` (a run's usage and price corrections): appended once, in one
transaction on the writer, by a typed function (service/runs/corrections.py holds no SQL)."""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any


def append_once(c: sqlite3.Connection, kind: str, name: str, entry: dict[str, Any], *, anywhere: bool) -> bool:
    """Append `entry` to the ref's history unless its digest is already there (`anywhere`) or is the
    latest (otherwise). Returns whether it was appended."""
    row = c.execute("SELECT value FROM refs WHERE kind=? AND name=?", (kind, name)).fetchone()
    history: list[dict[str, Any]] = json.loads(row["value"]) if row else []
    digests = [h["digest"] for h in history]
    if (entry["digest"] in digests) if anywhere else (digests[-1:] == [entry["digest"]]):
        return False
    history.append(entry)
    c.execute("INSERT INTO refs(kind,name,value,updated_at) VALUES(?,?,?,?) ON CONFLICT(kind,name) "
              "DO UPDATE SET value=excluded.value, updated_at=excluded.updated_at",
              (kind, name, json.dumps(history, sort_keys=True), time.time()))
    return True
