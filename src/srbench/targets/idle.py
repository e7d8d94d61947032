"""The idle and total limits of one streamed call with one timer, not one per chunk (issue 31, item 5).

aiohttp's ``sock_read`` and an ``asyncio.timeout`` around every read each make a timer per received
chunk (a `TimerHandle`, a heap push, a cancellation): about a sixth of the event loop's CPU at 256
streams. `Idle` keeps a deadline that a read only moves, and the call's absolute end (its total
limit, which an ``asyncio.timeout`` around the call would otherwise time with a second timer); its one
timer, when it fires before the nearer of the two, re-arms itself there, and once one passed cancels
the call's task. `expired` then turns that cancellation into the stop (as ``asyncio.timeout`` does: a
cancellation that came from elsewhere too is left alone), and `total` says which limit it was.
"""

from __future__ import annotations

import asyncio


class Idle:
    """One call's idle deadline and end (see the module docstring). Use inside the task it may cancel."""

    def __init__(self, seconds: float, total: float | None = None) -> None:
        """`seconds` without data ends the call (until `wait` moves it), and so does `total` seconds from now."""
        self.loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        self.task = task
        self._base = task.cancelling()
        self.fired = False
        self.total = False              # the limit that fired was the total one
        self._owed = False              # fired, and the cancellation not yet taken back (`expired`, `close`)
        now = self.loop.time()
        self.deadline = now + seconds
        self.end = now + total if total is not None else float("inf")
        self._handle = self.loop.call_at(min(self.deadline, self.end), self._check)

    def wait(self, seconds: float) -> None:
        """From now on, `seconds` without data ends the call."""
        self.deadline = self.loop.time() + seconds
        if self.deadline < self._handle.when():       # sooner than the timer (the grace after [DONE])
            self._handle.cancel()
            self._handle = self.loop.call_at(self.deadline, self._check)

    def _check(self) -> None:
        if self.fired:
            return
        now, due = self.loop.time(), min(self.deadline, self.end)
        if now < due:
            self._handle = self.loop.call_at(due, self._check)
            return
        self.fired, self.total, self._owed = True, now >= self.end, True
        self.task.cancel()

    def expired(self) -> bool:
        """In an ``except CancelledError``: True when the cancellation was this limit's alone (the
        caller then stops the call as idle, or as over its total time when `total`, instead of
        re-raising)."""
        if not self._owed:
            return False
        self._owed = False
        return self.task.uncancel() <= self._base

    def close(self) -> None:
        """The call is over: no timer left, and a cancellation this limit asked for but that never
        reached the call (it ended first) is taken back from the task."""
        self._handle.cancel()
        if self._owed:
            self._owed = False
            self.task.uncancel()
