"""Issue 41 (item 1): a running run's figures so far (GET /runs/{id}/live, service/runs/live.py) are the report's.

The simulator is held at a few moments of the run (a request waits until the test lets it go), so nothing
finishes while the test compares: once the live figures hold every finished cell, each target's figures
equal those of the report rebuilt from every cell at that moment (GET /report of a running run). A
benchmark graded in a sandbox is folded too (its grading pool's rows), and each target's planned cells
are the plan's own (a recovery child's selection differs per target).
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.helpers import Api, freeze, manifest, sandbox_api, single
from service.sandbox_fakes import CountingSandbox
from srbench.service.runs import report_rows
from srbench.service.runs.live import planned_cells
from srbench.simulate import samples
from srbench.simulate.behaviour import SimModel, load_answer_key
from srbench.simulate.server import Fault
from srbench.simulate.thread import SimulatorThread
from srbench.stages.grading import code as code_grade

SLOW = {"concurrency": 1, "total_timeout_s": 60, "idle_timeout_s": 60, "case_timeout_s": 60, "max_run_seconds": 120}


class Gate:
    """The simulator's fault hook: the requests numbered in `at` (by arrival) wait until `release`; a
    request whose model is `fail_model` answers 500 every `fail_every`-th time."""

    def __init__(self, at: set[int], fail_model: str | None = None, fail_every: int = 5) -> None:
        self.at, self.n, self.fail_model, self.fail_every = at, 0, fail_model, fail_every
        self.held, self.go = threading.Event(), threading.Event()

    def __call__(self, body: dict[str, Any]) -> Fault | None:
        self.n += 1
        if self.n in self.at:
            self.go.clear()
            self.held.set()
            self.go.wait(30)            # the simulator's loop waits: no cell of the run finishes meanwhile
        if body.get("model") == self.fail_model and self.n % self.fail_every == 0:
            return Fault(status=400, body='{"error": {"message": "refused"}}', label="400")
        return None

    def release(self) -> None:
        self.held.clear()
        self.go.set()


def _finished(progress: dict[str, int]) -> int:
    return progress["completed"] + progress["failed"] + progress["ambiguous"] + progress["cancelled"]


def _same_as_rebuilt(api: Api, run_id: str) -> dict[str, Any]:
    """Wait until the live figures hold every finished cell, then hold them against the report rebuilt now."""
    deadline = time.monotonic() + 30
    while True:
        live = api.ok("GET", f"/runs/{run_id}/live")
        if live["folded"] == _finished(live["progress"]):
            break
        assert time.monotonic() < deadline, f"the live figures hold {live['folded']} cells of {live['progress']}"
        time.sleep(0.05)
    report = api.ok("GET", f"/runs/{run_id}/report")
    assert report["status"] == "running" == live["status"]
    summary = {t["target_id"]: t for t in report["summary"]["targets"]}
    for t in live["targets"]:
        s = summary[t["target_id"]]
        assert (t["planned"], t["finished"], t["answered"], t["failed"], t["correct"]) == (
            s["total"], s["completed"] + s["failed"], s["completed"], s["failed"], s["correct"] or 0), (t, s)
        assert t["known_cost_usd"] == pytest.approx(s["known_cost_usd"], rel=1e-9, abs=1e-12)
        if t["cost_usd"] is not None:       # every finished cell's cost known: the cost so far is the known cost
            assert t["cost_usd"] == t["known_cost_usd"]
        assert t["accuracy_answered"] == pytest.approx(s["accuracy_answered"])
        assert t["accuracy_planned"] == pytest.approx(s["accuracy"])
    return live


def _moments(api: Api, gate: Gate, run_id: str) -> list[int]:
    """At each held request: the live figures against the rebuilt report; the cells they held, in order."""
    seen: list[int] = []
    try:
        for _ in gate.at:
            assert gate.held.wait(60), "the run never reached the next held request"
            seen.append(_same_as_rebuilt(api, run_id)["folded"])
            gate.release()
    finally:
        gate.at = set()
        gate.release()
    return seen


def test_the_live_figures_are_the_rebuilt_reports_at_several_moments(api, service, prepare) -> None:
    ds = prepare("mmlu-pro")
    gate = Gate({6, 13, 21}, fail_model="weak")
    with SimulatorThread(models=[SimModel("strong", skill=0.85), SimModel("weak", skill=0.4)]) as sim:
        sim.set_fault(gate)
        api.ok("POST", "/targets", {"targets": [single("strong", sim.v1_url), single("weak", sim.v1_url)]})
        m = manifest(ds, [{"id": "strong"}, {"id": "weak"}])
        m["limits"] = dict(SLOW)
        run_id = api.ok("POST", "/runs", {"manifest": freeze(api, m)})["id"]
        seen = _moments(api, gate, run_id)
        run = api.wait(run_id, timeout=60)
    assert seen == sorted(seen) and seen[0] > 0 and len(set(seen)) == 3, seen
    assert run["progress"]["failed"] > 0            # failed cells are among the figures compared


@pytest.fixture
def sandboxed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    with sandbox_api(tmp_path, monkeypatch) as a:
        yield a


def test_cells_graded_in_a_sandbox_are_folded_too(sandboxed: Api, tmp_path: Path) -> None:
    """Their rows come from the grading pool, not the row builder: they were never folded (the figures of a
    code benchmark stayed at 0 cells while its run went)."""
    api = sandboxed
    code_grade.use_sandbox(CountingSandbox(delay_s=0.02))
    src = samples.write_livecodebench(tmp_path / "lcb", copies=8)
    ds = api.ok("POST", "/datasets/prepare", {"benchmark": "livecodebench", "profile": "quick",
                                             "source_path": str(src), "revision": "synthetic"})
    gate = Gate({5, 17})
    with SimulatorThread(models=[SimModel("a", skill=0.7)], answer_key=load_answer_key(ds["path"])) as sim:
        sim.set_fault(gate)
        api.ok("POST", "/targets", {"targets": [single("a", sim.v1_url, "a")]})
        m = manifest(ds, [{"id": "a"}])
        m["limits"] = dict(SLOW)
        run_id = api.ok("POST", "/runs", {"manifest": freeze(api, m)})["id"]
        seen = _moments(api, gate, run_id)
        run = api.wait(run_id, timeout=90)
    assert run["status"] == "completed" and seen[0] >= 4 and seen[1] > seen[0], seen


def test_each_targets_planned_cells_are_the_plans(api, service, prepare) -> None:
    """A recovery child runs a selection of cells that differs per target: its planned cells were the run's
    total shared out evenly."""
    ds = prepare("mmlu-pro")
    with SimulatorThread(models=[SimModel("m", skill=0.5)]) as sim:
        api.ok("POST", "/targets", {"targets": [single("a", sim.v1_url, "m"), single("b", sim.v1_url, "m")]})
        run = api.wait(api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "a"}, {"id": "b"}]))})["id"])
    plan = service.service.runs.plans.cached(run["plan"])
    n = plan.dataset.case_count
    assert n and planned_cells(plan, 2 * n) == {"a": n, "b": n}
    cells = [["c1", "a"], ["c2", "a"], ["c3", "a"], ["c1", "b"]]
    assert planned_cells(plan.model_copy(update={"execution_cells": cells}), 4) == {"a": 3, "b": 1}


def test_rows_are_built_while_the_worker_process_starts(api, service, prepare, monkeypatch) -> None:
    """The worker process takes seconds to import on a busy host; until it says it is ready the service
    builds the rows itself (the figures waited for it: the first seconds of a run were never folded)."""
    class Starting(report_rows.worker.WorkerProcess):
        def __init__(self, *a: Any) -> None:       # a worker that never gets ready (it reads until it is closed)
            self.proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.buffer.read()"],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            assert self.proc.stdin is not None and self.proc.stdout is not None
            self.stdin, self.stdout, self._ready = self.proc.stdin, self.proc.stdout, False
            started.append(self)
    started: list[Starting] = []
    monkeypatch.setattr(report_rows.worker, "WorkerProcess", Starting)
    ds = prepare("mmlu-pro")
    gate = Gate({9})
    with SimulatorThread(models=[SimModel("m", skill=0.6)]) as sim:
        sim.set_fault(gate)
        api.ok("POST", "/targets", {"targets": [single("m", sim.v1_url)]})
        m = manifest(ds, [{"id": "m"}])
        m["limits"] = dict(SLOW)
        run_id = api.ok("POST", "/runs", {"manifest": freeze(api, m)})["id"]
        seen = _moments(api, gate, run_id)
        api.wait(run_id, timeout=60)
    assert seen == [8] and started and not any(w._ready for w in started)
