"""Issue 41 (item 1): every cell of a run dispatches through its loop's pacer (stages/dispatch/pacing.py),
so a loop that lags holds new cells back: with every lag sample read as too high and a floor of two, the run
still completes every cell (no deadlock with the per-target limits) and from the first sample on
no more than two cells are in progress; the pacer ends idle. Nothing here is timed."""

from __future__ import annotations

from typing import Any

import pytest

from srbench.stages.dispatch import pacing

from .helpers import Api, freeze, manifest, single


def test_a_lagging_loop_dispatches_two_cells_at_a_time_and_the_run_completes(
        api: Api, sim: Any, prepare: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    def lagging(self: pacing.LoopPacer, lag_s: float) -> None:
        self.limit = 2                                  # every sample lags: the limit at a floor of 2
        self._wake()
    monkeypatch.setattr(pacing.LoopPacer, "observe", lagging)
    seen: list[tuple[int, int | None]] = []
    pacers: list[pacing.LoopPacer] = []
    enter = pacing.LoopPacer.enter

    async def spied(self: pacing.LoopPacer) -> None:
        await enter(self)
        seen.append((self.active, self.limit))
        pacers.append(self)
    monkeypatch.setattr(pacing.LoopPacer, "enter", spied)

    ds = prepare("mmlu-pro")
    api.ok("POST", "/targets", {"targets": [single("strong", sim.v1_url, "sim-strong"),
                                            single("weak", sim.v1_url, "sim-weak")]})
    m = manifest(ds, [{"id": "strong"}, {"id": "weak"}])
    m["limits"]["concurrency"] = 4
    run = api.ok("POST", "/runs", {"manifest": freeze(api, m)})
    view = api.wait(run["id"])
    assert view["status"] == "completed" and view["progress"]["completed"] == 28
    assert len(seen) >= 28 and len(sim.log) == 28           # a worker may find its target's cells taken meanwhile
    limited = [(active, limit) for active, limit in seen if limit is not None]
    assert limited and max(active for active, _ in limited) == 2, seen
    p = pacers[0]
    assert p.active == 0 and p.users == 0 and p.limit is None
