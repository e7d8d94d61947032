"""Cell states are a closed set (issue 26, item 1): schemas/cell.py, and every state the code writes
or compares is one of them."""

from __future__ import annotations

import re
from pathlib import Path

import srbench
from srbench.schemas.cell import CALL_STATES, CELL_STATES, TERMINAL_CELL_STATES, call_state

SRC = Path(srbench.__file__).parent
# state='x' / state != 'x' in SQL, "state": "x" / state == "x" in Python, state IN ('x', 'y') in SQL
SQL = re.compile(r"\bstate\s*(?:=|!=|==)\s*'([a-z_]+)'")
PY = re.compile(r"""(?:\bstate"?\s*(?:==|!=|:)\s*)"([a-z_]+)\"""")
IN = re.compile(r"\bstate\s+IN\s*\(([^)]*)\)", re.I)


def _used() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for path in SRC.rglob("*.py"):
        text = path.read_text("utf-8")
        found = set(SQL.findall(text)) | set(PY.findall(text))
        for group in IN.findall(text):
            found |= set(re.findall(r"'([a-z_]+)'", group))
        for state in found:
            out.setdefault(state, set()).add(str(path.relative_to(SRC)))
    return out


def test_every_cell_state_in_the_code_is_in_the_closed_set():
    used = _used()
    assert {"pending", "dispatching", "completed", "ambiguous"} <= set(used)      # the scan finds them
    unknown = {s: sorted(where) for s, where in used.items() if s not in CELL_STATES}
    assert not unknown, f"states outside schemas/cell.py CellState: {unknown}"


def test_groups_and_the_status_mapping():
    assert set(TERMINAL_CELL_STATES) < set(CELL_STATES) and set(CALL_STATES) < set(CELL_STATES)
    assert "pending" not in CALL_STATES and "judge_dispatching" not in CALL_STATES
    assert [call_state(s) for s in ("completed", "cancelled", "failed", "timeout")] == \
        ["completed", "cancelled", "failed", "failed"]
