"""The cyclic garbage collector in the service (issue 31, item 5; issue 38, item 6).

A full (generation-2) pass walks every object the collector tracks, though nearly none is garbage: once the
service has started, ~110k objects (modules, schemas, the app), 57–68 ms on this 2-core host; such a pass
fired inside a request held `/health` 80–200 ms, and at 256 streams the passes cost ~0.15 ms of CPU a call
(benchmarks/dispatch.py). So the heap the service keeps is frozen (`gc.freeze`: out of every pass), and a
pass walks only what was allocated since the last freeze:

- `settle()`, once the service has started (`service.app.serve`): one collection, then all that is alive is
  frozen;
- `frozen_heap()` while runs dispatch or a report is built: what is alive at its start is frozen and the
  youngest generation may grow to `YOUNG` objects before a pass (the default 700 collects 256 streams' live
  call state over and over, promoting it to older generations); when the last such block ends, one
  collection of what is not frozen (the runs' own cycles: a full pass at the end of a 2,000-call run walking
  the whole heap cost ~130 ms), then what survives is frozen too (`settle`), the thresholds are restored.

Frozen garbage: an object frozen while alive that later dies is freed by reference counting as usual, but one
that dies in a cycle is not freed until the heap is unfrozen. The rule: `settle()` *reclaims* — unfreezes, one
full collection, freezes again — when the frozen heap has grown by more than `GROWTH` (a quarter, the
collector's own rule for its full passes) since the last reclaim. So frozen objects, that garbage included,
stay within 1.25× of what was alive at the last reclaim plus what one busy period froze; a reclaim is one walk
of the whole heap, when the service starts or the last run ends, never inside a request.
Measured (benchmarks/dispatch.py, 200 ms / 256): collector CPU 0.17–0.20 ms a call before the freeze, 0.05–0.07
after; request_cost.py: benchmarks/README.md.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

YOUNG = 5000                    # the youngest generation's threshold while runs dispatch
GROWTH = 0.25                   # the frozen heap's growth since the last reclaim that makes `settle` reclaim
_active = [0]                   # runs dispatching inside `frozen_heap` (any event loop of this process)
_saved: list[tuple[int, int, int]] = []     # the thresholds to restore when the last run ends
_reclaimed = [0]                # objects frozen just after the last reclaim (0: none yet)
_lock = threading.RLock()


def settle() -> bool:
    """Collect what is not frozen, then freeze all that is alive; first unfreeze (reclaim) when nothing is
    frozen yet or the frozen heap has grown by more than `GROWTH` since the last reclaim. True if it reclaimed."""
    with _lock:
        frozen = gc.get_freeze_count()
        whole = frozen == 0 or frozen > _reclaimed[0] * (1 + GROWTH)
        if whole:
            gc.unfreeze()
        gc.collect()
        gc.freeze()
        if whole:
            _reclaimed[0] = gc.get_freeze_count()
        return whole


@contextlib.contextmanager
def frozen_heap() -> Iterator[None]:
    """Freeze the heap as it is for the time of the block (see the module docstring)."""
    with _lock:
        _active[0] += 1
        if _active[0] == 1:
            _saved[:] = [gc.get_threshold()]
            young, older, oldest = _saved[0]
            gc.set_threshold(max(young, YOUNG), older, oldest)
        gc.freeze()
    try:
        yield
    finally:
        with _lock:
            _active[0] -= 1
            if _active[0] == 0:
                settle()            # the runs' own cycles: only what is not frozen is walked, unless it reclaims
                gc.set_threshold(*_saved[0])
