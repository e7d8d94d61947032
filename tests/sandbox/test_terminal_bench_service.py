"""Terminal-Bench 2.1 through the real service and a real Docker engine: prepare (native task folders)
→ plan → run against a fake OpenAI server that plays the agent with tool calls → verifier in the
task containers → report rows with reward, trajectory and per-call costs; and SIGKILL of the service
in the middle of an agent trial: nothing resent, the cell ambiguous, its container removed by the
restarted service. Skipped, saying why, without an engine or the grading base image."""

from __future__ import annotations

import os
import secrets
import signal
import sqlite3
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.helpers import Api, free_port, freeze, isolated_env, loopback_process, manifest, single
from srbench.benchmarks.terminal_bench.agent import TOOL
from srbench.client.embedded import EmbeddedService
from srbench.discovery import API_PREFIX
from srbench.sandbox import task_container as tc
from srbench.service.store.task_resources import scope_for
from srbench.simulate.behaviour import SimModel
from srbench.simulate.terminal_tasks import SCRIPTS, agent_script, write_terminal_bench
from srbench.simulate.thread import SimulatorThread

TB = "terminal-bench-2.1"
LIMITS = {"concurrency": 2, "total_timeout_s": 20, "idle_timeout_s": 10, "case_timeout_s": 120,
          "max_run_seconds": 600}
PLAYS = {"agent-solver": "solve", "agent-failer": "fail", "agent-slow": "slow"}


def _clean(docker_api: Any, store: Path) -> list[dict[str, Any]]:
    """Remove what the service made under its store's scope; returns the containers that were left."""
    if not (store / "store.json").exists():
        return []
    scope = scope_for(store)
    left = tc.owned_containers(docker_api, scope)
    for c in left:
        docker_api.remove_container(c["Id"], force=True, v=True)
    tc.remove_images(docker_api, scope)
    return left


@pytest.fixture
def tb_service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, docker_api: Any, local_base: str
               ) -> Iterator[EmbeddedService]:
    isolated_env(tmp_path, monkeypatch)
    before = tc.current_scope()
    try:
        with EmbeddedService(tmp_path / "store") as svc:
            yield svc
    finally:
        tc.set_scope(before)
        _clean(docker_api, tmp_path / "store")


def test_terminal_bench_end_to_end(tb_service, docker_api, local_base, tmp_path: Path) -> None:
    api = Api(tb_service.url, tb_service.token)
    scope = tc.current_scope()
    assert scope == scope_for(tb_service.store_dir) and scope.startswith("store-")
    entry = next(b for b in api.ok("GET", "/catalog")["benchmarks"] if b["id"] == TB)
    assert entry["available"] is True and entry["kind"] == "agent"
    src = write_terminal_bench(tmp_path / "tb", local_base)
    ds = api.ok("POST", "/datasets/prepare", {"benchmark": TB, "profile": "quick", "source_path": str(src),
                                             "revision": "fixture-1"})
    assert ds["case_count"] == 3 and ds["sources"][TB]["origin"] == "local-import"
    assert len(ds["sources"][TB]["files"]) == sum(1 for p in src.rglob("*") if p.is_file())
    models = [SimModel("agent-solver", skill=1.0), SimModel("agent-failer", skill=0.0)]
    with SimulatorThread(models=models, script=agent_script(PLAYS)) as sim:
        api.ok("POST", "/targets", {"targets": [single("solver", sim.v1_url, "agent-solver"),
                                                single("failer", sim.v1_url, "agent-failer")]})
        plan = freeze(api, manifest(ds, [{"id": "solver"}, {"id": "failer"}], limits=dict(LIMITS)))
        opts = plan["benchmark_options"][TB]["grading"]
        assert opts["max_steps"] == 100 and opts["command_timeout_s"] == 30 and opts["build_network"] == "none"
        run = api.wait(api.ok("POST", "/runs", {"manifest": plan})["id"], timeout=240)
        log = list(sim.log)
    assert run["status"] in ("completed", "failed"), run
    # every request the fake server saw was a tool-calling agent turn, none sent twice
    assert len({(e["model"], e["messages_digest"]) for e in log}) == len(log)
    expected_turns = {m: sum(len(SCRIPTS[t][p]) + 1 for t in SCRIPTS) for m, p in
                      (("agent-solver", "solve"), ("agent-failer", "fail"))}
    assert Counter(e["model"] for e in log) == expected_turns

    rows = {(r["target_id"], r["case_id"].split("/", 1)[1]): r for r in api.ok("GET", f"/runs/{run['id']}/results")["results"]}
    assert len(rows) == 6
    for target, play in (("solver", "solve"), ("failer", "fail")):
        for task in ("hello-file", "fix-greeting"):
            r = rows[(target, task)]
            want = 1.0 if play == "solve" else 0.0
            assert r["state"] == "completed" and r["reward"] == want and r["correct"] is (want == 1.0), r
            assert r["calls"] == len(SCRIPTS[task][play]) + 1 and r["calls_by_role"] == {"subject": r["calls"]}
            assert r["cost_usd"] > 0 and r["scaffolding_cost_usd"] == 0.0 and r["stop_reason"] == "agent_done"
            traj = api.ok("GET", f"/objects/{r['trajectory']}")
            assert traj["kind"] == "trajectory" and traj["format"] == "terminal-bench-trajectory-v1" and traj["reward"] == want
            assert [s["command"] for s in traj["steps"]] == SCRIPTS[task][play]
            grade = api.ok("GET", f"/objects/{r['grade']}")
            receipt = grade["details"]["receipt"]
            assert receipt["base_images"][local_base]["id"] == docker_api.inspect_image(local_base)["Id"]
            assert receipt["image_id"] == r["task_image_id"] and receipt["limits"]["network"] == "none"
        never = rows[(target, "never-rewards")]
        assert never["state"] == "failed" and never["error_class"] == "trial_error" and never["correct"] is None
        assert "RewardFileNotFoundError" in never["error"] and never["reward"] is None and never["cost_usd"] > 0
    # per-call costs: the conversation's calls, each priced, sum to the row's principal cost
    cell = rows[("solver", "hello-file")]
    conv = tb_service.service.objects.get_json(cell["call"])           # the cell's conversation record
    assert conv["kind"] == "conversation" and [c["role"] for c in conv["calls"]] == ["subject"] * 4
    assert all(c["cost_usd"] > 0 for c in conv["calls"])
    assert abs(sum(c["cost_usd"] for c in conv["calls"]) - cell["cost_usd"]) < 1e-12
    first = api.ok("GET", f"/objects/{conv['calls'][0]['record']}")
    assert first["finish_reason"] == "tool_calls" and first["tool_calls"][0]["function"]["name"] == "terminal"
    request = api.ok("GET", f"/objects/{conv['calls'][0]['request']}")
    assert request["body"]["tools"] == [TOOL] and request["body"]["messages"][0]["role"] == "system"
    assert conv["trajectory"] == cell["trajectory"]
    rep = api.ok("GET", f"/runs/{run['id']}/report")
    by = {(b["target_id"], b["benchmark"]): b for b in rep["benchmarks"]}
    assert by[("solver", TB)]["correct"] == 2 and by[("failer", TB)]["correct"] == 0
    assert by[("solver", TB)]["mean_reward"] == 1.0 and by[("failer", TB)]["mean_reward"] == 0.0
    for target, model in (("solver", "agent-solver"), ("failer", "agent-failer")):   # issue 27: counted as such
        assert by[(target, TB)]["trial_errors"] == 1 and by[(target, TB)]["ungraded"] == 0
        t = next(x for x in rep["summary"]["targets"] if x["target_id"] == target)
        mine = [e for e in log if e["model"] == model]
        assert t["calls_by_role"] == {"subject": len(mine)} == {"subject": t["call_count"]}
        assert t["tokens_by_role"]["subject"]["input"] == sum(e["usage"]["prompt_tokens"] for e in mine)
    assert rep["complete"] is False                          # two trial errors: not a complete evaluation
    assert tc.owned_containers(docker_api, scope) == []
    api.close()


def test_a_missing_base_image_refuses_the_run_before_any_call(tb_service, local_base, tmp_path: Path) -> None:
    api = Api(tb_service.url, tb_service.token)
    absent = f"srb-absent-{secrets.token_hex(4)}:1"
    src = write_terminal_bench(tmp_path / "tb", absent)
    ds = api.ok("POST", "/datasets/prepare", {"benchmark": TB, "profile": "smoke", "source_path": str(src),
                                             "revision": "fixture-1"})
    with SimulatorThread(models=[SimModel("agent-solver", skill=1.0)], script=agent_script(PLAYS)) as sim:
        api.ok("POST", "/targets", {"targets": [single("solver", sim.v1_url, "agent-solver")]})
        plan = freeze(api, manifest(ds, [{"id": "solver"}], limits=dict(LIMITS)))
        msg = api.error("POST", "/runs", {"manifest": plan}, 400)
        assert msg.startswith("preflight: ") and absent in msg and "never pulls" in msg and "\n" not in msg
        assert sim.log == []
    api.close()


# -- kill -9 mid-trial -------------------------------------------------------------------------
def _env(tmp_path: Path, token: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SR_BENCH_")}
    env.update(SR_BENCH_TOKEN=token, SR_BENCH_HOME=str(tmp_path / "home"))
    return env


def _journal(store: Path, run_id: str) -> tuple[list[str], list[str]]:
    """(cell states — `ambiguous:<error class>` —, call states in order) of the run, from the journal."""
    with sqlite3.connect(f"file:{store / 'journal.sqlite3'}?mode=ro", uri=True, timeout=5) as conn:
        cells = [r[0] if r[0] != "ambiguous" else f"{r[0]}:{r[1]}" for r in
                 conn.execute("SELECT state, error_class FROM cells WHERE run_id=? ORDER BY seq", (run_id,))]
        calls = [r[0] for r in conn.execute("SELECT state FROM calls WHERE run_id=? ORDER BY idx", (run_id,))]
    return cells, calls


def test_sigkill_mid_trial_resends_nothing_and_the_restart_removes_the_container(
        tmp_path: Path, docker_api: Any, local_base: str) -> None:
    token = secrets.token_urlsafe(24)
    env, store, port = _env(tmp_path, token), tmp_path / "store", free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "srbench.cli.main", "serve", "--store", str(store), "--host", "127.0.0.1",
           "--port", str(port)]
    src = write_terminal_bench(tmp_path / "tb", local_base)
    try:
        with SimulatorThread(models=[SimModel("agent-slow", skill=1.0)], script=agent_script(PLAYS, "sleep 60")) as sim:
            with loopback_process(cmd, url + API_PREFIX + "/health", tmp_path / "svc1.log", env=env) as proc:
                api = Api(url, token)
                ds = api.ok("POST", "/datasets/prepare", {"benchmark": TB, "profile": "smoke",
                                                         "source_path": str(src), "revision": "fixture-1"})
                api.ok("POST", "/targets", {"targets": [single("slow", sim.v1_url, "agent-slow")]})
                run_id = api.ok("POST", "/runs", {"manifest": freeze(api, manifest(ds, [{"id": "slow"}],
                                                                                   limits=dict(LIMITS)))})["id"]
                scope = scope_for(store)
                deadline = time.monotonic() + 60
                # wait until the agent's first turn came back and its `sleep 60` runs in the container
                while not (len(sim.log) == 1 and tc.owned_containers(docker_api, scope)
                           and _journal(store, run_id) == (["dispatching"], ["completed"])):
                    assert time.monotonic() < deadline, "the trial did not get under way"
                    time.sleep(0.1)
                left = tc.owned_containers(docker_api, scope)
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(10)
                api.close()
            assert [c["Id"] for c in tc.owned_containers(docker_api, scope)] == [c["Id"] for c in left]
            assert len(left) == 1 and left[0]["Labels"][tc.CELL]        # the killed trial's container
            sent = list(sim.log)
            with loopback_process(cmd, url + API_PREFIX + "/health", tmp_path / "svc2.log", env=env):
                api = Api(url, token)
                deadline = time.monotonic() + 30
                while tc.owned_containers(docker_api, scope):       # the start's sweep removes it
                    assert time.monotonic() < deadline, "the restarted service left the container"
                    time.sleep(0.1)
                run = api.ok("GET", f"/runs/{run_id}")
                assert run["status"] == "interrupted"
                cells = api.ok("GET", f"/runs/{run_id}/calls")["calls"]
                assert [c["state"] for c in cells] == ["ambiguous"]
                assert _journal(store, run_id) == (["ambiguous:ambiguous_dispatch"], ["completed"])  # its call was done
                time.sleep(1.0)
                assert len(sim.log) == len(sent) == 1, "a request was sent after the restart"
                rep = api.ok("GET", f"/runs/{run_id}/report")
                assert rep["summary"]["targets"][0]["cost_usd"] is None      # an ambiguous trial may have billed
                api.close()
    finally:
        _clean(docker_api, store)
