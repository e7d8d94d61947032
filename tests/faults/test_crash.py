"""SIGKILL the service mid-run: no completed call lost, no cell sent twice, in-flight cells ambiguous.

The number of kills is SR_BENCH_KILLS (default 20); each kill lands at a random instant of a run
against a slow simulated endpoint, then the next CLI command restarts the service. Afterwards the
store verifies (objects re-hashed, journal → CAS references resolved) and an `undispatched`
recovery of every run completes it: parent completed + child completed + ambiguous = every cell.
"""

from __future__ import annotations

import json
import os
import random
import signal
import time
from collections import Counter

import httpx
import pytest

from integration.conftest import Cli
from srbench.simulate.behaviour import SimModel, messages_key
from srbench.simulate.samples import SAMPLE_REVISION
from srbench.simulate.thread import SimulatorThread

KILLS = int(os.environ.get("SR_BENCH_KILLS", "20"))


@pytest.fixture
def crash_cli(tmp_path):  # the CLI as a subprocess, discovering the managed store in tmp_path
    c = Cli(tmp_path)
    yield c
    c.run("stop", ok=False)


def _service(cli) -> dict:
    return json.loads((cli.cwd / ".sr-bench" / "default" / "store" / "service.json").read_text())


def _wait_dead(pid: int) -> None:
    for _ in range(200):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.02)
    raise AssertionError(f"service {pid} did not die")


def test_sigkill_mid_run_loses_nothing_and_sends_nothing_twice(crash_cli, sources) -> None:
    cli = crash_cli
    rng = random.Random(20260918)
    m = cli.json("dataset", "prepare", "--benchmark", "mmlu-pro", "--profile", "smoke",
                 "--source-path", str(sources["mmlu-pro"]), "--revision", SAMPLE_REVISION)
    cases = [json.loads(line) for line in open(m["path"], "rb").read().splitlines()]
    case_by_key = {messages_key(c["messages"]): c["id"] for c in cases}
    models = [SimModel("slow-a", skill=0.7, latency_s=0.15), SimModel("slow-b", skill=0.5, latency_s=0.1)]
    with SimulatorThread(models=models) as sim:
        targets = [{"id": n, "kind": "single", "base_url": sim.v1_url, "model": n} for n in ("slow-a", "slow-b")]
        cli.run("target", "register", "--file", cli.write("t.json", targets))
        manifest = {"version": "sr-bench-1.0", "name": "crash", "profile": "smoke", "seed": m["seed"],
                    "cost_policy": "capability_only", "dataset": {"path": m["path"], "sha256": m["sha256"]},
                    "targets": [{"id": "slow-a"}, {"id": "slow-b"}],
                    "limits": {"concurrency": 2, "total_timeout_s": 10, "idle_timeout_s": 5}}
        cli.run("plan", "--manifest", cli.write("m.json", manifest), "--output", str(cli.cwd / "frozen.json"))
        runs, windows = [], []
        for k in range(KILLS):
            started = time.time()
            run_id = cli.json("run", "--manifest", str(cli.cwd / "frozen.json"), "--detach",
                              "--idempotency-key", f"crash-{k}")["run_id"]
            runs.append(run_id)
            pid = _service(cli)["pid"]
            time.sleep(rng.uniform(0.05, 1.2))
            os.kill(pid, signal.SIGKILL)
            windows.append((started, time.time()))
            _wait_dead(pid)
        time.sleep(0.4)  # let the simulator finish writing to dead sockets
        log = list(sim.log)
        cli.run("runs")  # restarts the service: in-flight cells become ambiguous
        time.sleep(0.3)
        assert len(sim.log) == len(log), "the restarted service sent requests by itself"
        info = _service(cli)
        token = (cli.cwd / ".sr-bench" / "default" / "store.service-token").read_text().strip()
        api = httpx.Client(base_url=info["url"] + "/api/sr-bench/v1", headers={"Authorization": f"Bearer {token}"})
        for run_id, (t0, t1) in zip(runs, windows, strict=True):
            run = api.get(f"/runs/{run_id}").json()
            assert run["status"] in ("interrupted", "completed"), run
            cells = []
            offset = 0
            while True:
                page = api.get(f"/runs/{run_id}/calls", params={"offset": offset, "limit": 100}).json()
                cells += page["calls"]
                offset += 100
                if offset >= page["total"]:
                    break
            assert all(c["state"] in ("completed", "ambiguous", "failed") for c in cells)
            by_cell = {(c["case_id"], c["target_id"]): c for c in cells}
            for c in cells:
                if c["state"] == "completed":
                    assert c["call"] is not None
                    assert api.get(f"/objects/{c['call']}").status_code == 200
            # an entry without a digest is a request whose body never fully arrived (killed mid-send)
            run_log = [e for e in log if t0 <= e["time"] <= t1 and e["messages_digest"] is not None]
            sent = Counter((e["messages_digest"], e["model"]) for e in run_log)
            assert not sent or max(sent.values()) == 1, "a cell was sent twice"
            # a request can only reach the endpoint after its cell was journaled as dispatching
            assert len(run_log) <= sum(c["state"] != "pending" for c in cells)
            for e in run_log:
                assert by_cell[(case_by_key[e["messages_digest"]], e["model"])]["state"] != "pending"
            answered = [e for e in run_log if e["completed"]]
            for e in answered:
                c = by_cell[(case_by_key[e["messages_digest"]], e["model"])]
                assert c["state"] in ("completed", "ambiguous"), (e, c)
        total_ambiguous = sum(api.get(f"/runs/{r}").json()["progress"]["ambiguous"] for r in runs)
        assert total_ambiguous >= 1
        check = api.post("/store/verify", json={}).json()
        assert check["ok"] is True and check["corrupt"] == [] and check["missing"] == [], check
        # recovery of `undispatched` then completes every run (ambiguous cells stay excluded)
        children = {}
        for k, run_id in enumerate(runs):
            plan = api.post(f"/runs/{run_id}/recover-plan", json={"mode": "undispatched"}).json()
            assert set(plan["excluded_counts"]) <= {"completed", "ambiguous_dispatch", "already_dispatched"}
            if plan["eligible"]:
                r = api.post(f"/runs/{run_id}/recover", json={"plan": plan, "idempotency_key": f"rec-{k}"})
                assert r.status_code == 201, r.text
                children[run_id] = (r.json()["id"], len(plan["eligible"]))
        deadline = time.monotonic() + 120
        for run_id, (child, n) in children.items():
            while (c := api.get(f"/runs/{child}").json())["status"] not in ("completed", "failed"):
                assert time.monotonic() < deadline
                time.sleep(0.1)
            assert c["status"] == "completed" and c["progress"]["completed"] == n
            p = api.get(f"/runs/{run_id}").json()["progress"]
            failed_before = p["failed"] + p["cancelled"]
            assert p["completed"] + n + p["ambiguous"] + failed_before == p["total"]
        api.close()
