"""Storage faults and damaged objects at the service's edge.

A damaged object (bytes that no longer hash to their name) is never served as good: the route that
needed it answers a `DamagedObject` error, a page that lists it marks that row damaged, and the
first sighting of each digest is recorded as an ``object_damaged`` event (on the run it belongs to,
else on the pseudo-run ``store``) and logged. Recording is best effort and never blocks a read: a
store that is full still answers reads.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from srbench.errors import DamagedObject
from srbench.schemas.event_data import ObjectDamaged
from srbench.service.journal.writer import add_event

if TYPE_CHECKING:
    from srbench.service.app import Service

log = logging.getLogger("srbench.service")
STORE_EVENTS = "store"          # the run id of store-level events (no run owns the object)


class DamageLog:
    """Digests already reported in this process (one event per digest and run, not one per read)."""

    def __init__(self) -> None:
        self._seen: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def first(self, digest: str, run_id: str) -> bool:
        with self._lock:
            if (digest, run_id) in self._seen:
                return False
            self._seen.add((digest, run_id))
            return True

    def forget(self, digest: str) -> None:
        with self._lock:
            self._seen = {s for s in self._seen if s[0] != digest}


def record_damage(service: Service, exc: DamagedObject, run_id: str | None, where: str) -> None:
    """Log and (once per digest and run) journal an ``object_damaged`` event, without waiting for it."""
    owner = run_id or STORE_EVENTS
    if not service.damage.first(exc.digest, owner):
        return
    log.warning("damaged object %s (read for %s)", exc.digest, where)
    data = ObjectDamaged(digest=exc.digest, where=where, message=exc.message)
    try:   # from any thread; a full disk must not fail the read, so the outcome is only looked at
        fut = service.journal.submit_nowait(lambda c: add_event(c, owner, "object_damaged", data))
    except RuntimeError:          # the journal is closing
        return
    fut.add_done_callback(lambda f: f.exception())
