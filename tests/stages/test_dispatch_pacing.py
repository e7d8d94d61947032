"""Issue 41 (item 1): the loop pacer (stages/dispatch/pacing.py) lowers how many cells dispatch at once while
the service's loop stays late, never below its floor, not for one burst of answers; it raises the limit again
when the loop keeps up and lifts it once nothing waits; cells start in the order they asked and a cancelled
wait neither leaks nor loses a place. Lag samples are given to `observe` directly: nothing here is timed."""

from __future__ import annotations

import asyncio

from srbench.stages.dispatch import pacing
from srbench.stages.dispatch.pacing import FLOOR, HIGH_S, LOW_S, WINDOW, LoopPacer


def _window(p: LoopPacer, *lags: float) -> None:
    """One decision's samples: `lags`, then the rest of the window at the last of them."""
    for lag in [*lags, *[lags[-1]] * (WINDOW - len(lags))]:
        p.observe(lag)


def test_a_loop_that_stays_late_holds_new_cells_back_and_a_quiet_one_lets_them_go() -> None:
    async def go() -> None:
        p = LoopPacer()
        for _ in range(100):
            await p.enter()                 # no lag seen yet: no limit
        assert p.limit is None and p.active == 100
        _window(p, HIGH_S * 6, *[LOW_S / 2] * (WINDOW - 1))
        assert p.limit is None              # one burst of answers: not held back
        _window(p, LOW_S / 2, HIGH_S * 2)   # all but one late: 3/4 of the cells in progress
        assert p.limit == 75
        for _ in range(15):
            p.leave()
        waiting = [asyncio.ensure_future(p.enter()) for _ in range(10)]
        await asyncio.sleep(0)
        assert [w.done() for w in waiting] == [False] * 10 and p.active == 85
        for _ in range(20):
            p.leave()                       # 65 in progress: 10 places under 75, 10 asked
        await asyncio.sleep(0)
        assert all(w.done() for w in waiting) and p.active == 75
        for _ in range(10):
            _window(p, HIGH_S * 2)          # never below the floor
        assert p.limit == FLOOR
        for _ in range(65):
            p.leave()
        more = [asyncio.ensure_future(p.enter()) for _ in range(20)]
        await asyncio.sleep(0)
        assert p.active == FLOOR and sum(m.done() for m in more) == FLOOR - 10
        _window(p, LOW_S / 2)               # the loop keeps up: more again, while some wait
        assert p.limit == FLOOR + FLOOR // 8
        await asyncio.sleep(0)
        assert p.active == FLOOR + FLOOR // 8
        _window(p, (LOW_S + HIGH_S) / 2)    # in between: as it is
        assert p.limit == FLOOR + FLOOR // 8
        for _ in range(12):
            p.leave()                       # the 12 still waiting go
        await asyncio.sleep(0)
        assert all(m.done() for m in more) and p.active == FLOOR + FLOOR // 8
        _window(p, LOW_S / 2)               # nothing waits: no limit
        assert p.limit is None
    asyncio.run(go())


def test_cells_start_in_the_order_they_asked_and_a_cancelled_wait_loses_nothing() -> None:
    async def go() -> None:
        p = LoopPacer()
        p.limit = 1
        await p.enter()
        order: list[int] = []

        async def cell(i: int) -> None:
            await p.enter()
            order.append(i)

        tasks = [asyncio.ensure_future(cell(i)) for i in range(4)]
        await asyncio.sleep(0)
        tasks[1].cancel()                   # cancelled while waiting: leaves the queue
        await asyncio.sleep(0)
        p.leave()
        await asyncio.sleep(0)
        assert order == [0] and p.active == 1
        p.leave()
        await asyncio.sleep(0)
        assert order == [0, 2]
        tasks[3].cancel()                   # given the place as it was cancelled: hands it on, none leaks
        p.leave()
        await asyncio.sleep(0)
        await asyncio.gather(*tasks, return_exceptions=True)
        assert order == [0, 2] and p.active == 0 and not p._waiters
    asyncio.run(go())


def test_one_pacer_per_loop_probes_only_while_a_dispatch_runs() -> None:
    async def go() -> pacing.LoopPacer:
        p = pacing.pacer()
        assert pacing.pacer() is p
        p.attach()
        p.limit = FLOOR
        await asyncio.sleep(pacing.TICK_S * (WINDOW + 2))     # an idle loop: lag under LOW_S, nothing waits
        assert p.limit is None
        p.detach()
        await asyncio.sleep(pacing.TICK_S * 2)
        assert p._probe is not None and p._probe.done()
        return p
    assert asyncio.run(go()) is not asyncio.run(go())        # another loop, another pacer
