"""Review findings pinned down: internal errors end runs cleanly, judge costs gate recovery, a closed
journal refuses writes, corrections are appended once under concurrency."""

from __future__ import annotations

import json
import threading
import time

import pytest

from srbench.benchmarks.judge import JUDGE_GRADER
from srbench.service.journal.writer import Journal
from srbench.simulate import samples
from srbench.simulate.behaviour import SimModel, load_answer_key
from srbench.simulate.server import Fault
from srbench.simulate.thread import SimulatorThread

from .helpers import PRICE, freeze, manifest, single


def test_an_internal_error_in_one_cell_ends_the_run_with_every_cell_settled(api, sim, prepare, monkeypatch) -> None:
    import srbench.stages.dispatch.calls as dispatch

    real, calls = dispatch.call_cost, []

    def flaky(target, record):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("pricing exploded")
        return real(target, record)
    monkeypatch.setattr(dispatch, "call_cost", flaky)
    ds = prepare("mmlu-pro")
    api.ok("POST", "/targets", {"targets": [single("m", sim.v1_url, "sim-strong")]})
    run_id = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "m"}]))})["id"]
    run = api.wait(run_id)
    assert run["status"] == "failed" and "internal error" in run["error"]
    p = run["progress"]
    assert p["running"] == 0 and p["ambiguous"] == 1          # the cell whose record blew up: may be billed
    assert p["completed"] + p["failed"] + p["pending"] + p["cancelled"] + p["ambiguous"] == 14
    # every request the endpoint answered is a settled cell, none is left dispatching
    assert len(sim.log) == p["completed"] + p["failed"] + p["cancelled"] + p["ambiguous"]


def test_a_run_that_fails_before_dispatch_is_terminal(api, service, sim, prepare, monkeypatch) -> None:
    ds = prepare("mmlu-pro")
    api.ok("POST", "/targets", {"targets": [single("m", sim.v1_url, "sim-strong")]})
    plan = freeze(api, manifest(ds, [{"id": "m"}]))
    runs = service.service.runs
    real = runs._execute_run

    async def broken(run_id: str) -> None:
        raise ValueError("the plan object cannot be read")
    monkeypatch.setattr(runs, "_execute_run", broken)
    run_id = api.ok("POST", "/runs", {"manifest": plan})["id"]
    run = api.wait(run_id)
    assert run["status"] == "failed" and "before dispatch" in run["error"] and sim.log == []
    # the task ends right after its terminal write, which a poll may observe first: give it a moment
    deadline = time.monotonic() + 5
    while run_id in runs.tasks and time.monotonic() < deadline:
        time.sleep(0.01)
    assert run_id not in runs.tasks
    monkeypatch.setattr(runs, "_execute_run", real)


def test_recovery_excludes_a_cell_whose_judge_call_cost_is_unknown(api, service, tmp_path) -> None:
    src = samples.write_simpleqa(tmp_path / "sq")
    ds = api.ok("POST", "/datasets/prepare", {"benchmark": "simpleqa-verified", "profile": "smoke",
                                              "source_path": str(src), "revision": "synthetic"})
    stall = Fault(stall_s=3, stall_after_chunks=2, label="stall")
    models = [SimModel("subject", skill=0.6), SimModel("judge-model", skill=1.0)]
    with SimulatorThread(models=models, answer_key=load_answer_key(ds["path"]),
                         fault=lambda body: stall if body.get("model") == "judge-model" else None) as sim:
        api.ok("POST", "/targets", {"targets": [single("subject", sim.v1_url), single("judge", sim.v1_url, "judge-model")]})
        (service.store_dir / "benchmark-options.json").write_text(json.dumps(
            {"simpleqa-verified": {"judge": "judge", "grader_version": JUDGE_GRADER}}))
        m = manifest(ds, [{"id": "subject"}])
        m["limits"].update(idle_timeout_s=0.3, total_timeout_s=2)
        run_id = api.ok("POST", "/runs", {"manifest": freeze(api, m)})["id"]
        run = api.wait(run_id)
    assert run["status"] == "failed" and run["progress"]["failed"] == 5
    plan = api.ok("POST", f"/runs/{run_id}/recover-plan", {"mode": "failed"})
    assert plan["eligible"] == [] and plan["excluded_counts"] == {"unknown_usage_or_cost": 5}


def test_a_closed_journal_refuses_writes(tmp_path) -> None:
    j = Journal(str(tmp_path / "j.sqlite3"))
    j.set_ref_sync("k", "a", 1)
    j.close()
    with pytest.raises(RuntimeError, match="closed"):
        j.set_ref_sync("k", "b", 2)


def test_concurrent_reprices_are_all_kept(api, service, sim, prepare) -> None:
    ds = prepare("mmlu-pro")
    api.ok("POST", "/targets", {"targets": [single("m", sim.v1_url, "sim-strong")]})
    run_id = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "m"}]))})["id"]
    assert api.wait(run_id)["status"] == "completed"
    results: list[bool] = []

    def reprice(k: int) -> None:
        p = {key: v + k for key, v in PRICE.items()}
        results.append(api.ok("POST", f"/runs/{run_id}/reprice", {"prices": {"m": {"sim-strong": p}}})["appended"])
    threads = [threading.Thread(target=reprice, args=(k,)) for k in range(1, 7)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True] * 6
    history = service.service.journal.get_ref("price-correction", run_id)
    assert len(history) == 6 and len({h["digest"] for h in history}) == 6      # no append lost to a race
    rep = api.ok("GET", f"/runs/{run_id}/report")
    assert rep["price_correction"]["digest"] == history[-1]["digest"]
    assert api.ok("GET", f"/runs/{run_id}")["status"] == "completed"          # the run is untouched
