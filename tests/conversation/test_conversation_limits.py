"""Multi-call cells under the run's limits and corrections, through the real service: a budget
refusal in the middle of a conversation, the case time limit, cancellation, a router target called
once per turn (its choices recorded), reconcile-usage and reprice call by call."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from service.helpers import PRICE, freeze, manifest
from srbench.cas import canonical_json
from srbench.schemas.target import Prices
from srbench.simulate.behaviour import RouterRule
from srbench.simulate.thread import SimulatorThread
from srbench.targets.pricing import reservation_usd

from .conftest import SIM_PRICE, agent_models, pin_simulator, toy_targets
from .toy import agent_script


def _calls(service, run_id: str) -> list[sqlite3.Row]:
    with sqlite3.connect(Path(service.store_dir) / "journal.sqlite3") as conn:
        conn.row_factory = sqlite3.Row
        return conn.execute("SELECT * FROM calls WHERE run_id=? ORDER BY cell_id, idx", (run_id,)).fetchall()


def _run(api, plan) -> tuple[str, dict]:
    run_id = api.ok("POST", "/runs", {"manifest": plan})["id"]
    return run_id, api.wait(run_id, timeout=30)


def test_budget_refusal_mid_conversation(api, service, toy_dataset, agent_sim) -> None:
    ds = toy_dataset(limit=1)
    api.ok("POST", "/targets", {"targets": toy_targets(agent_sim.v1_url)})
    pin_simulator(service.store_dir)
    m = manifest(ds, [{"id": "agent"}])
    m["limits"].update(concurrency=1, max_cost_usd=100.0, max_output_tokens=64)
    first, run = _run(api, freeze(api, m))
    assert run["status"] == "completed"
    # each call's reservation (RUN-8) and the spend before it, from what was journaled
    store = service.service.objects
    prices = {"agent": PRICE, "user-sim": SIM_PRICE}
    spent, need = 0.0, []
    for row in _calls(service, first):
        req = store.get_json(row["request"])
        data = canonical_json(req)
        need.append(spent + reservation_usd(body_bytes=len(data), message_count=len(req["body"]["messages"]),
                                            max_tokens=64, max_output_chars=m["limits"].get("max_output_chars", 131072),
                                            prices={"x": Prices(**prices[row["target_id"]])}))
        spent += row["cost_usd"]
    k = next(i for i in range(1, len(need)) if need[i] > max(need[:i]) + 1e-9)
    m["limits"]["max_cost_usd"] = (max(need[:k]) + need[k]) / 2      # call k is the first that cannot fit
    n0 = len(agent_sim.log)
    run_id, run = _run(api, freeze(api, m))
    assert run["status"] == "failed" and "budget" in run["error"]
    assert len(agent_sim.log) - n0 == k                                   # nothing after the refusal
    rows = _calls(service, run_id)
    assert [r["idx"] for r in rows] == list(range(k)) and {r["state"] for r in rows} == {"completed"}
    events = api.ok("GET", f"/runs/{run_id}/events")["events"]
    refused = [e for e in events if e["kind"] == "budget_refused"]
    assert len(refused) == 1 and refused[0]["data"]["call_index"] == k
    rep = api.ok("GET", f"/runs/{run_id}/report")
    res = api.ok("GET", f"/runs/{run_id}/results")["results"][0]
    assert res["state"] == "failed" and res["error_class"] == "budget_stop" and res["calls"] == k
    assert abs(rep["summary"]["total_spend_usd"] - sum(r["cost_usd"] for r in rows)) < 1e-12
    budget = api.ok("GET", f"/runs/{run_id}")["budget"]
    assert budget["reserved_usd"] == 0 and abs(budget["spent_usd"] - sum(r["cost_usd"] for r in rows)) < 1e-12


def test_case_time_limit_ends_the_conversation(api, service, toy_dataset) -> None:
    ds = toy_dataset(limit=1)
    with SimulatorThread(models=agent_models(latency_s=0.4), script=agent_script) as sim:
        api.ok("POST", "/targets", {"targets": toy_targets(sim.v1_url)})
        pin_simulator(service.store_dir)
        m = manifest(ds, [{"id": "agent"}])
        m["limits"].update(case_timeout_s=0.9)
        run_id, run = _run(api, freeze(api, m))
        log = list(sim.log)
    assert run["status"] == "failed"
    res = api.ok("GET", f"/runs/{run_id}/results")["results"][0]
    assert res["state"] == "failed" and res["error_class"] in ("case_timeout", "agent_call_failed", "simulator_failed")
    rows = _calls(service, run_id)
    assert 1 <= len(rows) < 5 and len(log) == len(rows)          # cut short; every sent call journaled
    assert {r["state"] for r in rows} <= {"completed", "failed"}


def test_cancel_mid_conversation(api, service, toy_dataset) -> None:
    ds = toy_dataset()
    with SimulatorThread(models=agent_models(latency_s=0.3), script=agent_script) as sim:
        api.ok("POST", "/targets", {"targets": toy_targets(sim.v1_url)})
        pin_simulator(service.store_dir)
        m = manifest(ds, [{"id": "agent"}])
        m["limits"]["concurrency"] = 1
        run_id = api.ok("POST", "/runs", {"manifest": freeze(api, m)})["id"]
        deadline = time.monotonic() + 10
        while not any(r["state"] == "completed" for r in _calls(service, run_id)):
            assert time.monotonic() < deadline
            time.sleep(0.02)
        api.ok("POST", f"/runs/{run_id}/cancel", {})
        run = api.wait(run_id)
        time.sleep(0.4)
        log = list(sim.log)
    assert run["status"] == "cancelled" and run["progress"]["pending"] == 1     # the second never started
    rows = _calls(service, run_id)
    assert len(log) == len(rows) and {r["state"] for r in rows} <= {"completed", "cancelled"}
    res = [r for r in api.ok("GET", f"/runs/{run_id}/results")["results"] if r["state"] != "pending"]
    assert len(res) == 1 and res[0]["state"] == "cancelled" and res[0]["error_class"] == "cancelled"


def test_router_is_called_once_per_turn_and_its_choices_are_recorded(api, service, toy_dataset) -> None:
    ds = toy_dataset(limit=1)
    router = RouterRule(strong="agent-model", weak="other-model", long_prompt_chars=40, keywords=(),
                        config_hash="cfg-1")
    with SimulatorThread(models=agent_models(), router=router, script=agent_script) as sim:
        api.ok("POST", "/targets", {"targets": toy_targets(sim.v1_url, sim.router_url)})
        pin_simulator(service.store_dir)
        run_id, run = _run(api, freeze(api, manifest(ds, [{"id": "mom"}])))
        log = list(sim.log)
    assert run["status"] == "completed", run
    routed = [e for e in log if e["endpoint"] == "router"]
    assert len(routed) == 3 and [e["model"] for e in routed] == ["other-model", "agent-model", "agent-model"]
    res = api.ok("GET", f"/runs/{run_id}/results")["results"][0]
    assert res["turn_models"] == ["other-model", "agent-model", "agent-model"] and res["router"] == "vllm-sr"
    t = api.ok("GET", f"/runs/{run_id}/report")["summary"]["targets"][0]
    assert t["selected_models"] == {"agent-model": 2, "other-model": 1}
    assert t["routing"]["model_mix"] == {"agent-model": 2, "other-model": 1} and t["routing"]["answered_calls"] == 3
    assert t["cost_usd"] is not None and t["simulator_cost_usd"] > 0
    page = api.ok("GET", f"/runs/{run_id}/calls")["calls"][0]["calls"]
    assert [c["selected_model"] for c in page if c["role"] == "subject"] == ["other-model", "agent-model",
                                                                            "agent-model"]


def test_reconcile_and_reprice_per_call(api, service, toy_dataset, agent_sim) -> None:
    ds = toy_dataset()
    api.ok("POST", "/targets", {"targets": toy_targets(agent_sim.v1_url)})
    pin_simulator(service.store_dir)
    run_id, run = _run(api, freeze(api, manifest(ds, [{"id": "agent"}])))
    assert run["status"] == "completed"
    before = api.ok("GET", f"/runs/{run_id}/report")["summary"]["targets"][0]
    rec = api.ok("POST", f"/runs/{run_id}/reconcile-usage", {})
    assert rec["verified_count"] == 10 and rec["unverifiable_count"] == 0 and rec["qualified"]
    assert sorted({(r["role"], r["index"]) for r in rec["rows"]}) == [
        ("subject", 0), ("subject", 1), ("subject", 3), ("user_simulator", 2), ("user_simulator", 4)]
    assert abs(rec["old_known_cost_usd"] - before["total_cost_usd"]) < 1e-12
    double = {k: 2 * v for k, v in SIM_PRICE.items()}
    api.ok("POST", f"/runs/{run_id}/reprice", {"prices": {"user-sim": {"sim-user": double}}, "reason": "test"})
    after = api.ok("GET", f"/runs/{run_id}/report")
    t = after["summary"]["targets"][0]
    assert abs(t["simulator_cost_usd"] - 2 * before["simulator_cost_usd"]) < 1e-12
    assert abs(t["cost_usd"] - before["cost_usd"]) < 1e-12                       # the principal untouched
    assert after["price_correction"]["targets"] == ["user-sim"] and after["accounting_correction"]["verified_count"] == 10


def test_run_time_limit_stops_conversations(api, service, toy_dataset) -> None:
    ds = toy_dataset()
    with SimulatorThread(models=agent_models(latency_s=0.4), script=agent_script) as sim:
        api.ok("POST", "/targets", {"targets": toy_targets(sim.v1_url)})
        pin_simulator(service.store_dir)
        m = manifest(ds, [{"id": "agent"}])
        m["limits"].update(concurrency=1, max_run_seconds=1.0, total_timeout_s=1.0, idle_timeout_s=0.9)
        run_id, run = _run(api, freeze(api, m))
        time.sleep(0.3)
        log = list(sim.log)
    assert run["status"] == "failed" and "max_run_seconds" in run["error"]
    assert run["progress"]["pending"] == 1 and run["progress"]["failed"] == 1
    rows = _calls(service, run_id)
    assert 1 <= len(rows) < 5 and len(log) == len(rows)
