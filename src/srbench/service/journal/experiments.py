"""The journal's experiments (`experiments`, `experiment_runs`, `experiment_deletions`): typed rows and the
reads and writer-connection writes service/runs/experiments.py builds its rules on (it holds no SQL)."""

from __future__ import annotations

import sqlite3
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from srbench.service.journal.writer import Journal

ACTIVE = ("queued", "running")
_ACTIVE_COUNT = (f"SELECT COUNT(*) AS n FROM experiment_runs e JOIN runs r ON r.id=e.run_id "
                 f"WHERE e.experiment_id=? AND r.status IN ({','.join('?' * len(ACTIVE))})")


class ExperimentRow(BaseModel):
    """One row of `experiments`."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    id: str
    """``exp-`` and 32 hex digits."""
    owner: str
    """The actor that made it."""
    name: str
    """Its name."""
    created_at: float
    """When it was made (epoch seconds)."""
    updated_at: float
    """Its last change (a run linked)."""
    request_key: str | None
    """The creation's idempotency key, if any."""


class Member(NamedTuple):
    """One linked run (`experiment_runs`), with its place in the experiment's order."""
    seq: int
    run_id: str
    role: str
    hypothesis: str
    linked_at: float


class Deletion(NamedTuple):
    """What a deleted experiment left (`experiment_deletions`)."""
    owner: str
    deleted_at: float
    unlinked_runs: int


def _experiment(row: sqlite3.Row) -> ExperimentRow:
    return ExperimentRow.model_validate({k: row[k] for k in ExperimentRow.model_fields})


def experiment(journal: Journal, experiment_id: str) -> ExperimentRow | None:
    row = journal.one("SELECT * FROM experiments WHERE id=?", (experiment_id,))
    return None if row is None else _experiment(row)


def experiments_page(journal: Journal, owner: str | None, after: int, limit: int) -> list[tuple[int, ExperimentRow]]:
    """At most `limit` experiments (of `owner`, when given) after position `after`: (position, row)."""
    where, args = ("owner=? AND ", [owner]) if owner is not None else ("", [])
    rows = journal.query(f"SELECT rowid AS pos, * FROM experiments WHERE {where}rowid>? ORDER BY rowid LIMIT ?",
                         (*args, after, limit))
    return [(int(r["pos"]), _experiment(r)) for r in rows]


def run_count(journal: Journal, experiment_id: str) -> int:
    row = journal.one("SELECT COUNT(*) AS n FROM experiment_runs WHERE experiment_id=?", (experiment_id,))
    return 0 if row is None else int(row["n"])


def active_run_count(journal: Journal, experiment_id: str) -> int:
    """Linked runs still queued or running."""
    row = journal.one(_ACTIVE_COUNT, (experiment_id, *ACTIVE))
    return 0 if row is None else int(row["n"])


def members(journal: Journal, experiment_id: str, after: int, limit: int) -> list[Member]:
    """At most `limit` linked runs after sequence number `after`, in link order."""
    return [Member(r["seq"], r["run_id"], r["role"], r["hypothesis"], r["linked_at"]) for r in journal.query(
        "SELECT * FROM experiment_runs WHERE experiment_id=? AND seq>? ORDER BY seq LIMIT ?",
        (experiment_id, after, limit))]


def deletion(journal: Journal, experiment_id: str) -> Deletion | None:
    row = journal.one("SELECT * FROM experiment_deletions WHERE id=?", (experiment_id,))
    return None if row is None else Deletion(row["owner"], row["deleted_at"], row["unlinked_runs"])


# -- writes (on the writer's connection) --------------------------------------------------------------------
def deleted_with_key(c: sqlite3.Connection, owner: str, key: str) -> str | None:
    """The deleted experiment that used this creation key, if any."""
    row = c.execute("SELECT id FROM experiment_deletions WHERE owner=? AND request_key=?", (owner, key)).fetchone()
    return None if row is None else str(row["id"])


def bound_to_key(c: sqlite3.Connection, owner: str, key: str) -> tuple[str, str] | None:
    """(id, name) of the experiment this creation key made, if any."""
    row = c.execute("SELECT id, name FROM experiments WHERE owner=? AND request_key=?", (owner, key)).fetchone()
    return None if row is None else (row["id"], row["name"])


def insert_experiment(c: sqlite3.Connection, row: ExperimentRow) -> None:
    c.execute("INSERT INTO experiments(id, owner, name, created_at, updated_at, request_key) VALUES(?,?,?,?,?,?)",
              (row.id, row.owner, row.name, row.created_at, row.updated_at, row.request_key))


def link_of(c: sqlite3.Connection, experiment_id: str, run_id: str) -> tuple[str, str] | None:
    """(role, hypothesis) the run is linked with, if it is."""
    row = c.execute("SELECT role, hypothesis FROM experiment_runs WHERE experiment_id=? AND run_id=?",
                    (experiment_id, run_id)).fetchone()
    return None if row is None else (row["role"], row["hypothesis"])


def insert_link(c: sqlite3.Connection, experiment_id: str, run_id: str, role: str, hypothesis: str,
                now: float) -> None:
    """The link, and the experiment's `updated_at`."""
    c.execute("INSERT INTO experiment_runs(experiment_id, run_id, role, hypothesis, linked_at) VALUES(?,?,?,?,?)",
              (experiment_id, run_id, role, hypothesis, now))
    c.execute("UPDATE experiments SET updated_at=? WHERE id=?", (now, experiment_id))


def active_run_count_in(c: sqlite3.Connection, experiment_id: str) -> int:
    """`active_run_count` inside the writer's transaction."""
    return int(c.execute(_ACTIVE_COUNT, (experiment_id, *ACTIVE)).fetchone()["n"])


def delete_experiment(c: sqlite3.Connection, experiment_id: str, now: float) -> int:
    """Unlink its runs (never deleting one), keep its deletion record, delete it. Returns the runs unlinked."""
    count = c.execute("SELECT COUNT(*) AS n FROM experiment_runs WHERE experiment_id=?",
                      (experiment_id,)).fetchone()["n"]
    c.execute("INSERT INTO experiment_deletions(id, owner, request_key, deleted_at, unlinked_runs) "
              "SELECT id, owner, request_key, ?, ? FROM experiments WHERE id=?", (now, count, experiment_id))
    c.execute("DELETE FROM experiment_runs WHERE experiment_id=?", (experiment_id,))
    c.execute("DELETE FROM experiments WHERE id=?", (experiment_id,))
    return int(count)
