"""The journal side of recovery runs (REC-*): which parent cells a child run claimed (`recovery_claims`), and
the binding a recovery run's row carries; typed functions (service/runs/recovery.py holds no SQL)."""

from __future__ import annotations

import json
import sqlite3

from srbench.errors import Conflict
from srbench.service.journal.runs import RecoveryBinding
from srbench.service.journal.writer import Journal


def claims_of(journal: Journal, parent: str) -> dict[str, str]:
    """The parent run's claimed cells: cell id → the recovery run that claimed it."""
    return {r["cell_id"]: r["child"] for r in journal.query(
        "SELECT cell_id, child FROM recovery_claims WHERE parent=?", (parent,))}


def claim_cells(c: sqlite3.Connection, parent: str, cell_ids: list[str], child: str, binding: RecoveryBinding) -> None:
    """In the child's insert transaction: claim each parent cell for it (a cell claimed meanwhile by another
    recovery aborts it: Conflict), and record the submission it binds (its `extra`)."""
    for cid in cell_ids:
        try:
            c.execute("INSERT INTO recovery_claims(parent, cell_id, child, mode) VALUES(?,?,?,?)",
                      (parent, cid, child, binding.mode))
        except sqlite3.IntegrityError:
            raise Conflict(f"cell {cid} was claimed by another recovery meanwhile", code="claimed") from None
    c.execute("UPDATE runs SET extra=? WHERE id=?", (json.dumps({"recovery_binding": binding.model_dump()}), child))
