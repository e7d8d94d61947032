"""Issue 39, item 5: sr-bench's CLI is a good client of upstream's own service — `vllm-sr benchmark serve` from
the released wheel, unchanged, on loopback — for plan without --output, run (detached and attached),
compare, recover-plan without --mode, recover from a plan upstream wrote, retry, and the read commands (runs,
show, report)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from service.helpers import PRICE, REVISIONS, free_port, loopback_process
from srbench import DEFAULT_SEED
from srbench.cli import views
from srbench.simulate import samples
from srbench.simulate.behaviour import SimModel, answer_key_from_cases
from srbench.simulate.server import Fault
from srbench.simulate.thread import SimulatorThread
from srbench.stages.datasets.build import decode_cases

from .upstream_env import upstream_cli

TOKEN = "upstream-service-token-0123456789abcdef"
TERMINAL = ("completed", "failed", "cancelled", "interrupted")
LIMITS = {"concurrency": 2, "total_timeout_s": 20, "idle_timeout_s": 10, "case_timeout_s": 20, "max_run_seconds": 60}


class SrBench:
    """sr-bench's CLI pointed at one service by SR_BENCH_URL and SR_BENCH_TOKEN (no local store, no autostart)."""

    def __init__(self, cwd: Path, url: str) -> None:
        self.cwd = cwd
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("SR_BENCH_")}
        self.env.update(SR_BENCH_URL=url, SR_BENCH_TOKEN=TOKEN, SR_BENCH_HOME=str(cwd / "home"))

    def run(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([sys.executable, "-m", "srbench.cli.main", *args], cwd=self.cwd, env=self.env,
                              capture_output=True, text=True, timeout=180)
        if ok and done.returncode != 0:
            raise AssertionError(f"sr-bench {' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}")
        return done

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args).stdout)


@pytest.fixture
def upstream(tmp_path: Path) -> Iterator[tuple[str, SimulatorThread, list[dict[str, Any]]]]:
    """(upstream's service URL, a simulator that knows the cases' answers, the cases)."""
    vllm_sr = upstream_cli()
    cases = [c.model_dump(mode="json") for c in decode_cases(Path(_prepare(tmp_path)).read_bytes())]
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SR_BENCH_")}
    env.update(SR_BENCH_TOKEN=TOKEN, HOME=str(tmp_path / "home"))
    models = [SimModel("strong", skill=0.9), SimModel("weak", skill=0.4)]
    cmd = [str(vllm_sr), "benchmark", "--url", url, "--store", str(tmp_path / "upstream-store"), "serve",
           "--port", str(port)]
    with SimulatorThread(models=models, answer_key=answer_key_from_cases(cases)) as sim, \
            loopback_process(cmd, url + "/health", tmp_path / "upstream.log", token=TOKEN, env=env, cwd=tmp_path):
        yield url, sim, cases


def _prepare(tmp_path: Path) -> str:
    """A frozen MMLU-Pro smoke dataset (sr-bench's own prepare, embedded): the cases both sides run."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SR_BENCH_")}
    env.update(SR_BENCH_HOME=str(tmp_path / "prep-home"), SR_BENCH_PORT="0")
    src = samples.write_mmlu_pro(tmp_path / "mmlu")
    done = subprocess.run([sys.executable, "-m", "srbench.cli.main", "--store", str(tmp_path / "prep"), "--embedded",
                           "dataset", "prepare", "--benchmark", "mmlu-pro", "--profile", "smoke", "--source-path",
                           str(src), "--revision", REVISIONS["mmlu-pro"]],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    return str(json.loads(done.stdout)["path"])


def _manifest(cli: SrBench, name: str, sim: SimulatorThread, cases: list[dict[str, Any]], *targets: str,
              limits: dict[str, Any] = LIMITS) -> str:
    value = {"version": "sr-bench-1.0", "name": name, "profile": "smoke", "seed": DEFAULT_SEED, "cases": cases,
             "limits": limits, "targets": [{"id": t, "kind": "single", "base_url": sim.v1_url, "model": t,
                                            "prices": {t: PRICE}} for t in targets]}
    path = cli.cwd / f"{name}.json"
    path.write_text(json.dumps(value))
    return str(path)


def _wait(cli: SrBench, run_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 90
    while True:
        run = cli.json("show", run_id)
        run = run.get("run", run)
        if run["status"] in TERMINAL:
            return run
        assert time.monotonic() < deadline, run
        time.sleep(0.5)


def test_srbench_cli_against_upstream_serve(tmp_path: Path, upstream: tuple[str, SimulatorThread, list[Any]]) -> None:
    url, sim, cases = upstream
    work = tmp_path / "work"
    work.mkdir()
    cli = SrBench(work, url)
    base = _manifest(cli, "baseline", sim, cases, "strong", "weak")
    cand = _manifest(cli, "candidate", sim, cases, "weak")

    planned = cli.json("plan", "--manifest", base)                       # plan without --output
    assert planned["output"] is None and planned["total"] == 2 * len(cases)
    assert planned["manifest"]["plan_sha256"] == planned["plan_sha256"]

    detached = cli.json("run", "--manifest", base, "--detach")           # run, detached
    assert detached["run_id"].startswith("run-") and detached["created"] is None
    assert _wait(cli, detached["run_id"])["status"] == "completed"

    attached = cli.run("run", "--manifest", cand)                         # run, attached, to the end
    final = json.loads(attached.stdout)
    assert final["status"] == "completed" and final["progress"]["completed"] == len(cases)
    assert "weak:" in attached.stderr and "accuracy" in attached.stderr

    cmp = cli.json("compare", detached["run_id"], final["run_id"])
    assert cmp["baseline_selected_target_id"] == "strong"
    assert [r["candidate_target_id"] for r in cmp["comparisons"]] == ["weak"]

    plan = cli.json("recover-plan", detached["run_id"])                   # recover-plan without --mode
    assert plan["mode"] == "undispatched" and plan["eligible"] == 0 and plan["output"] is None
    assert plan["plan"]["parent_run_id"] == detached["run_id"]

    runs = cli.json("runs")
    assert {r["id"] for r in runs["runs"]} == {detached["run_id"], final["run_id"]}
    report = cli.json("report", final["run_id"])
    assert report["summary"]["targets"][0]["id"] == "weak"
    # what a person sees at a terminal reads upstream's runs too (their targets and name are in the manifest)
    screen = Console(file=io.StringIO(), width=140)
    views.runs_view(runs, screen)
    views.run_view(runs["runs"][0], screen)
    shown = screen.file.getvalue()
    assert "strong, weak" in shown and "baseline" in shown and "0 ambiguous" in shown


def _failing_run(cli: SrBench, sim: SimulatorThread, cases: list[dict[str, Any]], name: str) -> str:
    """A run upstream's engine fails closed: its first case's call answers 500, so nothing more is sent."""
    first = cases[0]["messages"][-1]["content"]
    sim.set_fault(lambda body: Fault(status=500, body='{"error": {"message": "boom"}}')
                  if body["messages"][-1]["content"] == first else None)
    try:
        done = cli.run("run", "--manifest", _manifest(cli, name, sim, cases, "weak", limits={**LIMITS, "concurrency": 1}),
                       ok=False)
    finally:
        sim.set_fault(None)
    assert done.returncode == 1 and json.loads(done.stdout)["status"] == "failed", done.stderr[-2000:]
    return str(json.loads(done.stdout)["run_id"])


def test_srbench_cli_recovers_an_upstream_run(tmp_path: Path, upstream: tuple[str, SimulatorThread, list[Any]]) -> None:
    """recover-plan, recover with the file it wrote, and retry continue runs upstream's engine failed."""
    url, sim, cases = upstream
    work = tmp_path / "work"
    work.mkdir()
    cli = SrBench(work, url)
    run_id = _failing_run(cli, sim, cases, "failing")
    plan = cli.json("recover-plan", run_id, "--output", str(work / "recovery.json"))
    assert plan["eligible"] == len(cases) - 1 and plan["output"] == str(work / "recovery.json")
    child = cli.json("recover", run_id, "--plan", str(work / "recovery.json"), "--idempotency-key", "rec-1")
    assert child["status"] == "completed" and child["progress"]["completed"] == len(cases) - 1
    # upstream retries no failed call whose usage is unknown (a 500 has none): one line, upstream's count
    refused = cli.run("retry", run_id, "--failed", ok=False)
    assert refused.returncode == 2 and "no cell to retry in mode failed" in refused.stderr
    assert "Traceback" not in refused.stderr

    other = _failing_run(cli, sim, cases, "failing-again")
    retried = cli.json("retry", other)                                    # recover-plan + recover in one
    assert retried["status"] == "completed" and retried["progress"]["total"] == len(cases) - 1
    assert retried["report"]["summary"]["targets"][0]["id"] == "weak"
