"""The collector while runs dispatch (service/runs/heap.py, issue 31 item 5): what is alive at a run's
start is frozen out of the collector's passes, and everything returns to normal when the last run ends."""

from __future__ import annotations

import gc
import subprocess
import sys

from srbench.service.runs.heap import YOUNG, frozen_heap


def test_frozen_while_any_run_dispatches_and_restored_after() -> None:
    before = gc.get_threshold()
    kept = [object()]
    with frozen_heap():
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold()[0] >= YOUNG
        with frozen_heap():                 # a second run, started while the first dispatches
            pass
        assert gc.get_freeze_count() > 0    # the first still dispatches: still frozen
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == before
    assert kept


def test_restored_when_the_run_fails() -> None:
    before = gc.get_threshold()
    try:
        with frozen_heap():
            raise RuntimeError("dispatch failed")
    except RuntimeError:
        pass
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == before


def test_what_dies_while_frozen_is_collected_after() -> None:
    class Node:
        other: object = None

    a, b = Node(), Node()
    a.other, b.other = b, a                 # a cycle: only the collector frees it
    with frozen_heap():
        del a, b                            # garbage now, but frozen: the collector's passes skip it
        gc.collect()
        assert sum(type(o) is Node for o in _frozen_and_live()) == 2     # not collected while frozen
    gc.collect()
    assert not any(type(o) is Node for o in gc.get_objects())


def _frozen_and_live() -> list[object]:
    """Objects the collector tracks, the frozen ones included (gc.get_objects omits them)."""
    gc.unfreeze()
    try:
        return gc.get_objects()
    finally:
        gc.freeze()


def test_the_runs_own_cycles_are_collected_when_the_last_run_ends() -> None:
    class Node:
        other: object = None

    was = gc.isenabled()
    gc.disable()                            # only the collection at the block's end may free them
    try:
        with frozen_heap():
            a, b = Node(), Node()
            a.other, b.other = b, a         # a cycle made while the run dispatches
            del a, b
        assert not any(type(o) is Node for o in gc.get_objects())
    finally:
        if was:
            gc.enable()


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
