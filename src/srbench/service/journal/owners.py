"""Who owns a run (`run_owners`) and an experiment's owner, as the service's actors read them: typed
journal functions (service/api/actors.py, service/wire/ hold no SQL)."""

from __future__ import annotations

import sqlite3

from srbench.service.journal.writer import Journal


def run_owner(journal: Journal, run_id: str) -> str | None:
    """The run's recorded owner; None for a local run (no row)."""
    row = journal.one("SELECT owner FROM run_owners WHERE run_id=?", (run_id,))
    return None if row is None else str(row["owner"])


def run_owners(journal: Journal, run_ids: list[str]) -> dict[str, str]:
    """The recorded owners of the runs among `run_ids` that have one."""
    if not run_ids:
        return {}
    return {r["run_id"]: r["owner"] for r in journal.query(
        f"SELECT run_id, owner FROM run_owners WHERE run_id IN ({','.join('?' * len(run_ids))})", tuple(run_ids))}


def set_run_owner(c: sqlite3.Connection, run_id: str, owner: str) -> None:
    c.execute("INSERT OR REPLACE INTO run_owners(run_id, owner) VALUES(?,?)", (run_id, owner))


def experiment_owner(c: sqlite3.Connection, experiment_id: str) -> tuple[bool, str | None]:
    """(exists, owner) of an experiment, inside the writer's transaction."""
    row = c.execute("SELECT owner FROM experiments WHERE id=?", (experiment_id,)).fetchone()
    return (False, None) if row is None else (True, row["owner"])
