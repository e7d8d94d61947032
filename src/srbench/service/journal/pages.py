"""Keyset pages over the journal: O(page) whatever the run or the store holds (issue 11).

A page after a cursor is one index range scan (runs by (created_at, id) here; a run's cells and
events by (run_id, seq): journal/evidence.py); totals come from the maintained counters
(journal_schema.py), never from a COUNT over the run. A cursor is the last item's key; an answer's `next_cursor` is null on
the last page. `offset` stays for older clients (SQLite walks the index to it).
"""

from __future__ import annotations

from srbench.errors import InvalidInput


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
