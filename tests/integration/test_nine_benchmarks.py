"""End to end over every benchmark this host can run (native fixtures, simulated endpoints, the real
service in process): `sr-bench demo` on a host with the grading sandbox (`SR_BENCH_SANDBOX_DIR`), a
Docker engine with the grading base image (`DOCKER_HOST`) and h5py runs all nine, and the report gives
the full sr-bench score with its interval, labelled SIMULATED. On a host without them the demo must
name exactly the benchmarks the host lacks, each with its reason; the test checks that list and then
skips, saying which and why (CI builds the sandbox and starts an engine, so there it runs in full)."""

from __future__ import annotations

import importlib.util
import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from srbench.benchmarks import all_benchmarks
from srbench.cli.demo import run_demo
from srbench.client.embedded import EmbeddedService

TB = "terminal-bench-2.1"


def _host_lacks() -> dict[str, str]:
    """{benchmark: why} for each benchmark this host cannot give the demo (found independently of it)."""
    lacks: dict[str, str] = {}
    try:
        from srbench.sandbox import open_sandbox

        open_sandbox()
    except Exception as exc:  # noqa: BLE001 - any reason: no sandbox
        lacks["livecodebench"] = lacks["scicode"] = f"no grading sandbox ({getattr(exc, 'message', exc)})"
    if "scicode" not in lacks and importlib.util.find_spec("h5py") is None:
        lacks["scicode"] = "no h5py for its sample's test data"
    try:
        from srbench.sandbox.task_container import engine
        from srbench.simulate.terminal_tasks import local_base_image

        if local_base_image(engine(timeout_s=10)) is None:
            lacks[TB] = "no grading base image on the Docker engine"
    except Exception as exc:  # noqa: BLE001 - no docker package or no engine
        lacks[TB] = f"no Docker engine ({getattr(exc, 'message', exc)})"
    return lacks


def _results(store: Path) -> dict[str, list[dict[str, Any]]]:
    """Every result row of the demo's runs, by run name."""
    with EmbeddedService(store) as svc:
        runs = svc.client.get("/runs")["runs"]
        return {r["name"]: svc.client.get(f"/runs/{r['id']}/results")["results"] for r in runs}


def test_all_available_benchmarks_end_to_end_and_the_full_score(tmp_path: Path, monkeypatch) -> None:
    for name in ("SR_BENCH_URL", "SR_BENCH_TOKEN", "SR_BENCH_OBJECTS_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SR_BENCH_HOME", str(tmp_path / "home"))
    lacks = _host_lacks()
    out = io.StringIO()
    report = run_demo(tmp_path / "demo", False, Console(file=out, width=200))
    text = out.getvalue()
    assert report["status"] == "completed", text[-3000:]
    ran = {b["benchmark"] for b in report["benchmarks"]}
    nine = [b.id for b in all_benchmarks()]
    assert "tau3" in ran and {"mmlu-pro", "gpqa-diamond", "hle", "simpleqa-verified", "arc-agi-2"} <= ran
    (mom,) = report["summary"]["targets"]
    tau = next(b for b in report["benchmarks"] if b["benchmark"] == "tau3")
    assert tau["total"] == 3 and tau["completed"] == 3 and tau["pass_hat_1"] == tau["accuracy"]
    missing = [b for b in nine if b not in ran]
    assert missing == [b for b in nine if b in lacks], (missing, lacks, text[-3000:])   # nothing silently left out
    for b in missing:
        assert f"{b}: not run here" in text
    if TB in ran:
        _check_terminal_bench(tmp_path / "demo" / "store", text)
    if missing:
        assert mom["sr_bench_score"] is None and mom["missing_benchmarks"] == missing
        assert "no full sr-bench score" in text and "missing: " + ", ".join(missing) in text
        pytest.skip("no full sr-bench score on this host: " + "; ".join(f"{b}: {lacks[b]}" for b in missing)
                    + " (the missing list and its reasons were checked)")
    lo, hi = mom["sr_bench_score_ci95"]
    assert mom["sr_bench_score"] is not None and lo < hi and lo <= mom["sr_bench_score"] <= hi
    assert mom["missing_benchmarks"] == [] and "all nine benchmarks" in mom["score_scope"]
    assert "not at their pinned sources" in mom["score_scope"] and TB in mom["score_scope"]
    lines = [line for line in text.splitlines() if ": sr-bench score " in line]
    assert len(lines) == 3 and all(line.lstrip().startswith("SIMULATED ") for line in lines), lines
    assert "no full sr-bench score" not in text


def _check_terminal_bench(store: Path, text: str) -> None:
    """The toy tasks ran as agent trials: the strong model solved its task, the weak one failed it, each
    with its stored trajectory; the router's turns were recorded; no container or task image is left."""
    from srbench.sandbox import task_container as tc
    from srbench.service.store.task_resources import scope_for

    assert "sr-bench's toy tasks in the native layout (not Terminal-Bench data)" in text
    rows = {(r["target_id"], r["case_id"]): r for rs in _results(store).values() for r in rs
            if r["case_id"].startswith(TB + "/")}
    assert {t for t, _ in rows} == {"large", "small", "mom"} and len(rows) == 3, sorted(rows)
    (case,) = {c for _, c in rows}
    assert case.split("/", 1)[1] in ("toy-hello-file", "toy-fix-greeting")
    for target, want in (("large", 1.0), ("small", 0.0)):
        r = rows[(target, case)]
        assert r["state"] == "completed" and r["reward"] == want and r["correct"] is (want == 1.0), r
        assert r["stop_reason"] == "agent_done" and r["calls"] >= 2 and r["cost_usd"] > 0
    mom = rows[("mom", case)]           # the router, called once per turn: its choice per turn is recorded
    assert mom["state"] == "completed" and mom["calls"] >= 2 and len(mom["turn_models"]) == mom["calls"]
    assert set(mom["turn_models"]) <= {"sim-large", "sim-small"}
    if len(set(mom["turn_models"])) == 1:       # one model played every turn: the router's trial is its trial
        assert mom["reward"] == (1.0 if mom["turn_models"][0] == "sim-large" else 0.0), mom
    with EmbeddedService(store) as svc:
        traj = svc.service.objects.get_json(rows[("large", case)]["trajectory"])
        assert traj["kind"] == "trajectory" and traj["reward"] == 1.0 and traj["steps"]
        assert all(s["command"] for s in traj["steps"])
        conv = svc.service.objects.get_json(mom["call"])
        assert len(conv["calls"]) == mom["calls"]
    api = tc.engine(timeout_s=10)
    scope = scope_for(store)
    assert tc.owned_containers(api, scope) == []
    assert api.images(filters={"label": [f"{tc.OWNED}=task-image", f"{tc.SCOPE}={scope}"]}) == []
    json.dumps(traj)        # the trajectory is plain JSON (readable from the Dashboard's object view)
