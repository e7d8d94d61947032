"""Runs on the real service against the simulator (RUN-2, RUN-5, TG-5, DEP-3, REP-1): idempotency, reviewed
plans, systematic and per-case failures, cancel, preflight, credentials, and the reports of those runs."""

from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import Any

import pytest

from srbench.simulate.behaviour import SimModel, answer_key_from_cases
from srbench.simulate.server import Fault
from srbench.simulate.thread import SimulatorThread
from srbench.stages.datasets.build import decode_cases

from .helpers import PRICE, Api, freeze, manifest, single


def _cas_files(store: Path) -> list[Path]:
    return sorted(p for p in (store / "cas").rglob("*") if p.is_file())


def _model_requests(sim: SimulatorThread, model: str) -> int:
    return sum(e["requested_model"] == model for e in sim.log)


@pytest.fixture
def ds(prepare) -> dict[str, Any]:
    return prepare("mmlu-pro")             # 14 smoke cases, one per subject


@pytest.fixture
def keyed_sim(sim: SimulatorThread, ds: dict[str, Any]) -> SimulatorThread:
    """The simulator knows the answers of `ds`, so some answers are graded correct."""
    assert sim.server is not None
    sim.server.answer_key = answer_key_from_cases(decode_cases(Path(ds["path"]).read_bytes()))
    return sim


def _two_targets(api: Api, sim: SimulatorThread, ds: dict[str, Any], **limits: Any) -> dict[str, Any]:
    api.ok("POST", "/targets", {"targets": [single("strong", sim.v1_url, "sim-strong"),
                                            single("weak", sim.v1_url, "sim-weak")]})
    m = manifest(ds, [{"id": "strong"}, {"id": "weak"}])
    m["limits"].update(limits)
    return m


# -- RUN-2 idempotency and the reviewed plan ---------------------------------------------------------------
def test_same_key_same_plan_binds_the_same_run_and_sends_nothing(api, keyed_sim, ds, service) -> None:
    plan = freeze(api, _two_targets(api, keyed_sim, ds))
    status, first = api.post("/runs", {"manifest": plan, "idempotency_key": "k-1"})
    assert status == 201 and first["created"] is True
    run_id = first["id"]
    assert api.wait(run_id)["status"] == "completed"
    sent = len(keyed_sim.log)
    assert sent == 28
    status, again = api.post("/runs", {"manifest": copy.deepcopy(plan), "idempotency_key": "k-1"})
    assert status == 201 and again["created"] is False and again["id"] == run_id   # 201 for every accepted key, as upstream
    assert again["status"] == "completed"
    time.sleep(0.2)
    assert len(keyed_sim.log) == sent and api.run_count() == 1

    other = freeze(api, dict(_two_targets(api, keyed_sim, ds), name="another plan"))
    assert other["plan_sha256"] != plan["plan_sha256"]
    files_before = _cas_files(service.store_dir)
    msg = api.error("POST", "/runs", {"manifest": other, "idempotency_key": "k-1"}, 400, "idempotency_conflict")
    assert "k-1" in msg and run_id in msg, msg
    assert api.run_count() == 1 and _cas_files(service.store_dir) == files_before
    time.sleep(0.1)
    assert len(keyed_sim.log) == sent


def test_a_frozen_plan_edited_after_review_is_refused(api, sim, ds) -> None:
    plan = freeze(api, _two_targets(api, sim, ds))
    edited = copy.deepcopy(plan)
    edited["targets"][1]["model"] = "sim-strong"             # plan_sha256 left alone
    msg = api.error("POST", "/runs", {"manifest": edited, "idempotency_key": "k-2"}, 400, "reviewed_plan_changed")
    assert plan["plan_sha256"] in msg, msg
    edited = copy.deepcopy(plan)
    edited["limits"]["concurrency"] = 64
    api.error("POST", "/runs", {"manifest": edited}, 400, "reviewed_plan_changed")
    assert api.run_count() == 0 and sim.log == []


# -- RUN-5 failures ----------------------------------------------------------------------------------------
def _run_with_weak_401(api: Api, sim: SimulatorThread, ds: dict[str, Any], **extra: Any) -> dict[str, Any]:
    sim.set_fault(lambda body: Fault(status=401, body='{"error": {"message": "invalid api key"}}', label="401")
                  if body.get("model") == "sim-weak" else None)
    m = _two_targets(api, sim, ds, concurrency=1)
    m.update(extra)
    run_id = api.ok("POST", "/runs", {"manifest": freeze(api, m)})["id"]
    return api.wait(run_id)


def test_systematic_401_stops_only_its_target(api, sim, ds) -> None:
    run = _run_with_weak_401(api, sim, ds)
    assert run["status"] == "failed", run
    assert "weak" in run["error"] and "401" in run["error"] and "(auth)" in run["error"], run["error"]
    assert "the other targets went on" in run["error"], run["error"]
    assert _model_requests(sim, "sim-weak") == 1, [e["requested_model"] for e in sim.log]     # of 14 cells
    assert _model_requests(sim, "sim-strong") == 14
    assert run["progress"]["pending"] == 13 and run["progress"]["completed"] == 14 and run["progress"]["failed"] == 1
    events = api.ok("GET", f"/runs/{run['id']}/events")["events"]
    stops = [e["data"] for e in events if e["kind"] == "dispatch_stopped"]
    assert [(d["target_id"], d["scope"], d["error_class"]) for d in stops] == [("weak", "target", "http_401")], stops
    assert not any(e["kind"] == "cell_pending" for e in events)


def test_stop_on_systematic_run_stops_every_target(api, sim, ds) -> None:
    run = _run_with_weak_401(api, sim, ds, stop_on_systematic="run")
    assert run["status"] == "failed" and "weak" in run["error"] and "401" in run["error"], run
    assert "the other targets went on" not in run["error"]
    # concurrency 1: one request in flight per target when the 401 came back; nothing new sent after it
    assert _model_requests(sim, "sim-weak") == 1, [e["requested_model"] for e in sim.log]
    assert _model_requests(sim, "sim-strong") <= 4
    assert run["progress"]["pending"] >= 28 - 6 and run["progress"]["completed"] <= 4
    events = api.ok("GET", f"/runs/{run['id']}/events")["events"]
    assert [e["data"]["scope"] for e in events if e["kind"] == "dispatch_stopped"] == ["run"]


def test_a_config_hash_mismatch_stops_only_that_router(api, sim, ds) -> None:
    mom = {"kind": "mom", "base_url": sim.router_url, "model": "MoM", "max_inference_calls": 1,
           "prices": {"sim-strong": PRICE, "sim-weak": PRICE}}
    api.ok("POST", "/targets", {"targets": [{"id": "pinned", "config_hash": "sim-config-v1", **mom},
                                            {"id": "drifted", "config_hash": "cfg-other", **mom}]})
    m = manifest(ds, [{"id": "pinned"}, {"id": "drifted"}])
    m["limits"]["concurrency"] = 1
    run = api.wait(api.ok("POST", "/runs", {"manifest": freeze(api, m)})["id"])
    assert run["status"] == "failed" and "drifted (config_hash_mismatch)" in run["error"], run
    assert "sim-config-v1" in run["error"] and "the other targets went on" in run["error"]
    calls = api.ok("GET", f"/runs/{run['id']}/calls")["calls"]
    by = {t: [c for c in calls if c["target_id"] == t] for t in ("pinned", "drifted")}
    assert [c["state"] for c in by["drifted"]] == ["failed"] and by["drifted"][0]["error_class"] == "config_hash_mismatch"
    assert len(by["pinned"]) == 14 and all(c["state"] == "completed" for c in by["pinned"])


def test_a_plan_without_stop_on_systematic_keeps_its_sha256(api, sim, ds) -> None:
    plain = freeze(api, _two_targets(api, sim, ds))
    assert "stop_on_systematic" not in plain
    scoped = freeze(api, dict(_two_targets(api, sim, ds), stop_on_systematic="target"))
    assert scoped["stop_on_systematic"] == "target" and scoped["plan_sha256"] != plain["plan_sha256"]
    api.error("POST", "/plans", {"manifest": dict(_two_targets(api, sim, ds), stop_on_systematic="all")}, 400)


def test_a_500_on_one_case_fails_that_cell_and_the_run_goes_on(api, keyed_sim, ds) -> None:
    cases = decode_cases(Path(ds["path"]).read_bytes())
    bad = cases[5]
    bad_messages = [m.model_dump() for m in bad.messages]
    keyed_sim.set_fault(lambda body: Fault(status=500, body='{"error": {"message": "boom"}}', label="500")
                        if body.get("messages") == bad_messages else None)
    api.ok("POST", "/targets", {"targets": [single("strong", keyed_sim.v1_url, "sim-strong")]})
    run_id = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "strong"}]))})["id"]
    run = api.wait(run_id)
    assert run["status"] == "failed" and run["progress"]["completed"] == 13 and run["progress"]["failed"] == 1
    assert len(keyed_sim.log) == 14                    # every case sent once, nothing retried
    calls = api.ok("GET", f"/runs/{run_id}/calls")["calls"]
    failed = [c for c in calls if c["state"] == "failed"]
    assert [(c["case_id"], c["error_class"], c["http_status"]) for c in failed] == [(bad.id, "http_500", 500)]

    # REP-1: the denominator is every planned cell, the failed one included
    rep = api.ok("GET", f"/runs/{run_id}/report")
    t = rep["summary"]["targets"][0]
    assert (t["total"], t["completed"], t["failed"]) == (14, 13, 1)
    assert 0 < t["correct"] <= 13 and t["accuracy"] == t["correct"] / 14
    served_correct = sum(bool(e["correct"]) for e in keyed_sim.log if e["completed"])
    assert t["correct"] == served_correct
    assert rep["summary"]["planned_cells"] == 14
    assert rep["complete"] is False and rep["status"] == "failed"
    assert any("Partial run" in x and "not a complete evaluation" in x for x in rep["limitations"]), rep["limitations"]


def test_cancel_stops_the_work(api, ds) -> None:
    with SimulatorThread(models=[SimModel("sim-slow", skill=0.5, latency_s=4.0)]) as slow:
        api.ok("POST", "/targets", {"targets": [single("slow", slow.v1_url, "sim-slow")]})
        m = manifest(ds, [{"id": "slow"}])
        m["limits"]["concurrency"] = 1
        run_id = api.ok("POST", "/runs", {"manifest": freeze(api, m)})["id"]
        api.wait(run_id, until=lambda r: r["progress"]["running"] == 1 and len(slow.log) == 1)
        t0 = time.monotonic()
        api.ok("POST", f"/runs/{run_id}/cancel")
        run = api.wait(run_id, timeout=5)
        assert time.monotonic() - t0 < 3, "cancel waited for the slow answer"
        time.sleep(0.3)
        assert run["status"] == "cancelled", run
        assert run["progress"]["cancelled"] == 1 and run["progress"]["pending"] == 13
        assert run["progress"]["completed"] == 0 and len(slow.log) == 1
        calls = api.ok("GET", f"/runs/{run_id}/calls")
        assert calls["total"] == 1 and calls["calls"][0]["state"] == "cancelled"
        # cancelling a terminal run changes nothing
        assert api.ok("POST", f"/runs/{run_id}/cancel")["status"] == "cancelled"


# -- DEP-3 / TG-5 credentials ------------------------------------------------------------------------------
def test_unset_api_key_env_fails_preflight(api, sim, ds, monkeypatch) -> None:
    monkeypatch.delenv("SRB_TEST_UNSET_KEY", raising=False)
    api.ok("POST", "/targets", {"targets": [single("keyed", sim.v1_url, "sim-strong",
                                                   api_key_env="SRB_TEST_UNSET_KEY")]})
    plan = freeze(api, manifest(ds, [{"id": "keyed"}]))
    msg = api.error("POST", "/runs", {"manifest": plan, "idempotency_key": "k-pre"}, 400, "preflight_failed")
    assert "keyed" in msg and "SRB_TEST_UNSET_KEY" in msg, msg
    time.sleep(0.1)
    assert api.run_count() == 0 and sim.log == []
    # the key was not consumed by the refusal: once the variable is set the same key creates the run
    monkeypatch.setenv("SRB_TEST_UNSET_KEY", "now-set")
    status, res = api.post("/runs", {"manifest": plan, "idempotency_key": "k-pre"})
    assert status == 201 and res["created"] is True
    api.wait(res["id"])


def test_a_missing_key_is_said_once_per_variable_not_per_target(api, sim, ds, monkeypatch) -> None:
    """Issue 40: two targets naming the same unset variable make one clause naming both, not two."""
    monkeypatch.delenv("SRB_TEST_SHARED_KEY", raising=False)
    api.ok("POST", "/targets", {"targets": [single(t, sim.v1_url, "sim-strong", api_key_env="SRB_TEST_SHARED_KEY")
                                            for t in ("k1", "k2")]})
    plan = freeze(api, manifest(ds, [{"id": "k1"}, {"id": "k2"}]))
    msg = api.error("POST", "/runs", {"manifest": plan}, 400, "preflight_failed")
    assert msg.count("SRB_TEST_SHARED_KEY (targets k1, k2) is not set") == 1 and msg.count("environment variable") == 1
    assert "`sr-bench env set SRB_TEST_SHARED_KEY`" in msg
    assert sim.log == []


def test_api_key_is_sent_as_bearer_and_never_stored(api, ds, service, monkeypatch) -> None:
    key = "sk-sim-" + "7f3a9c1e5b2d4680" * 2
    monkeypatch.setenv("SRB_TEST_SIM_KEY", key)
    with SimulatorThread(models=[SimModel("sim-strong", skill=0.9)], api_key=key) as keyed:
        api.ok("POST", "/targets", {"targets": [single("keyed", keyed.v1_url, "sim-strong",
                                                       api_key_env="SRB_TEST_SIM_KEY")]})
        run_id = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "keyed"}]))})["id"]
        run = api.wait(run_id)
        assert run["status"] == "completed", run          # the simulator answers 401 without the right key
        assert len(keyed.log) == 14 and all(e["status"] == 200 for e in keyed.log)
        api.ok("GET", f"/runs/{run_id}/report")
        api.ok("GET", f"/runs/{run_id}/calls/{api.ok('GET', f'/runs/{run_id}/calls')['calls'][0]['cell_id']}")
    needle, name = key.encode(), b"SRB_TEST_SIM_KEY"
    scanned, named = 0, 0
    for path in sorted(p for p in service.store_dir.rglob("*") if p.is_file()):
        data = path.read_bytes()
        assert needle not in data, f"the API key is stored in {path}"
        scanned += 1
        named += name in data
    assert scanned > 20 and named > 0         # the scan did read the objects (they name the variable)
    assert any(p.name.startswith("journal.sqlite3") for p in service.store_dir.iterdir())


# -- REP-1 reports -----------------------------------------------------------------------------------------
def test_report_of_a_terminal_run_is_cached(api, keyed_sim, ds) -> None:
    run_id = api.ok("POST", "/runs", {"manifest": freeze(api, _two_targets(api, keyed_sim, ds))})["id"]
    assert api.wait(run_id)["status"] == "completed"
    first = api.ok("GET", f"/runs/{run_id}/report")
    second = api.ok("GET", f"/runs/{run_id}/report")
    assert second["cache_hit"] is True and second["explain"] == "up to date", second["explain"]
    assert second["report_digest"] == first["report_digest"] and second["complete"] is True
    served = api.http.get(f"/objects/{second['report_digest']}")
    assert served.status_code == 200 and served.json()["kind"] == "report"
    assert api.get(f"/objects/{ds['object']}")[0] == 404          # the dataset holds the answers
    s = {t["target_id"]: t for t in second["summary"]["targets"]}
    for tid, model in (("strong", "sim-strong"), ("weak", "sim-weak")):
        served = [e for e in keyed_sim.log if e["model"] == model]
        assert s[tid]["total"] == len(served) == 14
        assert s[tid]["correct"] == sum(bool(e["correct"]) for e in served)
        assert s[tid]["accuracy"] == s[tid]["correct"] / 14


def test_report_of_a_systematically_failed_run_is_partial(api, sim, ds) -> None:
    sim.set_fault(lambda body: Fault(status=403, body="{}", label="403") if body.get("model") == "sim-weak" else None)
    run_id = api.ok("POST", "/runs", {"manifest": freeze(api, _two_targets(api, sim, ds, concurrency=1))})["id"]
    assert api.wait(run_id)["status"] == "failed"
    rep = api.ok("GET", f"/runs/{run_id}/report")
    assert rep["complete"] is False and rep["summary"]["planned_cells"] == 28
    t = {x["target_id"]: x for x in rep["summary"]["targets"]}
    for x in t.values():                   # never-dispatched cells stay in the denominator as not correct
        assert x["total"] == 14 and x["accuracy"] == x["correct"] / 14 and x["sr_bench_score"] is None
    assert t["weak"]["failed"] == 1 and t["weak"]["correct"] == 0 and t["weak"]["pending"] == 13
    assert t["weak"]["failure_classes"] == {"http_403": 1} and t["strong"]["pending"] == 0
    assert any("Partial run (status failed)" in x for x in rep["limitations"]), rep["limitations"]


def test_a_dispatched_cell_is_let_go_while_the_run_goes_on(api, sim, ds, monkeypatch) -> None:
    """Issue 42 (item 3): the run's pending cells (~180 bytes each, 18 MiB at 100k) are let go as they are
    dispatched, not held in lists until the run ends. On the code before, the first cell was still in the
    run's list (and its target's queue) when the last one was sent."""
    import gc
    from collections import deque

    from srbench.stages.dispatch import calls

    held: list[bool] = []
    first: dict[str, Any] = {}
    real = calls.Dispatcher._safe

    async def spied(self: Any, cell: Any) -> None:
        first.setdefault("cell", cell)
        kept = first["cell"]
        held.append(any(isinstance(r, list | deque) and any(x is kept for x in r) for r in gc.get_referrers(kept)))
        await real(self, cell)
    monkeypatch.setattr(calls.Dispatcher, "_safe", spied)
    run_id = api.ok("POST", "/runs", {"manifest": freeze(api, _two_targets(api, sim, ds))})["id"]
    assert api.wait(run_id)["status"] == "completed"
    assert len(held) > 2 and held[0] is False and held[-1] is False
