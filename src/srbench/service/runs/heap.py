"""The cyclic garbage collector while runs dispatch (issue 31, item 5).

At 256 streams the collector's passes cost ~0.15 ms of CPU a call (benchmarks/dispatch.py): the calls'
objects age into the older generations, and each full pass re-walks the whole heap — modules, schemas,
the plan and its cases, the service's state — though none of it is garbage. `frozen_heap` leaves what
is alive when a run starts dispatching out of the passes (`gc.freeze`), and lets the youngest
generation grow to `YOUNG` objects before a pass (the default 700 collects 256 streams' live call
state over and over, promoting it to older generations); when the last such run ends the heap rejoins
the collector (`gc.unfreeze`), the thresholds are restored. The collection that frees the runs' own cyclic garbage runs just before,
while the heap of before is still frozen, so it walks only what the runs allocated, not the whole heap
(a full pass at the end of a 2,000-call run cost ~130 ms: 0.05–0.07 ms a call); what was alive before and
died meanwhile is left to the collector's own passes. Measured (benchmarks/dispatch.py, 200 ms / 256):
collector CPU 0.17–0.20 ms a call before the freeze, 0.05–0.07 after.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

YOUNG = 5000                    # the youngest generation's threshold while runs dispatch
_active = [0]                   # runs dispatching inside `frozen_heap` (any event loop of this process)
_saved: list[tuple[int, int, int]] = []     # the thresholds to restore when the last run ends
_lock = threading.Lock()


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
                gc.collect()        # the runs' own cycles: only what is not frozen is walked
                gc.unfreeze()
                gc.set_threshold(*_saved[0])
