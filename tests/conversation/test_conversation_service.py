"""Multi-call cells through the real service on loopback against a fake OpenAI server that plays an
agent with tool calls and a user simulator: per-call journal rows, tool calls recorded, costs per
role, the calls page, the plan-time role check, and the four token buckets per role."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from service.helpers import PRICE, freeze, manifest
from srbench.cas import canonical_json, digest_bytes
from srbench.schemas.conversation import ConversationRecord
from srbench.simulate.behaviour import messages_key

from .conftest import SIM_PRICE, pin_simulator, toy_targets


def _usd(entries, price) -> float:
    return sum(e["usage"]["prompt_tokens"] * price["input"] + e["usage"]["completion_tokens"] * price["output"]
               for e in entries) / 1e6


def _journal(service) -> sqlite3.Connection:
    conn = sqlite3.connect(Path(service.store_dir) / "journal.sqlite3")
    conn.row_factory = sqlite3.Row
    return conn


def test_plan_refuses_a_missing_role(api, service, toy_dataset, agent_sim) -> None:
    ds = toy_dataset()
    api.ok("POST", "/targets", {"targets": toy_targets(agent_sim.v1_url)})
    m = manifest(ds, [{"id": "agent"}])
    msg = api.error("POST", "/plans", {"manifest": m}, 400)
    assert "toy-agent needs a pinned user_simulator" in msg and "benchmark-options.json" in msg
    assert "\n" not in msg
    pin_simulator(service.store_dir, "agent")
    assert "also a subject target" in api.error("POST", "/plans", {"manifest": m}, 400)
    pin_simulator(service.store_dir, "nobody")
    assert "not a registered target" in api.error("POST", "/plans", {"manifest": m}, 400)
    assert agent_sim.log == []


def test_conversation_end_to_end(api, service, toy_dataset, agent_sim) -> None:
    ds = toy_dataset()
    assert ds["case_count"] == 2
    api.ok("POST", "/targets", {"targets": toy_targets(agent_sim.v1_url)})
    pin_simulator(service.store_dir)
    plan = freeze(api, manifest(ds, [{"id": "agent"}]))
    assert list(plan["auxiliary_targets"]) == ["user-sim"]
    assert plan["benchmark_options"]["toy-agent"] == {"user_simulator": "user-sim", "judge": None,
                                                      "grader_version": None, "grading": None}
    run_id = api.ok("POST", "/runs", {"manifest": plan})["id"]
    run = api.wait(run_id)
    assert run["status"] == "completed", run
    log = list(agent_sim.log)
    # per cell: agent (tool call), agent (answer), user, agent (answer), user (###STOP###)
    assert len(log) == 10 and all(e["completed"] for e in log)
    assert sum(e["model"] == "agent-model" for e in log) == 6 and sum(e["model"] == "sim-user" for e in log) == 4
    assert len({(e["model"], e["messages_digest"]) for e in log}) == 10     # nothing sent twice

    # the journal: one row per call, each done, its request and record stored
    store = service.service.objects
    with _journal(service) as conn:
        cells = conn.execute("SELECT * FROM cells WHERE run_id=?", (run_id,)).fetchall()
        calls = conn.execute("SELECT * FROM calls WHERE run_id=? ORDER BY cell_id, idx", (run_id,)).fetchall()
    assert {c["state"] for c in cells} == {"completed"} and len(calls) == 10
    for c in cells:
        mine = [k for k in calls if k["cell_id"] == c["cell_id"]]
        assert [k["idx"] for k in mine] == [0, 1, 2, 3, 4]
        assert [k["role"] for k in mine] == ["subject", "subject", "user_simulator", "subject", "user_simulator"]
        assert [k["target_id"] for k in mine] == ["agent", "agent", "user-sim", "agent", "user-sim"]
        assert {k["state"] for k in mine} == {"completed"} and all(k["reserved_usd"] == 0 for k in mine)
        assert c["request"] == mine[0]["request"]
        conv = store.get_json(c["call"])
        assert conv["kind"] == "conversation" and conv["error_class"] is None
        # the stored record is its model's canonical bytes (schemas/conversation.py)
        model = ConversationRecord.model_validate(conv).model_dump(mode="json", by_alias=True)
        assert digest_bytes(canonical_json(model)) == c["call"]
        assert [x["record"] for x in conv["calls"]] == [k["call"] for k in mine]
        assert [x["cost_usd"] for x in conv["calls"]] == [k["cost_usd"] for k in mine]
        first = store.get_json(mine[0]["call"])
        assert first["finish_reason"] == "tool_calls" and first["tool_calls"][0]["function"]["name"] == "lookup"
        req = store.get_json(mine[0]["request"])
        assert req["body"]["tools"][0]["function"]["name"] == "lookup" and req["body"]["tool_choice"] == "auto"
        assert req["role"] == "subject" and req["call_index"] == 0
        assert store.get_json(mine[2]["request"])["role"] == "user_simulator"
        assert store.get_json(conv["trajectory"])["kind"] == "toy-trajectory"
        # the second agent request carries the tool call and the tool result back
        second = store.get_json(mine[1]["request"])["body"]["messages"]
        assert second[1]["tool_calls"] == first["tool_calls"] and second[2]["role"] == "tool"

    # the report: principal = subject calls, the simulator apart, tokens per role
    rep = api.ok("GET", f"/runs/{run_id}/report")
    t = rep["summary"]["targets"][0]
    agent_cost, sim_cost = _usd([e for e in log if e["model"] == "agent-model"], PRICE), \
        _usd([e for e in log if e["model"] == "sim-user"], SIM_PRICE)
    assert t["correct"] == 2 and t["accuracy"] == 1.0
    assert abs(t["cost_usd"] - agent_cost) < 1e-12 and abs(t["simulator_cost_usd"] - sim_cost) < 1e-12
    assert abs(t["total_cost_usd"] - agent_cost - sim_cost) < 1e-12 and t["judge_cost_usd"] == 0.0
    assert t["scaffolding_cost_usd"] == 0.0 and t["call_count"] == 10
    assert t["calls_by_role"] == {"subject": 6, "user_simulator": 4}
    sim_in = sum(e["usage"]["prompt_tokens"] for e in log if e["model"] == "sim-user")
    assert t["tokens_by_role"]["user_simulator"]["input"] == sim_in
    assert t["tokens"]["output"] == sum(e["usage"]["completion_tokens"] for e in log if e["model"] == "agent-model")
    assert abs(rep["summary"]["simulator_cost_usd"] - sim_cost) < 1e-12
    assert abs(rep["summary"]["principal_cost_usd"] - agent_cost) < 1e-12
    rows = api.ok("GET", f"/runs/{run_id}/results")["results"]
    assert {r["calls"] for r in rows} == {5} and all(r["calls_by_role"] == {"subject": 3, "user_simulator": 2}
                                                    for r in rows)
    assert all(r["finish_reason"] == "stop" and r["correct"] for r in rows)

    # the calls page: every call of each conversation with its role
    page = api.ok("GET", f"/runs/{run_id}/calls")
    assert page["total"] == 2
    for row in page["calls"]:
        assert [c["role"] for c in row["calls"]] == ["subject", "subject", "user_simulator", "subject",
                                                     "user_simulator"]
        assert row["calls"][0]["tool_calls"] == 1 and row["calls"][0]["finish_reason"] == "tool_calls"
        assert all(c["state"] == "completed" and c["usage"] for c in row["calls"])
    detail = api.ok("GET", f"/runs/{run_id}/calls/{page['calls'][0]['cell_id']}")
    assert detail["record"]["kind"] == "conversation" and len(detail["calls"]) == 5

    # a report built again is a cache hit, the same digest
    again = api.ok("GET", f"/runs/{run_id}/report")
    assert again["cache_hit"] and again["report_digest"] == rep["report_digest"]
    assert messages_key([{"role": "user", "content": "x"}])    # the helper the log keys use
