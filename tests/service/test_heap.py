"""The collector in the service (service/runs/heap.py, issue 31 item 5; issue 38 item 6): what is alive once
the service has started and at a run's start is frozen out of the collector's passes, the thresholds return
to normal when the last run ends, and frozen cycles are reclaimed once the frozen heap grows by a quarter."""

from __future__ import annotations

import gc
import subprocess
import sys

from srbench.service.runs.heap import GROWTH, YOUNG, frozen_heap, settle


def test_frozen_while_any_run_dispatches_and_kept_frozen_after() -> None:
    before = gc.get_threshold()
    kept = [object()]
    with frozen_heap():
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold()[0] >= YOUNG
        with frozen_heap():                 # a second run, started while the first dispatches
            pass
        assert gc.get_threshold()[0] >= YOUNG   # the first still dispatches
    assert gc.get_freeze_count() > 0        # issue 38 (item 6): a full pass never walks the heap kept
    assert gc.get_threshold() == before
    assert kept


def test_restored_when_the_run_fails() -> None:
    before = gc.get_threshold()
    try:
        with frozen_heap():
            raise RuntimeError("dispatch failed")
    except RuntimeError:
        pass
    assert gc.get_threshold() == before


class Node:
    other: object = None


def _cycle() -> None:
    a, b = Node(), Node()
    a.other, b.other = b, a                 # a cycle: only the collector frees it


def test_frozen_cycles_are_reclaimed_once_the_frozen_heap_grows_by_a_quarter() -> None:
    """The rule for frozen garbage (runs/heap.py): kept while the frozen heap grows by less than GROWTH since
    the last reclaim, reclaimed by the first `settle` after it grew more (memory stays bounded)."""
    gc.unfreeze()
    assert settle() is True                 # nothing frozen: a reclaim, the baseline of the rule
    _cycle()
    with frozen_heap():                     # the cycle is frozen with the heap at the run's start
        pass
    gc.collect()
    assert sum(type(o) is Node for o in _frozen_and_live()) == 2     # frozen garbage: a pass cannot free it
    grown = [[i] for i in range(int(gc.get_freeze_count() * GROWTH) + 1000)]   # live objects frozen next
    with frozen_heap():
        pass                                # the last run ends: the frozen heap grew by over a quarter
    assert not any(type(o) is Node for o in _frozen_and_live())
    assert grown


def test_settle_reclaims_only_after_growth() -> None:
    gc.unfreeze()
    assert settle() is True
    assert settle() is False                # nothing grew: no walk of the whole heap
    frozen = gc.get_freeze_count()
    grown = [[i] for i in range(int(frozen * GROWTH) + 1000)]
    assert settle() is False                # the growth is not frozen yet: collected and frozen, not reclaimed
    assert settle() is True and gc.get_freeze_count() >= frozen + len(grown)


def _frozen_and_live() -> list[object]:
    """Objects the collector tracks, the frozen ones included (gc.get_objects omits them)."""
    frozen = gc.get_freeze_count()
    gc.unfreeze()
    try:
        return gc.get_objects()
    finally:
        gc.freeze()
        assert gc.get_freeze_count() >= frozen


def test_the_runs_own_cycles_are_collected_when_the_last_run_ends() -> None:
    was = gc.isenabled()
    gc.disable()                            # only the collection at the block's end may free them
    try:
        with frozen_heap():
            _cycle()                        # a cycle made while the run dispatches
        assert not any(type(o) is Node for o in _frozen_and_live())
    finally:
        if was:
            gc.enable()


_STARTED = """
import gc, sys
from pathlib import Path
from srbench.client.embedded import EmbeddedService
with EmbeddedService(Path(sys.argv[1])) as svc:
    svc.client.get("/health")
    print(gc.get_freeze_count(), len(gc.get_objects()))
"""


def test_a_started_service_keeps_its_heap_out_of_full_passes(tmp_path) -> None:
    """Issue 38 (item 6): a full collection once the service has started walks none of what start-up built
    (~110k objects, ~60 ms a pass: one fired in a request held /health over 100 ms). Its own process."""
    out = subprocess.run([sys.executable, "-c", _STARTED, str(tmp_path / "store")], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    frozen, walked = map(int, out.stdout.split()[-2:])
    assert frozen > 50_000 and walked < frozen // 5, (frozen, walked)


_ALLOCATORS = """
import os, sys
from pathlib import Path
os.environ.pop("ARROW_DEFAULT_MEMORY_POOL", None)
os.environ.pop("MALLOC_ARENA_MAX", None)
from srbench.service.app import Service
service = Service(Path(sys.argv[1]))
import pyarrow
print(pyarrow.default_memory_pool().backend_name)
service.journal.close()
"""


def test_the_service_reads_parquet_through_malloc(tmp_path) -> None:
    """Issue 42 (item 3): a dataset preparation's pyarrow buffers come from glibc malloc, not mimalloc's pool
    (which kept ~22 MiB of them resident for good). In a process of its own: the environment is the service's."""
    out = subprocess.run([sys.executable, "-c", _ALLOCATORS, str(tmp_path / "store")], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["system"]
