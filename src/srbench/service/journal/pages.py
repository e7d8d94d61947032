"""Keyset pages over the journal: O(page) whatever the run or the store holds (issue 11).

A page after a cursor is one index range scan (cells by (run_id, seq), events by (run_id, seq),
runs by (created_at, id)); totals come from the maintained counters (journal_schema.py), never
from a COUNT over the run. A cursor is the last item's key; an answer's `next_cursor` is null on
the last page. `offset` stays for older clients (SQLite walks the index to it).
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from srbench.errors import InvalidInput
from srbench.service.journal.writer import Journal


def seq_cursor(items: list[dict[str, Any]], limit: int) -> str | None:
    """The next page's cursor: the last item's seq, or None when this page was the last."""
    return str(items[-1]["seq"]) if items and len(items) >= limit else None


def runs_cursor(runs: list[tuple[float, str]], limit: int) -> str | None:
    """The next page's cursor after a page of runs, each (created_at, id); None: the last page."""
    if not runs or len(runs) < limit:
        return None
    return f"{runs[-1][0]!r}~{runs[-1][1]}"


def runs_before(cursor: str | None) -> tuple[float, str] | None:
    if cursor is None:
        return None
    at, sep, run_id = cursor.partition("~")
    try:
        value = float(at)
    except ValueError:
        value = float("nan")
    if not sep or value != value or value in (float("inf"), float("-inf")):
        raise InvalidInput("after: not a runs cursor (use an answer's next_cursor)")
    return value, run_id


def calls(journal: Journal, counts: dict[str, int], run_id: str, after: int | None, offset: int,
          limit: int) -> tuple[list[sqlite3.Row], int]:
    """Cells that left `pending`, in seq order, and how many there are (from the counters)."""
    if after is not None:
        rows = journal.query("SELECT * FROM cells WHERE run_id=? AND seq>? AND state!='pending' ORDER BY seq "
                             "LIMIT ?", (run_id, after, limit))
    else:
        rows = journal.query("SELECT * FROM cells WHERE run_id=? AND state!='pending' ORDER BY seq "
                             "LIMIT ? OFFSET ?", (run_id, limit, offset))
    return rows, sum(n for state, n in counts.items() if state != "pending")


def events(journal: Journal, run_id: str, after: int, limit: int) -> tuple[list[dict[str, Any]], int]:
    rows = journal.query("SELECT * FROM events WHERE run_id=? AND seq>? ORDER BY seq LIMIT ?",
                         (run_id, after, limit))
    stat = journal.one("SELECT events FROM run_stats WHERE run_id=?", (run_id,))
    return ([{"seq": r["seq"], "ts": r["ts"], "type": r["type"], "data": json.loads(r["data"])} for r in rows],
            0 if stat is None else stat["events"])
