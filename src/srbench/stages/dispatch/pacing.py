"""How many cells dispatch at once on the service's loop while the loop lags (issue 41, item 1).

Every run dispatches on the service's one event loop, which also answers HTTP. Each target runs twice its
concurrency in workers, so 50 fast targets at concurrency 8 keep ~400 cells busy: against a zero-latency
endpoint they are almost always ready to run, one pass of the loop runs each of them a step (0.1-0.4 s on
a 2-core host) and a request waits a pass for each of its own steps (GET /health p95 0.4-0.56 s at 100k
cells). The per-target limits bound what an endpoint gets, not what the loop can turn over.

`LoopPacer` measures the loop's lag (how late a 20 ms timer fires) while a run dispatches and decides
every `WINDOW` samples: when all but one were over `HIGH_S` (the loop stayed busy, not one burst of
answers), it lowers how many cells may be in progress across every run of the loop to 3/4 of those in
progress (never below `FLOOR`); when their median is under `LOW_S` it raises the limit again, and lifts it
once nothing waits. A run against slow endpoints (the loop idles between bursts of answers) is not held
back; a CPU-bound one keeps enough cells to keep the CPU busy. Cells start in the order they asked (FIFO
across targets and runs).
"""

from __future__ import annotations

import asyncio
import weakref
from collections import deque

TICK_S = 0.02           # the lag probe's timer
HIGH_S = 0.025          # lag above: fewer cells at once
LOW_S = 0.010           # lag below: more again
FLOOR = 16              # never fewer cells in progress than this (keeps a CPU-bound dispatch busy)
WINDOW = 6              # samples per decision


class LoopPacer:
    """A lag-driven limit on cells in progress, shared by every dispatcher of one loop (`pacer()`)."""

    def __init__(self) -> None:
        self.limit: int | None = None           # None: no limit (the loop keeps up)
        self.active = 0
        self.users = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._samples: list[float] = []
        self._probe: asyncio.Task[None] | None = None

    def attach(self) -> None:
        """A dispatch starts: probe the loop's lag while any runs."""
        self.users += 1
        if self._probe is None or self._probe.done():
            self._probe = asyncio.get_running_loop().create_task(self._watch())

    def detach(self) -> None:
        self.users -= 1
        if self.users == 0:
            self.limit = None
            self._wake()

    async def enter(self) -> None:
        """Wait for a place to run one cell (at once while the loop keeps up)."""
        if not self._waiters and (self.limit is None or self.active < self.limit):
            self.active += 1
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self.leave()                    # given a place as it was cancelled: hand it on
            else:
                self._waiters.remove(fut)
            raise

    def leave(self) -> None:
        self.active -= 1
        self._wake()

    def observe(self, lag_s: float) -> None:
        """One lag sample; every `WINDOW` of them, a multiplicative decrease when all but one were over
        `HIGH_S`, an additive increase (or no limit, when nothing waits) when their median was under `LOW_S`."""
        self._samples.append(lag_s)
        if len(self._samples) < WINDOW:
            return
        ordered = sorted(self._samples)
        self._samples.clear()
        if ordered[1] > HIGH_S:
            self.limit = max(FLOOR, min(self.active, self.limit or self.active) * 3 // 4)
        elif ordered[WINDOW // 2] < LOW_S and self.limit is not None:
            if not self._waiters:
                self.limit = None
            else:
                self.limit += max(1, self.limit // 8)
        self._wake()

    def _wake(self) -> None:
        while self._waiters and (self.limit is None or self.active < self.limit):
            fut = self._waiters.popleft()
            if not fut.done():
                self.active += 1
                fut.set_result(None)

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        while self.users > 0:
            t0 = loop.time()
            await asyncio.sleep(TICK_S)
            if self.users > 0:
                self.observe(loop.time() - t0 - TICK_S)


_PACERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LoopPacer] = weakref.WeakKeyDictionary()


def pacer() -> LoopPacer:
    """The running loop's pacer (one per loop: every run on it shares the loop's time)."""
    loop = asyncio.get_running_loop()
    p = _PACERS.get(loop)
    if p is None:
        p = _PACERS[loop] = LoopPacer()
    return p


__all__ = ["FLOOR", "HIGH_S", "LOW_S", "WINDOW", "LoopPacer", "pacer"]
