"""Handlers hold no SQL (issue 26, item 4): a route handler module (service/routes/) reads and writes the journal
through typed functions (service/journal/evidence.py, service/runs/manager.py …), never a statement of its own."""

from __future__ import annotations

import re
from pathlib import Path

import srbench

ROUTES = Path(srbench.__file__).parent / "service" / "routes"
SQL = re.compile(r"\b(SELECT\s+[\w*(]|INSERT\s+INTO\b|UPDATE\s+\w+\s+SET\b|DELETE\s+FROM\b)")


def test_handler_modules_hold_no_sql():
    handlers = sorted(p for p in ROUTES.glob("*.py") if p.name != "__init__.py")
    assert len(handlers) >= 5                   # the scan sees them
    found = [f"{p.name}:{n}" for p in handlers for n, line in enumerate(p.read_text("utf-8").splitlines(), 1)
             if SQL.search(line)]
    assert not found, f"SQL in handler modules (move it behind a journal function): {found}"


def test_the_scan_sees_sql():
    assert SQL.search('journal.one("SELECT * FROM cells WHERE run_id=?")')
    assert SQL.search("UPDATE cells SET state='failed'") and not SQL.search("select a dataset")
