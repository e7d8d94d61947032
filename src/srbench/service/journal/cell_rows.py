"""The journal's `cells` rows as the service reads them whole (corrections, replays, recovery plans): a typed
row and its reads, so that no module outside service/journal/ holds a statement over the cells."""

from __future__ import annotations

import sqlite3

from pydantic import BaseModel, ConfigDict

from srbench.schemas.cell import CallState, CellState
from srbench.service.journal.writer import Journal


class CellRow(BaseModel):
    """One row of the journal's `cells` table, as stored (its columns, in order)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    run_id: str
    """The run the cell belongs to."""
    cell_id: str
    """The cell's id (a digest of its case and target)."""
    seq: int
    """Its place in the run's dispatch order."""
    case_id: str
    """The dataset case."""
    target_id: str
    """The subject target."""
    state: CellState
    """Its state."""
    request: str | None
    """The stored request's digest, once journaled."""
    call: str | None
    """The call record's (or conversation record's) digest, once finished."""
    error_class: str | None
    """Why it did not complete, as a class."""
    error: str | None
    """Why it did not complete, in words."""
    updated_at: float
    """The row's last change (epoch seconds)."""
    judge_request: str | None
    """The judge request's digest, for a judged cell."""
    judge_call: str | None
    """The judge call record's digest."""
    reserved_usd: float | None
    """The budget reservation the cell holds while its call is out."""


def _cell(row: sqlite3.Row) -> CellRow:
    return CellRow.model_validate(dict(row))


def run_cells(journal: Journal, run_id: str, *, ordered: bool = False) -> list[CellRow]:
    """Every cell of the run (in sequence order when `ordered`)."""
    sql = "SELECT * FROM cells WHERE run_id=?" + (" ORDER BY seq" if ordered else "")
    return [_cell(r) for r in journal.query(sql, (run_id,))]


def cells_by_id(journal: Journal, run_id: str, cell_ids: list[str]) -> list[CellRow]:
    """The run's cells among `cell_ids` (any order)."""
    if not cell_ids:
        return []
    return [_cell(r) for r in journal.query(f"SELECT * FROM cells WHERE run_id=? AND cell_id IN "
                                            f"({','.join('?' * len(cell_ids))})", (run_id, *cell_ids))]


class CallRow(BaseModel):
    """One row of the journal's `calls` table: one model call of a multi-call cell (a conversation)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    run_id: str
    """The run."""
    cell_id: str
    """The conversation cell."""
    idx: int
    """The call's place in the conversation."""
    role: str
    """Its role (subject, judge, user simulator …)."""
    target_id: str
    """The target called."""
    state: CallState
    """Its state."""
    request: str
    """The stored request's digest."""
    call: str | None
    """The call record's digest, once finished."""
    error_class: str | None
    """Why it did not complete, as a class."""
    cost_usd: float | None
    """Its cost, when known."""
    reserved_usd: float | None
    """The budget reservation it holds while out."""
    updated_at: float
    """The row's last change (epoch seconds)."""


def calls_of(journal: Journal, run_id: str, cell_ids: list[str]) -> dict[str, list[CallRow]]:
    """The `calls` rows of these cells (one query), by cell, in call order."""
    out: dict[str, list[CallRow]] = {}
    if not cell_ids:
        return out
    marks = ",".join("?" * len(cell_ids))
    for r in journal.query(f"SELECT * FROM calls WHERE run_id=? AND cell_id IN ({marks}) ORDER BY cell_id, idx",
                           (run_id, *cell_ids)):
        out.setdefault(r["cell_id"], []).append(CallRow.model_validate(dict(r)))
    return out
