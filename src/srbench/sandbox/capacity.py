"""How much grading this host runs at once: its cores (cgroup-aware) as one weighted budget (issue 31).

`available_cores` is what the process may really use: the CPUs it is allowed on
(``sched_getaffinity``), fewer when its cgroup has a CPU quota (v2 ``cpu.max``, v1
``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``), and ``SR_BENCH_GRADING_CONCURRENCY`` when set. The
process's `GRADING` budget holds that many units: a code-grading job takes its sandbox's CPUs (1 by
default), a Terminal-Bench trial the CPU cap of its container, so grading and trials together never
ask for more cores than there are. A job larger than the whole budget runs alone.
"""

from __future__ import annotations

import asyncio
import math
import os
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

CGROUP = Path("/sys/fs/cgroup")
ENV = "SR_BENCH_GRADING_CONCURRENCY"


def _quota_cpus(root: Path) -> float | None:
    """The CPU quota of this process's cgroup in CPUs, or None when it has none (or none is readable)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    found: list[float] = []
    for line in lines:
        _, controllers, rel = line.split(":", 2)
        rel = rel.lstrip("/")
        if controllers == "":                          # v2: cpu.max up the tree, the tightest one
            d = root / rel
            while True:
                try:
                    quota, period = (d / "cpu.max").read_text().split()
                    if quota != "max":
                        found.append(int(quota) / int(period))
                except (OSError, ValueError):
                    pass
                if d == root or d.parent == d:
                    break
                d = d.parent
        elif "cpu" in controllers.split(","):
            for base in (root / "cpu,cpuacct" / rel, root / "cpu" / rel):
                try:
                    q = int((base / "cpu.cfs_quota_us").read_text())
                    p = int((base / "cpu.cfs_period_us").read_text())
                except (OSError, ValueError):
                    continue
                if q > 0 and p > 0:
                    found.append(q / p)
                break
    return min(found) if found else None


def available_cores(root: Path = CGROUP) -> int:
    """The cores this process may use (see the module docstring); at least 1."""
    env = os.environ.get(ENV, "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    quota = _quota_cpus(root)
    if quota is not None:
        n = min(n, max(1, math.ceil(quota)))
    return max(1, n)


class Budget:
    """A weighted semaphore of `capacity` units (threads; async code acquires it in a thread)."""

    def __init__(self, capacity: float) -> None:
        self.capacity = float(capacity)
        self.used = 0.0
        self.peak = 0.0
        self._cond = threading.Condition()

    def acquire(self, units: float) -> float:
        units = min(float(units), self.capacity)       # a job larger than the budget runs alone
        with self._cond:
            self._cond.wait_for(lambda: self.used + units <= self.capacity + 1e-9)
            self.used += units
            self.peak = max(self.peak, self.used)
        return units

    def try_acquire(self, units: float) -> float | None:
        units = min(float(units), self.capacity)
        with self._cond:
            if self.used + units > self.capacity + 1e-9:
                return None
            self.used += units
            self.peak = max(self.peak, self.used)
        return units

    def release(self, units: float) -> None:
        with self._cond:
            self.used = max(0.0, self.used - units)
            self._cond.notify_all()

    @contextmanager
    def hold(self, units: float) -> Iterator[None]:
        got = self.acquire(units)
        try:
            yield
        finally:
            self.release(got)


    @asynccontextmanager
    async def held(self, units: float, poll_s: float = 0.05) -> AsyncIterator[None]:
        """`hold` for async code: waits without a thread, so a cancelled wait holds nothing."""
        while (got := self.try_acquire(units)) is None:
            await asyncio.sleep(poll_s)
        try:
            yield
        finally:
            self.release(got)


GRADING = Budget(available_cores())
