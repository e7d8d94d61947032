"""The frozen plans of runs, validated once: a plan is an immutable object named by its digest, so its `Plan`
is kept (bounded, least recently used first out) for the service's lifetime. `get` still reads the object
every time, as a route did before (a damaged or missing plan object is found and named at every read); only
what never read it again (a run list's targets, the wire manifests) takes the kept one (`cached`). A caller
never changes the `Plan` it is given (it makes a copy: `model_copy`)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from srbench.cas import ObjectStore
from srbench.errors import DamagedObject, NotFound
from srbench.schemas.plan import Plan
from srbench.service.runs.state import TargetInfo

MAX_CACHED = 512


class Plans:
    def __init__(self, store: ObjectStore, size: int = MAX_CACHED) -> None:
        self.store = store
        self.size = size
        self._plans: OrderedDict[str, Plan] = OrderedDict()
        self._lock = threading.Lock()           # read from the event loop and from worker threads

    def get(self, digest: str) -> Plan:
        """The plan object `digest`, read now (a damaged or missing object raises, as `ObjectStore.get_json`
        does) and validated once."""
        return self._plan(digest, self.store.get_json(digest))

    def cached(self, digest: str) -> Plan:
        """The plan object `digest`, read and validated once."""
        return self._plan(digest, None)

    def _plan(self, digest: str, data: Any) -> Plan:
        with self._lock:
            plan = self._plans.get(digest)
            if plan is not None:
                self._plans.move_to_end(digest)
                return plan
        plan = Plan.model_validate(self.store.get_json(digest) if data is None else data)     # outside the lock
        with self._lock:
            self._plans[digest] = plan
            while len(self._plans) > self.size:
                self._plans.popitem(last=False)
        return plan

    def targets(self, digest: str) -> list[TargetInfo]:
        """Each planned target's id, kind and model; none when the plan object is damaged or missing (a run
        list shows the run from its journal row, `wire/views.py`; what reads the plan itself names the damage)."""
        try:
            plan = self.cached(digest)
        except (DamagedObject, NotFound):
            return []
        return [TargetInfo(id=pt.target.id, kind=pt.target.kind, model=pt.target.model) for pt in plan.targets]
