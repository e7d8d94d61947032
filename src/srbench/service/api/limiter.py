"""How often a secret may be checked, and whose attempt is checked first (issue 38, item 8): one limiter for
the whole process — the service's token checks (service/api/actors.py) and, in the Dashboard's process,
its sign-ins. docs/service.md ("Guessing is bounded, nobody is locked out") gives the reasoning.

- **The rate is global.** A token bucket: `BURST` checks at once, then `RATE_PER_S` a second, whatever
  the number of addresses. A wrong secret spends a check; a right one gives it back (the owner's own
  traffic never drains the budget). So at most ``BURST + RATE_PER_S × t`` wrong secrets are ever compared
  in ``t`` seconds.
- **The order is fair.** An attempt over the budget waits for a check instead of being refused. The
  waiting attempts are checked in the order of their source's *rank* — the wrong secrets it sent in the
  last `FORGET_S` seconds plus its attempts already waiting — then of arrival. So an address that has
  guessed nothing (the owner's) goes before every address that has guessed wrong, however many there
  are, and a flood's own attempts sort behind one another.
- **The wait is bounded.** At most `MAX_WAITING` attempts wait (two seconds of checks); when one more
  arrives, the one farthest back (the highest rank, then the latest) is refused unread — a 429 with
  ``Retry-After``; nobody waits more than `MAX_WAIT_S`. An attempt from a source with rank 0 is refused
  only when `MAX_WAITING` attempts of rank 0 arrived before it, i.e. while never-seen addresses arrive at
  the full rate: each one can jump the queue once, then it has guessed wrong.

A source is an IPv4 address or an IPv6 address's /64 (one host commonly holds a whole /64; `source_of`).
A right secret forgets its source's wrong ones and puts the source ahead of every other for `FORGET_S`
seconds (rank -1: the owner's typo after signing in costs no place). The sources remembered are bounded
(`MAX_SOURCES` of each kind, the longest quiet forgotten first).
"""

from __future__ import annotations

import asyncio
import heapq
import ipaddress
import math
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

_EPS = 1e-9
V = TypeVar("V")


def source_of(peer: str | None) -> str:
    """The source an attempt counts against: its IPv4 address (an IPv4-mapped IPv6 one included), its IPv6
    address's /64, or the peer as given when it is no IP address ("" when unknown: a Unix socket)."""
    try:
        ip = ipaddress.ip_address(peer or "")
    except ValueError:
        return peer or ""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


@dataclass(order=True)
class _Turn:
    """An attempt waiting for a check: checked by (rank, arrival)."""

    rank: int
    seq: int
    source: str = field(compare=False)
    future: asyncio.Future[bool] = field(compare=False)
    waiting: bool = field(default=True, compare=False)


class CheckLimiter:
    """Secret checks for one process: `admit` (wait for a check, or be refused), then `settle` (right or wrong)."""

    RATE_PER_S = 10.0
    BURST = 10.0
    MAX_WAITING = 20            # attempts waiting at once: two seconds of checks
    MAX_WAIT_S = 4.0            # no attempt waits longer (one passed by lower ranks is refused then)
    FORGET_S = 900.0            # a source's wrong secrets count this long after its last
    MAX_SOURCES = 65_536        # sources remembered

    def __init__(self, clock: Callable[[], float] = time.monotonic, *, rate_per_s: float = RATE_PER_S,
                 burst: float = BURST, max_waiting: int = MAX_WAITING, max_wait_s: float = MAX_WAIT_S) -> None:
        self._clock = clock
        self.rate, self.burst, self.max_waiting, self.max_wait = rate_per_s, burst, max_waiting, max_wait_s
        self._level = burst                     # checks available now
        self._at = clock()
        self._wrong: OrderedDict[str, tuple[int, float]] = OrderedDict()   # source → (wrong secrets, last at)
        self._right: OrderedDict[str, float] = OrderedDict()              # source → when it was last right
        self._heap: list[_Turn] = []            # the waiting turns (and turns no longer waiting, dropped lazily)
        self._queued: Counter[str] = Counter()  # turns waiting, per source
        self._live = 0                          # turns waiting in all
        self._seq = 0
        self._timer: asyncio.TimerHandle | None = None
        self.checks = 0                         # checks made (granted) since the start
        self.refused = 0                        # attempts refused unread since the start

    def _refill(self) -> float:
        now = self._clock()
        self._level = min(self.burst, self._level + (now - self._at) * self.rate)
        self._at = now
        return now

    def _recent(self, source: str) -> int:
        """The source's wrong secrets in the last `FORGET_S` seconds."""
        wrong, at = self._wrong.get(source, (0, 0.0))
        if wrong and self._clock() - at > self.FORGET_S:
            del self._wrong[source]
            wrong = 0
        return wrong

    def rank(self, source: str) -> int:
        """Where an attempt of `source` queues: its attempts waiting now, plus its wrong secrets in the last
        `FORGET_S` seconds, or -1 when it was right in that time."""
        right = self._right.get(source)
        if right is not None and self._clock() - right > self.FORGET_S:
            del self._right[source]
            right = None
        return self._queued[source] + (-1 if right is not None else self._recent(source))

    @staticmethod
    def _bounded(seen: OrderedDict[str, V], source: str, value: V, most: int) -> None:
        seen[source] = value
        seen.move_to_end(source)
        while len(seen) > most:
            seen.popitem(last=False)

    def settle(self, source: str, right: bool) -> None:
        """The secret checked for `source` was `right` (its check is given back and the source's wrong
        secrets forgotten) or wrong (counted against the source)."""
        if right:
            self._refill()
            self._level = min(self.burst, self._level + 1.0)
            self._wrong.pop(source, None)
            self._bounded(self._right, source, self._clock(), self.MAX_SOURCES)
            self._schedule()
            return
        self._bounded(self._wrong, source, (self._recent(source) + 1, self._clock()), self.MAX_SOURCES)

    def retry_after(self) -> int:
        """Whole seconds after which a refused attempt would find room (at least 1)."""
        self._refill()
        return max(1, math.ceil((self._live + 1 - self._level) / self.rate))

    async def admit(self, source: str) -> bool:
        """True once a check may be made for `source` (at once when nothing waits and the budget allows),
        False when the attempt is refused unread (it is the farthest back of a full queue, or it was
        passed over for `max_wait` seconds)."""
        self._refill()
        if self._live == 0 and self._level >= 1.0 - _EPS:
            self._level -= 1.0
            self.checks += 1
            return True
        self._seq += 1
        turn = _Turn(self.rank(source), self._seq, source, asyncio.get_running_loop().create_future())
        if self._live >= self.max_waiting:
            farthest = max(t for t in self._heap if t.waiting)
            if farthest < turn:
                self.refused += 1
                return False
            self._leave(farthest)
            self.refused += 1
            if not farthest.future.done():                  # (its request may be gone)
                farthest.future.set_result(False)
        heapq.heappush(self._heap, turn)
        self._queued[source] += 1
        self._live += 1
        self._schedule()
        try:
            return await asyncio.wait_for(turn.future, self.max_wait)
        except TimeoutError:
            self.refused += 1
            return False
        finally:
            self._leave(turn)

    def _leave(self, turn: _Turn) -> None:
        """`turn` no longer waits (checked, refused, timed out or its request gone)."""
        if not turn.waiting:
            return
        turn.waiting = False
        self._live -= 1
        self._queued[turn.source] -= 1
        if self._queued[turn.source] <= 0:
            del self._queued[turn.source]
        if len(self._heap) > 2 * self._live + 64:          # drop the turns that left
            self._heap = [t for t in self._heap if t.waiting]
            heapq.heapify(self._heap)

    def _schedule(self) -> None:
        """Check the waiting turns the budget allows now, and wake again when the next check is due."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._refill()
        while self._live and self._level >= 1.0 - _EPS:
            turn = heapq.heappop(self._heap)
            if not turn.waiting or turn.future.done():
                self._leave(turn)
                continue
            self._leave(turn)
            self._level -= 1.0
            self.checks += 1
            turn.future.set_result(True)
        if self._live:
            delay = (1.0 - self._level) / self.rate
            self._timer = asyncio.get_running_loop().call_later(max(0.0, delay), self._schedule)
