"""The idle limit of one streamed call with one timer, not one per chunk (issue 31, item 5).

aiohttp's ``sock_read`` and an ``asyncio.timeout`` around every read each make a timer per received
chunk (a `TimerHandle`, a heap push, a cancellation): about a sixth of the event loop's CPU at 256
streams. `Idle` keeps a deadline that a read only moves; its one timer, when it fires before the
deadline, re-arms itself at the deadline, and once the deadline passed cancels the call's task.
`expired` then turns that cancellation into the idle stop (as ``asyncio.timeout`` does: a
cancellation that came from elsewhere too is left alone).
"""

from __future__ import annotations

import asyncio


class Idle:
    """One call's idle deadline (see the module docstring). Use inside the task it may cancel."""

    def __init__(self, seconds: float) -> None:
        self.loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        self.task = task
        self._base = task.cancelling()
        self.fired = False
        self.deadline = self.loop.time() + seconds
        self._handle = self.loop.call_at(self.deadline, self._check)

    def wait(self, seconds: float) -> None:
        """From now on, `seconds` without data ends the call."""
        self.deadline = self.loop.time() + seconds
        if self.deadline < self._handle.when():       # sooner than the timer (the grace after [DONE])
            self._handle.cancel()
            self._handle = self.loop.call_at(self.deadline, self._check)

    def _check(self) -> None:
        if self.fired:
            return
        if self.loop.time() < self.deadline:
            self._handle = self.loop.call_at(self.deadline, self._check)
            return
        self.fired = True
        self.task.cancel()

    def expired(self) -> bool:
        """In an ``except CancelledError``: True when the cancellation was this limit's alone (the
        caller then stops the call as idle instead of re-raising)."""
        return self.fired and self.task.uncancel() <= self._base

    def close(self) -> None:
        self._handle.cancel()
