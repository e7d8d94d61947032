"""Experiments: the iterations of one routing change grouped apart from the runs (upstream's model).

An experiment (``exp-<32 hex>``, owned by the actor that made it) lists runs in roles: smoke,
baseline, initial, preview, candidate, validation (the holdout acceptance), estimate (a replay) and
recovery. A role must fit the run (`wire.experiment_roles`). Creation is idempotent per (owner,
key) and a key whose experiment was deleted can never be used again; deleting unlinks the runs and
never deletes one; an experiment with queued or running runs cannot be deleted (409).
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from srbench.errors import Conflict, InvalidInput, NotFound
from srbench.schemas.plan import ExperimentLink
from srbench.service.api.actors import Actor
from srbench.service.api.requests import Experiment as ExperimentRequest
from srbench.service.api.workflow import (
    Experiment,
    ExperimentDeleted,
    ExperimentMember,
    ExperimentRuns,
    Experiments,
)
from srbench.service.journal import experiments as jexp
from srbench.service.journal.experiments import ExperimentRow

if TYPE_CHECKING:
    from srbench.service.journal.writer import Journal

ROLES = ("smoke", "baseline", "initial", "preview", "candidate", "validation", "estimate", "recovery")
ACTIVE = jexp.ACTIVE


def membership(value: Any) -> ExperimentLink:
    """A manifest's `experiment` block, checked: {id, role, hypothesis (stripped, ≤ 2000)}."""
    try:
        link = ExperimentRequest.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InvalidInput(f"experiment{'.' + where if where else ''}: {first['msg']}") from None
    return ExperimentLink(id=link.id, role=link.role, hypothesis=link.hypothesis.strip())


def visible(journal: Journal, experiment_id: str, actor: Actor) -> ExperimentRow:
    row = jexp.experiment(journal, experiment_id)
    if row is None or (actor.scope is not None and row.owner != actor.scope):
        raise NotFound(f"no experiment {experiment_id!r}")
    return row


def _view(journal: Journal, row: ExperimentRow, counts: bool = True) -> Experiment:
    """An experiment as the API answers it; its run counts only where one experiment is shown."""
    view = Experiment(id=row.id, name=row.name, owner=row.owner, created_at=_iso(row.created_at),
                      updated_at=_iso(row.updated_at))
    if not counts:
        return view
    return view.model_copy(update={"run_count": jexp.run_count(journal, row.id),
                                   "active_run_count": active_runs(journal, row.id)})


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat()          # `wire.iso` of a time that is always set


def active_runs(journal: Journal, experiment_id: str) -> int:
    return jexp.active_run_count(journal, experiment_id)


def get(journal: Journal, experiment_id: str, actor: Actor) -> Experiment:
    return _view(journal, visible(journal, experiment_id, actor))


def create(journal: Journal, name: str, key: str | None, actor: Actor) -> tuple[Experiment, bool]:
    name = name.strip()
    if not name:
        raise InvalidInput("Experiment name must be between 1 and 160 characters")
    owner, new_id, now = actor.owner, "exp-" + uuid.uuid4().hex, time.time()

    def w(c: sqlite3.Connection) -> tuple[str, bool]:
        if key is not None:
            gone = jexp.deleted_with_key(c, owner, key)
            if gone is not None:
                raise Conflict("This creation key belongs to a deleted experiment; use a new key for a new "
                               "experiment", code="experiment_deleted", details={"experiment_id": gone})
            bound = jexp.bound_to_key(c, owner, key)
            if bound is not None:
                if bound[1] != name:
                    raise Conflict("Experiment idempotency key is already bound to another name",
                                   code="idempotency_conflict")
                return bound[0], False
        jexp.insert_experiment(c, ExperimentRow(id=new_id, owner=owner, name=name, created_at=now, updated_at=now,
                                                request_key=key))
        return new_id, True
    got, created = journal.submit_sync(w)
    row = jexp.experiment(journal, got)
    if row is None:                 # deleted at once by another request
        raise NotFound(f"no experiment {got!r}")
    return _view(journal, row), created


def page(journal: Journal, actor: Actor, after: int, limit: int) -> Experiments:
    rows = jexp.experiments_page(journal, actor.scope, after, limit + 1)
    more = len(rows) > limit
    return Experiments(experiments=[_view(journal, r, counts=False) for _, r in rows[:limit]],
                       next_cursor=rows[limit - 1][0] if more else None, has_more=more)


def runs(journal: Journal, experiment_id: str, actor: Actor, after: int, limit: int) -> ExperimentRuns:
    experiment = get(journal, experiment_id, actor)
    rows = jexp.members(journal, experiment_id, after, limit + 1)
    more = len(rows) > limit
    return ExperimentRuns(experiment=experiment,
                          members=[ExperimentMember(run_id=r.run_id, role=r.role, hypothesis=r.hypothesis,
                                                    linked_at=_iso(r.linked_at)) for r in rows[:limit]],
                          next_cursor=rows[limit - 1].seq if more else None, has_more=more)


def insert_link(c: sqlite3.Connection, experiment_id: str, run_id: str, role: str, hypothesis: str) -> None:
    """Link a run (inside a write transaction); the same link again is a no-op, a different one a 409."""
    existing = jexp.link_of(c, experiment_id, run_id)
    if existing is not None:
        if existing != (role, hypothesis):
            raise Conflict("This run is already linked with a different role or hypothesis", code="already_linked")
        return
    jexp.insert_link(c, experiment_id, run_id, role, hypothesis, time.time())


def attach(journal: Journal, experiment_id: str, run_id: str, role: str, hypothesis: str, actor: Actor,
           roles_of_run: list[str]) -> Experiment:
    visible(journal, experiment_id, actor)
    if role not in roles_of_run:
        raise InvalidInput(f"Run mode, profile or targets do not match its experiment role ({role}; this run can be: "
                           f"{', '.join(roles_of_run) or 'none'})", code="experiment_role")
    journal.submit_sync(lambda c: insert_link(c, experiment_id, run_id, role, hypothesis.strip()))
    return get(journal, experiment_id, actor)


def delete(journal: Journal, experiment_id: str, actor: Actor) -> ExperimentDeleted:
    def receipt(count: int, at: float) -> ExperimentDeleted:
        return ExperimentDeleted(id=experiment_id, deleted=True, unlinked_runs=count, deleted_at=_iso(at),
                                 runs_deleted=0, model_requests=0)

    gone = jexp.deletion(journal, experiment_id)
    if gone is not None:
        if actor.scope is not None and gone.owner != actor.scope:
            raise NotFound(f"no experiment {experiment_id!r}")
        return receipt(gone.unlinked_runs, gone.deleted_at)
    visible(journal, experiment_id, actor)
    now = time.time()

    def w(c: sqlite3.Connection) -> int:
        active = jexp.active_run_count_in(c, experiment_id)
        if active:
            raise Conflict("Wait for linked runs to finish or cancel them before deleting this experiment",
                           code="experiment_active_runs", details={"active_run_count": active})
        return jexp.delete_experiment(c, experiment_id, now)
    return receipt(journal.submit_sync(w), now)
