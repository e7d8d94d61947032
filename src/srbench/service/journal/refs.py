"""Histories kept in the journal's `refs` (a run's usage and price corrections): appended once, in one
transaction on the writer, by a typed function (service/runs/corrections.py holds no SQL)."""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Literal

from pydantic import BaseModel, ConfigDict, JsonValue

from srbench.service.journal.writer import Journal

CorrectionKind = Literal["correction", "price-correction"]
"""The two histories of corrections a finished run keeps: usage (reconcile) and price (reprice)."""


class HistoryEntry(BaseModel):
    """One entry of a run's correction history, oldest first; the latest one is in effect."""

    model_config = ConfigDict(extra="allow", frozen=True, use_attribute_docstrings=True)
    digest: str
    """The correction object's digest."""
    at: float
    """When it was appended (epoch seconds)."""


def history(journal: Journal, kind: CorrectionKind, run_id: str) -> list[HistoryEntry]:
    """The run's history of `kind` corrections, oldest first (empty when it has none)."""
    return [HistoryEntry.model_validate(e) for e in journal.get_ref(kind, run_id) or []]


def append_once(c: sqlite3.Connection, kind: CorrectionKind, name: str, entry: HistoryEntry, *, anywhere: bool) -> bool:
    """Append `entry` to the ref's history unless its digest is already there (`anywhere`) or is the
    latest (otherwise). Returns whether it was appended. The entries already there are kept as stored."""
    row = c.execute("SELECT value FROM refs WHERE kind=? AND name=?", (kind, name)).fetchone()
    history: list[dict[str, JsonValue]] = json.loads(row["value"]) if row else []
    digests = [h["digest"] for h in history]
    if (entry.digest in digests) if anywhere else (digests[-1:] == [entry.digest]):
        return False
    history.append(entry.model_dump())
    c.execute("INSERT INTO refs(kind,name,value,updated_at) VALUES(?,?,?,?) ON CONFLICT(kind,name) "
              "DO UPDATE SET value=excluded.value, updated_at=excluded.updated_at",
              (kind, name, json.dumps(history, sort_keys=True), time.time()))
    return True
