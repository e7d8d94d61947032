"""Issue 31: each cell's grade computed once whatever threads ask (engine claims), and sandbox cells
graded while the run dispatches, so the end-of-run report only aggregates."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from service.helpers import Api, freeze, manifest, sandbox_api, single
from service.sandbox_fakes import CountingSandbox
from srbench.cas import ObjectStore
from srbench.rules import Engine, Rule
from srbench.rules.engine import MemoryActionCache
from srbench.simulate import samples
from srbench.simulate.behaviour import SimModel, load_answer_key
from srbench.simulate.thread import SimulatorThread
from srbench.stages.grading import code as code_grade


def _many(engine: Engine, rule: Rule, n: int) -> list[str]:
    out: list[str] = []
    gate = threading.Barrier(n)

    def ask() -> None:
        gate.wait()
        out.append(engine.build(rule, {"x": "1"}).output)
    threads = [threading.Thread(target=ask) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def test_a_key_asked_by_many_threads_at_once_is_built_once(tmp_path: Path) -> None:
    calls: list[int] = []

    def slow(store, inputs, params):  # type: ignore[no-untyped-def]
        calls.append(1)
        time.sleep(0.2)
        return {"v": inputs["x"]}
    engine = Engine(ObjectStore(str(tmp_path / "s")), MemoryActionCache())
    outs = _many(engine, Rule("slow", "1", slow), 8)
    assert len(calls) == 1 and len(set(outs)) == 1 and len(outs) == 8
    assert engine.build(Rule("slow", "1", slow), {"x": "1"}).hit and len(calls) == 1


def test_a_claim_that_fails_lets_a_waiter_build(tmp_path: Path) -> None:
    calls: list[int] = []

    def flaky(store, inputs, params):  # type: ignore[no-untyped-def]
        calls.append(1)
        time.sleep(0.1)
        if len(calls) == 1:
            raise RuntimeError("passing fault")
        return {"ok": True}
    engine = Engine(ObjectStore(str(tmp_path / "s")), MemoryActionCache())
    outs: list[str] = []
    errors: list[Exception] = []

    def ask() -> None:
        try:
            outs.append(engine.build(Rule("flaky", "1", flaky), {"x": "1"}).output)
        except RuntimeError as exc:
            errors.append(exc)
    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(errors) == 1 and len(outs) == 3 and len(set(outs)) == 1 and len(calls) == 2


@pytest.fixture
def api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    with sandbox_api(tmp_path, monkeypatch) as a:
        yield a


def test_each_cell_is_sandboxed_once_and_graded_during_dispatch(api: Api, tmp_path: Path) -> None:
    fake = CountingSandbox(delay_s=0.05)
    code_grade.use_sandbox(fake)
    src = samples.write_livecodebench(tmp_path / "lcb", copies=8)
    ds = api.ok("POST", "/datasets/prepare", {"benchmark": "livecodebench", "profile": "quick",
                                             "source_path": str(src), "revision": "synthetic"})
    assert ds["case_count"] == 30
    models = [SimModel("a", skill=1.0, latency_s=0.2), SimModel("b", skill=0.0, latency_s=0.2)]
    with SimulatorThread(models=models, answer_key=load_answer_key(ds["path"])) as sim:
        api.ok("POST", "/targets", {"targets": [single("a", sim.v1_url, "a"), single("b", sim.v1_url, "b")]})
        plan = manifest(ds, [{"id": "a"}, {"id": "b"}])
        plan["limits"]["concurrency"] = 2
        run = api.wait(api.ok("POST", "/runs", {"manifest": freeze(api, plan)})["id"], timeout=90)
    assert run["status"] == "completed", run
    rep = api.ok("GET", f"/runs/{run['id']}/report")
    assert rep["summary"]["targets"][0]["graded"] == 30
    assert len(fake.runs) == 60                       # one sandbox run per cell, not one per asker
    assert all(r["thread"].startswith("sr-bench-grade-") for r in fake.runs), {r["thread"] for r in fake.runs}
    ended = datetime.fromisoformat(run["finished_at"].replace("Z", "+00:00")).timestamp()
    before = sum(r["ended"] <= ended for r in fake.runs)
    assert before >= 30, f"only {before} of 60 cells graded before the run ended"
    assert api.ok("GET", f"/runs/{run['id']}/report")["cache_hit"] is True and len(fake.runs) == 60


def _lcb_run(api: Api, tmp_path: Path, limits: dict | None = None, latency_s: float = 0.05) -> tuple[dict, dict]:
    src = samples.write_livecodebench(tmp_path / "lcb", copies=8)
    ds = api.ok("POST", "/datasets/prepare", {"benchmark": "livecodebench", "profile": "quick",
                                             "source_path": str(src), "revision": "synthetic"})
    with SimulatorThread(models=[SimModel("a", skill=1.0, latency_s=latency_s)],
                         answer_key=load_answer_key(ds["path"])) as sim:
        api.ok("POST", "/targets", {"targets": [single("a", sim.v1_url, "a")]})
        m = manifest(ds, [{"id": "a"}])
        m["limits"].update(limits or {})
        plan = freeze(api, m)
        run = api.wait(api.ok("POST", "/runs", {"manifest": plan})["id"], timeout=90)
    api.ok("GET", f"/runs/{run['id']}/report")
    return plan, m


def test_grading_runs_on_every_core_by_default(api: Api, tmp_path: Path, monkeypatch) -> None:
    from srbench.sandbox import capacity

    monkeypatch.setattr(capacity, "GRADING", capacity.Budget(3))
    fake = CountingSandbox(delay_s=0.3)
    code_grade.use_sandbox(fake)
    plan, _ = _lcb_run(api, tmp_path, {"concurrency": 8})
    assert "grading_concurrency" not in plan["limits"]      # unset: absent, old plans keep their digest
    assert len(fake.runs) == 30 and 2 <= fake.peak <= 3


def test_the_plan_caps_a_benchmarks_grading_concurrency(api: Api, tmp_path: Path, monkeypatch) -> None:
    from srbench.sandbox import capacity

    monkeypatch.setattr(capacity, "GRADING", capacity.Budget(3))
    fake = CountingSandbox(delay_s=0.1)
    code_grade.use_sandbox(fake)
    plan, m = _lcb_run(api, tmp_path, {"concurrency": 8, "grading_concurrency": {"livecodebench": 1}})
    assert plan["limits"]["grading_concurrency"] == {"livecodebench": 1}
    assert len(fake.runs) == 30 and fake.peak == 1
    status, err = api.call("POST", "/plans", {"manifest": {**m, "limits": {
        **m["limits"], "grading_concurrency": {"mmlu-pro": 2}}}})
    assert status == 400 and "limits.grading_concurrency names mmlu-pro" in err["error"], err


def test_a_closing_pool_drops_its_queue_and_frees_its_waiters(tmp_path: Path) -> None:
    from srbench.service.runs.grading import GradePool

    pool = GradePool(None, None)  # type: ignore[arg-type]   # no job runs: the run is not active once closed
    pool.begin("run-x")
    pool._pending["run-x"] = 3
    waiter_done = threading.Event()
    t = threading.Thread(target=lambda: (pool.wait("run-x", 30), waiter_done.set()))
    t.start()
    pool.close()
    assert waiter_done.wait(5) and "run-x" not in pool._active


def test_each_cell_is_graded_as_it_finishes_not_after_a_batch(api: Api, tmp_path: Path) -> None:
    """Issue 42: one cell at a time, and the endpoint answers call n+1 only once cell n's sandbox run has begun —
    a pool that waited for a batch of cells, or for the run's end, would leave the call waiting (bounded here:
    each wait gives up after 10 s and is counted as a miss)."""
    fake = CountingSandbox(delay_s=0.01)
    code_grade.use_sandbox(fake)
    src = samples.write_livecodebench(tmp_path / "lcb", copies=8)
    ds = api.ok("POST", "/datasets/prepare", {"benchmark": "livecodebench", "profile": "quick",
                                             "source_path": str(src), "revision": "synthetic"})
    asked: list[int] = []
    misses: list[int] = []

    def hold_until_the_last_cell_grades(body: dict) -> None:
        asked.append(1)
        deadline = time.monotonic() + 10
        while not misses and fake.started < len(asked) - 1:
            if time.monotonic() > deadline:
                misses.append(len(asked))
                break
            time.sleep(0.005)
        return None
    with SimulatorThread(models=[SimModel("a", skill=0.5)], answer_key=load_answer_key(ds["path"]),
                         fault=hold_until_the_last_cell_grades) as sim:
        api.ok("POST", "/targets", {"targets": [single("a", sim.v1_url, "a")]})
        m = manifest(ds, [{"id": "a"}])
        m["limits"]["concurrency"] = 1
        run = api.wait(api.ok("POST", "/runs", {"manifest": freeze(api, m)})["id"], timeout=300)
    assert run["status"] == "completed", run
    assert not misses, f"call {misses[0]} came before the previous cell's grading began"
    assert api.ok("GET", f"/runs/{run['id']}/report")["summary"]["targets"][0]["graded"] == 30
    assert len(asked) == 30 and fake.started == 30


def test_the_pool_is_as_wide_as_the_cores(api: Api, tmp_path: Path, monkeypatch) -> None:
    """Issue 42: with the host's cores at 3 (its CPU affinity; no quota, no override) the service grades 3 cells
    at once, never more: the first 3 sandbox runs wait for each other (a narrower pool never gets all 3 in)."""
    from srbench.sandbox import capacity

    monkeypatch.delenv(capacity.ENV, raising=False)
    monkeypatch.setattr(capacity.os, "sched_getaffinity", lambda pid: {0, 1, 2})
    monkeypatch.setattr(capacity, "_quota_cpus", lambda root: None)
    monkeypatch.setattr(capacity, "GRADING", capacity.Budget(capacity.available_cores()))
    together = threading.Barrier(3)
    broken: list[int] = []

    def meet(ordinal: int) -> None:
        if ordinal <= 3:
            try:
                together.wait(timeout=10)
            except threading.BrokenBarrierError:
                broken.append(ordinal)
    fake = CountingSandbox(delay_s=0.05, on_start=meet)
    code_grade.use_sandbox(fake)
    _lcb_run(api, tmp_path, {"concurrency": 8})
    assert not broken, "fewer than 3 cells were graded at once"
    assert len(fake.runs) == 30 and fake.peak == 3
