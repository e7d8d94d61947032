"""Run answers in the wire format: a run view (`RunView`) with its owner, its manifest and its experiment
roles, and a page of them (`Runs`).

Plans are immutable objects, so the wire manifest of each plan digest (full and summary) is built
once and kept (bounded) for the service's lifetime.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

from srbench.errors import DamagedObject, NotFound
from srbench.schemas.wire import WireJSON
from srbench.service.api.actors import LOCAL, Actor
from srbench.service.api.responses import Runs, RunView
from srbench.service.journal import owners, pages
from srbench.service.runs.state import RunState
from srbench.service.wire import projections as wire

if TYPE_CHECKING:
    from srbench.service.runs.manager import RunManager

MAX_CACHED = 512


class RunViews:
    def __init__(self, runs: RunManager) -> None:
        self.runs = runs
        self._cache: OrderedDict[str, tuple[WireJSON, WireJSON, list[str]]] = OrderedDict()

    def _plan(self, digest: str) -> tuple[WireJSON, WireJSON, list[str]]:
        hit = self._cache.get(digest)
        if hit is None:
            plan = self.runs.plans.cached(digest)
            hit = (wire.wire_manifest(plan), wire.summary_manifest(plan), wire.experiment_roles(plan))
            self._cache[digest] = hit
            while len(self._cache) > MAX_CACHED:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(digest)
        return hit

    def manifest(self, plan_digest: str) -> WireJSON:
        return self._plan(plan_digest)[0]

    def one(self, view: RunState, *, summary: bool = False) -> RunView:
        owner = owners.run_owner(self.runs.journal, view.id)
        return self._out(view, LOCAL if owner is None else owner, summary)

    def _out(self, view: RunState, owner: str, summary: bool) -> RunView:
        full, short, roles = self._plan(view.plan)
        return wire.wire_run(view, short if summary else full, owner, roles, summary)

    def _listed(self, view: RunState, owner: str) -> RunView:
        """A run of a list. One whose plan object is damaged or missing is listed from its journal row, its
        manifest empty and its error naming the damage: one bad object made every list (the CLI's `runs`, the
        Dashboard's Runs page) an error, hiding every other run."""
        try:
            return self._out(view, owner, True)
        except (DamagedObject, NotFound) as exc:
            damaged = view.model_copy(update={"error": view.error or f"its plan object is unreadable: {exc.message}"})
            return wire.wire_run(damaged, {}, owner, [], True)

    def get(self, run_id: str) -> RunView:
        return self.one(self.runs.get(run_id))

    def list(self, actor: Actor, limit: int | None = None, after: str | None = None) -> Runs:
        """A page of runs, newest first, only what the actor may see (owners from one query), with the
        next page's keyset cursor (`service.pages`). Neither `limit` nor `after`: every run (upstream's
        contract; its clients follow no cursor); `after` alone: a page of 200."""
        if limit is None and after is not None:
            limit = 200
        before = pages.runs_before(after)
        n = -1 if limit is None else limit                # SQLite: LIMIT -1 is no limit
        views = (self.runs.list(n, before) if actor.scope is None
                 else self.runs.list_owned(actor.scope, n, before))
        ids = [v.id for v in views]
        owned = owners.run_owners(self.runs.journal, ids)
        return Runs(runs=[self._listed(v, owned.get(v.id, LOCAL)) for v in views],
                    next_cursor=None if limit is None else pages.runs_cursor([(v.created_at, v.id) for v in views], limit))
