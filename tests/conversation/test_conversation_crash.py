"""SIGKILL the real service (a subprocess) in the middle of agent conversations, then restart it:
every unfinished conversation is ambiguous with its in-flight call, nothing is resent (the fake
server counts every request), and a recovery child reruns a never-started cell whole."""

from __future__ import annotations

import os
import secrets
import signal
import sqlite3
import sys
import time
from collections import Counter
from pathlib import Path

from service.helpers import Api, free_port, freeze, loopback_process, manifest
from srbench.discovery import API_PREFIX
from srbench.simulate.thread import SimulatorThread

from .conftest import agent_models, toy_targets
from .toy import agent_script, write_tasks

TOY_SERVE = Path(__file__).with_name("toy_serve.py")


def _env(tmp_path: Path, token: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SR_BENCH_")}
    env.update(SR_BENCH_TOKEN=token, SR_BENCH_HOME=str(tmp_path / "home"))
    return env


def _mid_conversation(page: dict) -> bool:
    """Some conversation is dispatching with at least one of its calls done."""
    return any(c["state"] == "dispatching" and any(k["state"] == "completed" for k in c.get("calls") or [])
               for c in page["calls"])


def test_sigkill_mid_conversation_sends_nothing_twice(tmp_path: Path) -> None:
    token = secrets.token_urlsafe(24)
    env = _env(tmp_path, token)
    store = tmp_path / "store"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, str(TOY_SERVE), "serve", "--store", str(store), "--host", "127.0.0.1", "--port", str(port)]
    src = write_tasks(tmp_path / "toy-src")
    with SimulatorThread(models=agent_models(latency_s=0.15), script=agent_script) as sim:
        with loopback_process(cmd, url + API_PREFIX + "/health", tmp_path / "svc1.log", env=env) as proc:
            api = Api(url, token)
            ds = api.ok("POST", "/datasets/prepare", {"benchmark": "toy-agent", "profile": "quick",
                                                      "source_path": str(src), "revision": "toy-1"})
            assert ds["case_count"] == 3
            api.ok("POST", "/targets", {"targets": toy_targets(sim.v1_url)})
            (store / "benchmark-options.json").write_text('{"toy-agent": {"user_simulator": "user-sim"}}')
            m = manifest(ds, [{"id": "agent"}])
            m["limits"]["concurrency"] = 2
            run_id = api.ok("POST", "/runs", {"manifest": freeze(api, m)})["id"]
            deadline = time.monotonic() + 20
            while not _mid_conversation(api.ok("GET", f"/runs/{run_id}/calls")):
                assert time.monotonic() < deadline, "no conversation got under way"
                time.sleep(0.02)
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
            api.close()
        time.sleep(0.5)                      # the fake server finishes writing to the dead sockets
        sent = list(sim.log)
        with loopback_process(cmd, url + API_PREFIX + "/health", tmp_path / "svc2.log", env=env):
            api = Api(url, token)
            run = api.ok("GET", f"/runs/{run_id}")
            assert run["status"] == "interrupted"
            page = api.ok("GET", f"/runs/{run_id}/calls")
            states = Counter(c["state"] for c in page["calls"])
            assert states["ambiguous"] >= 1 and set(states) <= {"ambiguous", "completed"}
            for c in page["calls"]:
                if c["state"] == "ambiguous":
                    assert c["error_class"] == "ambiguous_dispatch" and "conversation" in c["error"]
                    assert {k["state"] for k in c["calls"]} <= {"completed", "ambiguous"}
                    assert c["calls"][-1]["state"] == "ambiguous" or all(k["state"] == "completed" for k in c["calls"])
            time.sleep(0.6)
            assert len(sim.log) == len(sent), "a request was sent after the restart"
            # nothing was sent twice, and every request the server saw has its journal row
            keys = [(e["model"], e["messages_digest"]) for e in sent]
            assert len(keys) == len(set(keys))
            rows = sum(len(c.get("calls") or []) for c in page["calls"])
            assert rows >= len(sent) >= sum(k["state"] == "completed" for c in page["calls"] for k in c["calls"])
            rep = api.ok("GET", f"/runs/{run_id}/report")
            t = rep["summary"]["targets"][0]
            assert t["ambiguous_dispatch"] == states["ambiguous"] and t["cost_usd"] is None
            assert t["simulator_cost_usd"] is None         # an ambiguous conversation may have billed it
            # recovery: ambiguous conversations are excluded; a never-started one reruns whole in a child
            plan = api.ok("POST", f"/runs/{run_id}/recover-plan", {"mode": "undispatched"})
            assert plan["excluded_counts"]["ambiguous_dispatch"] == states["ambiguous"]
            pending = run["progress"]["pending"]
            assert states["ambiguous"] == 2 and pending == 1       # two open conversations (concurrency 2)
            assert len(plan["eligible"]) == pending
            if pending:
                child = api.ok("POST", f"/runs/{run_id}/recover", {"plan": plan, "idempotency_key": "rec-1"})
                done = api.wait(child["id"], timeout=30)
                assert done["status"] == "completed", done
                cpage = api.ok("GET", f"/runs/{done['id']}/calls")
                assert all([k["index"] for k in c["calls"]] == [0, 1, 2, 3, 4] for c in cpage["calls"])
                assert len(sim.log) == len(sent) + 5 * pending
            api.close()
    with sqlite3.connect(store / "journal.sqlite3") as conn:
        left = conn.execute("SELECT COUNT(*) FROM calls WHERE state='dispatching'").fetchone()[0]
    assert left == 0
