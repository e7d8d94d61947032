"""SQL only in the journal (issue 26, item 4): no module outside service/journal/ holds a statement, opens a
connection or runs one through the Journal's raw `query`/`one`/`reader`; route handlers (service/routes/) and the
rest of the service read and write the journal through its typed repository functions."""

from __future__ import annotations

import re
from pathlib import Path

import srbench

SRC = Path(srbench.__file__).parent
ROUTES = SRC / "service" / "routes"
SQL = re.compile(r"\b(SELECT\s+[\w*(]|INSERT\s+(?:OR\s+\w+\s+)?INTO\b|UPDATE\s+\w+\s+SET\b|DELETE\s+FROM\b)")


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
    over = {k: n for k, n in found.items() if n}
    assert not over, f"SQL outside service/journal/ (move it behind a typed journal function): {over}"
    assert _sql_lines(SRC / "service" / "journal" / "runs.py") > 10      # the scan sees the journal's own SQL
    connects = [p.relative_to(SRC).as_posix() for p in sorted(SRC.rglob("*.py"))
                if "sqlite3.connect(" in p.read_text("utf-8") and not p.relative_to(SRC).as_posix().startswith(
                    "service/journal/")]
    assert not connects, f"a journal connection opened outside service/journal/: {connects}"
    raw = re.compile(r"\bjournal\.(query|one|reader)\(")       # the Journal's raw statement runners
    direct = [f"{p.relative_to(SRC).as_posix()}:{n}" for p in sorted(SRC.rglob("*.py"))
              if not p.relative_to(SRC).as_posix().startswith("service/journal/")
              for n, line in enumerate(p.read_text("utf-8").splitlines(), 1) if raw.search(line)]
    assert not direct, f"a statement run outside service/journal/ (call a typed journal function): {direct}"


def test_the_scan_sees_sql():
    assert SQL.search('journal.one("SELECT * FROM cells WHERE run_id=?")')
    assert SQL.search("UPDATE cells SET state='failed'") and not SQL.search("select a dataset")
    assert SQL.search("INSERT OR REPLACE INTO refs VALUES(?,?,?)")
