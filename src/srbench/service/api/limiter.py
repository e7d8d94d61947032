"""How often a secret may be checked: one token bucket for the whole process — the service's token
checks (service/api/actors.py) and, in the Dashboard's process, its sign-ins — never per address.

A wrong secret spends one check; a right one gives its check back, so the owner's own traffic never
drains the budget. Up to `BURST` checks may happen at once, then `RATE_PER_S` a second: however many
addresses guess, at most ``BURST + RATE_PER_S × t`` wrong secrets are ever compared in ``t`` seconds.
A check over the budget waits its turn, at most `MAX_WAIT_S`; one that would wait longer is refused
unread (a 429 with ``Retry-After``), the right secret too, since answering it would tell a guesser
which of its attempts was right. Nothing accumulates: once the wrong secrets stop, the queue is gone
within `MAX_WAIT_S` and the owner's next attempt is checked at once — no lockout, whatever came before.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable


class CheckLimiter:
    """A global token bucket of secret checks (`reserve`, then `refund` when the secret was right)."""

    RATE_PER_S = 10.0
    BURST = 10.0
    MAX_WAIT_S = 2.0

    def __init__(self, clock: Callable[[], float] = time.monotonic, *, rate_per_s: float = RATE_PER_S,
                 burst: float = BURST, max_wait_s: float = MAX_WAIT_S) -> None:
        self._clock = clock
        self.rate, self.burst, self.max_wait = rate_per_s, burst, max_wait_s
        self._level = burst                 # checks available now; below 0: checks already promised to waiters
        self._at = clock()

    def _refill(self) -> float:
        now = self._clock()
        self._level = min(self.burst, self._level + (now - self._at) * self.rate)
        self._at = now
        return now

    def reserve(self) -> float | None:
        """Take one check: the seconds to wait before making it (0.0: now), or None when it would wait
        longer than `max_wait` (refuse the attempt unread; `retry_after` says for how long)."""
        self._refill()
        wait = max(0.0, (1.0 - self._level) / self.rate)
        if wait > self.max_wait:
            return None
        self._level -= 1.0
        return wait

    def refund(self) -> None:
        """The checked secret was right: its check is given back."""
        self._refill()
        self._level = min(self.burst, self._level + 1.0)

    def retry_after(self) -> int:
        """Whole seconds after which `reserve` would take an attempt again (at least 1)."""
        self._refill()
        return max(1, math.ceil((1.0 - self._level) / self.rate - self.max_wait))

    async def admit(self) -> bool:
        """`reserve`, then wait the turn it gives: True once the check may be made, False if refused."""
        wait = self.reserve()
        if wait is None:
            return False
        if wait > 0:
            await asyncio.sleep(wait)
        return True
