"""SQL only in the journal (issue 26, item 4): a route handler module (service/routes/) reads and writes the journal
through typed functions, never a statement of its own; and no module outside service/journal/ holds SQL but those
still on the allow-list below, which may only shrink (each entry: the most statement lines the module may hold)."""

from __future__ import annotations

import re
from pathlib import Path

import srbench

SRC = Path(srbench.__file__).parent
ROUTES = SRC / "service" / "routes"
SQL = re.compile(r"\b(SELECT\s+[\w*(]|INSERT\s+(?:OR\s+\w+\s+)?INTO\b|UPDATE\s+\w+\s+SET\b|DELETE\s+FROM\b)")
# modules whose SQL has not moved behind service/journal/ yet: remove an entry (or lower it) as its SQL moves
NOT_YET_MOVED: dict[str, int] = {}


def _sql_lines(path: Path) -> int:
    return sum(1 for line in path.read_text("utf-8").splitlines() if SQL.search(line))


def test_handler_modules_hold_no_sql():
    handlers = sorted(p for p in ROUTES.glob("*.py") if p.name != "__init__.py")
    assert len(handlers) >= 5                   # the scan sees them
    found = [f"{p.name}:{n}" for p in handlers for n, line in enumerate(p.read_text("utf-8").splitlines(), 1)
             if SQL.search(line)]
    assert not found, f"SQL in handler modules (move it behind a journal function): {found}"


def test_sql_only_in_the_journal():
    found = {p.relative_to(SRC).as_posix(): _sql_lines(p) for p in sorted(SRC.rglob("*.py"))
             if not p.relative_to(SRC).as_posix().startswith("service/journal/")}
    over = {k: n for k, n in found.items() if n > NOT_YET_MOVED.get(k, 0)}
    assert not over, f"SQL outside service/journal/ (move it behind a typed journal function): {over}"
    stale = {k: (n, found.get(k, 0)) for k, n in NOT_YET_MOVED.items() if found.get(k, 0) < n}
    assert not stale, f"the allow-list must shrink with the SQL it allows (entry, now): {stale}"
    assert _sql_lines(SRC / "service" / "journal" / "runs.py") > 10      # the scan sees the journal's own SQL
    connects = [p.relative_to(SRC).as_posix() for p in sorted(SRC.rglob("*.py"))
                if "sqlite3.connect(" in p.read_text("utf-8") and not p.relative_to(SRC).as_posix().startswith(
                    "service/journal/")]
    assert not connects, f"a journal connection opened outside service/journal/: {connects}"


def test_the_scan_sees_sql():
    assert SQL.search('journal.one("SELECT * FROM cells WHERE run_id=?")')
    assert SQL.search("UPDATE cells SET state='failed'") and not SQL.search("select a dataset")
    assert SQL.search("INSERT OR REPLACE INTO refs VALUES(?,?,?)")
