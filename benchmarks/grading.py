"""Grading at scale (issue 31): runs per cell, grading during dispatch, throughput, and Ray against local.

Run by hand (after `sr-bench setup --build-sandbox`; the Ray part needs `pip install 'sr-bench[ray]'`,
root, `unshare` and `ip`):
    python benchmarks/grading.py [--copies 8] [--latency 0.5] [--concurrency 4] [--items 16] [--skip ray]
                                 [--profile standard --copies 45]   (300 cells: above the issue's 200)
                                 [--weak-coder [--fail-busy-s 0.05] [--fail-loop-share 0]] [--backend docker]

Prints one JSON line per measurement, each with its ratio or goal:
1. `run`: a LiveCodeBench run (`--copies` × 4 synthetic problems, quick profile: 30 cases, two targets)
   through the real service against a simulated endpoint of `--latency` s, graded by the host's sandbox
   (bubblewrap, else Docker) wrapped in a counter: sandbox runs per cell (goal 1.0), the share of grading
   done before the run's end was recorded, and the end-of-run work against dispatch (goal ≤ 0.10).
   `--weak-coder` (issue 42): the second target's wrong programs fail slowly — each computes
   `--fail-busy-s` of CPU before its wrong answer, or (a `--fail-loop-share` of them) loops until the
   test's time limit. `sandbox_s` spreads the sandbox runs' wall times; `sandbox_busy` is the pool's
   time inside sandboxes over (pool width × grading span): below 1.0 its threads waited elsewhere.
2. `throughput`: problems/s of the grading path (`--items` problems) at concurrency 1, 2 and the default
   (the cores available: sandbox/capacity.py), each against concurrency 1.
3. `ray`: a real local cluster (a head and two one-CPU worker nodes) in a loopback-only network
   namespace, stopped by PID (tests/sandbox/ray_cluster.py): problems/s through Ray against local grading
   at the same concurrency (2), measured back to back in that namespace.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

from sandbox import corpus, grade_one  # noqa: E402 - benchmarks/sandbox.py
from srbench.sandbox import SandboxUnavailable, open_sandbox  # noqa: E402
from srbench.sandbox.capacity import available_cores  # noqa: E402


def emit(**kw: Any) -> None:
    kw["loadavg"] = os.getloadavg()[0]
    print(json.dumps(kw), flush=True)


def local_sandbox(only: str | None = None) -> Any:
    for name in [only] if only else ["bwrap", "docker"]:
        try:
            return open_sandbox(name)
        except SandboxUnavailable:
            continue
    raise SystemExit("no grading sandbox here: run `sr-bench setup --build-sandbox`")


class _Times(logging.Handler):
    """The service's own account of its end-of-run work (runs.py logs it)."""

    def __init__(self) -> None:
        super().__init__()
        self.end_s: float | None = None

    def emit(self, record: logging.LogRecord) -> None:
        m = re.search(r"caught up in ([0-9.]+) s, end-of-run report built in ([0-9.]+) s", record.getMessage())
        if m:
            self.end_s = float(m.group(1)) + float(m.group(2))


def service_run(real: Any, copies: int, latency: float, concurrency: int, profile: str = "quick",
                weak: tuple[float, float] | None = None) -> None:
    from service.helpers import Api, freeze, manifest, single
    from service.sandbox_fakes import CountingSandbox
    from srbench.client.embedded import EmbeddedService
    from srbench.simulate import samples
    from srbench.simulate.behaviour import SimModel, load_answer_key
    from srbench.simulate.thread import SimulatorThread
    from srbench.stages.grading import code as code_grade

    tmp = Path(tempfile.mkdtemp(prefix="sr-bench-grading-"))
    os.environ["SR_BENCH_HOME"] = str(tmp / "home")
    counting = CountingSandbox(inner=real)
    code_grade.use_sandbox(counting)
    times = _Times()
    logging.getLogger("srbench.service").addHandler(times)
    logging.getLogger("srbench.service").setLevel(logging.INFO)
    try:
        with EmbeddedService(tmp / "store") as svc:
            api = Api(svc.url, svc.token)
            src = samples.write_livecodebench(tmp / "lcb", copies=copies)
            ds = api.ok("POST", "/datasets/prepare", {"benchmark": "livecodebench", "profile": profile,
                                                     "source_path": str(src), "revision": "synthetic"})
            busy, loops = weak or (0.0, 0.0)     # the weak coder's wrong programs fail slowly
            models = [SimModel("a", skill=1.0, latency_s=latency),
                      SimModel("b", skill=0.0, latency_s=latency, fail_busy_s=busy, fail_loop_share=loops)]
            with SimulatorThread(models=models, answer_key=load_answer_key(ds["path"])) as sim:
                api.ok("POST", "/targets", {"targets": [single("a", sim.v1_url, "a"), single("b", sim.v1_url, "b")]})
                m = manifest(ds, [{"id": "a"}, {"id": "b"}])
                m["limits"].update(concurrency=concurrency, max_run_seconds=900, total_timeout_s=60,
                                   case_timeout_s=60)
                run = api.wait(api.ok("POST", "/runs", {"manifest": freeze(api, m)})["id"], timeout=900)
            deadline = time.monotonic() + 600
            while times.end_s is None and time.monotonic() < deadline:
                time.sleep(0.2)
            api.close()
    finally:
        code_grade.use_sandbox(None)
        shutil.rmtree(tmp, ignore_errors=True)
    started = datetime.fromisoformat(run["started_at"].replace("Z", "+00:00")).timestamp()
    ended = datetime.fromisoformat(run["finished_at"].replace("Z", "+00:00")).timestamp()
    cells = int(run.get("total") or len(counting.runs))
    before = sum(r["ended"] <= ended for r in counting.runs)
    dispatch = ended - started
    emit(measure="run", backend=real.name, cells=cells, sandbox_runs=len(counting.runs),
         runs_per_cell=round(len(counting.runs) / max(1, cells), 3), goal_runs_per_cell=1.0,
         graded_before_end=round(before / max(1, len(counting.runs)), 3), dispatch_s=round(dispatch, 2),
         end_of_run_s=None if times.end_s is None else round(times.end_s, 2), end_over_dispatch=None if times.end_s is None else round(times.end_s / dispatch, 3),
         goal_end_over_dispatch=0.10, peak_concurrent_sandboxes=counting.peak, latency_s=latency,
         concurrency_per_target=concurrency, pool=available_cores(),
         weak_coder=None if weak is None else {"fail_busy_s": weak[0], "fail_loop_share": weak[1]},
         sandbox_s=_spread([r["ended"] - r["started"] for r in counting.runs]), sandbox_busy=_busy(counting.runs))


def _busy(runs: list[dict[str, Any]]) -> float:
    """The pool's time in sandboxes: their wall times over (pool width × first start to last end); below
    1.0 the pool's threads spent the rest outside the sandbox (reading, recording, waiting)."""
    if not runs:
        return 0.0
    span = max(r["ended"] for r in runs) - min(r["started"] for r in runs)
    return round(sum(r["ended"] - r["started"] for r in runs) / max(1e-9, span * available_cores()), 3)


def _spread(xs: list[float]) -> dict[str, float]:
    """Median, 90th percentile and maximum of the sandbox runs' wall times."""
    xs = sorted(xs) or [0.0]
    return {"median": round(xs[len(xs) // 2], 3), "p90": round(xs[int(len(xs) * 0.9)], 3), "max": round(xs[-1], 3)}


def rate(sandbox: Any, items: list[Any], conc: int) -> float:
    t0 = time.perf_counter()
    with ThreadPoolExecutor(conc) as pool:
        list(pool.map(lambda it: grade_one(sandbox, it), items))
    return len(items) / (time.perf_counter() - t0)


def throughput(real: Any, n: int) -> None:
    items = (corpus() * (n // 8 + 1))[:n]
    grade_one(real, items[0])                          # warm-up
    default = available_cores()
    rates = {c: rate(real, items, c) for c in sorted({1, 2, default})}
    emit(measure="throughput", backend=real.name, problems=n, default_concurrency=default,
         problems_per_s={str(c): round(r, 2) for c, r in rates.items()},
         ratio_to_1={str(c): round(r / rates[1], 2) for c, r in rates.items()})


def ray_part(n: int) -> None:
    """Inside the namespace: the cluster, then Ray and local grading back to back."""
    mod = ray_cluster()
    os.environ["SR_BENCH_RAY_ADDRESS"] = "127.0.0.1:6379"
    cluster = mod.Cluster(pids_file=os.environ.get("SR_BENCH_RAY_PIDS"))
    out: dict[str, Any] = {}
    try:
        cluster.start()
        local = open_sandbox("bwrap")
        ray_sb = open_sandbox("ray")
        items = (corpus() * (n // 8 + 1))[:n]
        grade_one(ray_sb, items[0])
        grade_one(local, items[0])
        out["ray"] = rate(ray_sb, items, 2)
        out["local"] = rate(local, items, 2)
    except Exception as exc:  # noqa: BLE001 - printed
        out["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        print("RAY " + json.dumps(out), flush=True)
        try:
            cluster.stop()
        finally:
            shutil.rmtree(cluster.tmp, ignore_errors=True)
            os._exit(0)


def ray_cluster() -> Any:
    """tests/sandbox/ray_cluster.py (the Ray test's cluster and its stop-by-PID), loaded by path: the name
    `sandbox` on this script's path is benchmarks/sandbox.py."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("ray_cluster", HERE.parent / "tests" / "sandbox" / "ray_cluster.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def ray_compare(n: int) -> None:
    import importlib.util

    if importlib.util.find_spec("ray") is None or os.geteuid() != 0 or not shutil.which("unshare"):
        emit(measure="ray", skipped="needs ray (pip install 'sr-bench[ray]'), root and unshare")
        return
    pids = Path(tempfile.mkdtemp(prefix="sr-bench-ray-")) / "pids.json"
    env = {**os.environ, "SR_BENCH_SANDBOX": "bwrap", "RAY_USAGE_STATS_ENABLED": "0", "SR_BENCH_RAY_PIDS": str(pids)}
    cmd = f"ip link set lo up && exec {sys.executable} {Path(__file__).resolve()} --ray-part --items {n}"
    try:
        proc = subprocess.run(["unshare", "-n", "sh", "-c", cmd], env=env, capture_output=True, timeout=600,
                              text=True)
    finally:                # whatever happened: the cluster's processes, by PID (never `ray stop`)
        if pids.exists():
            for root in json.loads(pids.read_text()):
                ray_cluster().stop_tree(root)
        shutil.rmtree(pids.parent, ignore_errors=True)
    line = next((x for x in proc.stdout.splitlines() if x.startswith("RAY ")), None)
    got = json.loads(line[4:]) if line else {"error": proc.stderr[-500:]}
    if "error" in got:
        emit(measure="ray", error=got["error"])
        return
    emit(measure="ray", problems=n, concurrency=2, workers=2, ray_problems_per_s=round(got["ray"], 2),
         local_problems_per_s=round(got["local"], 2), ray_over_local=round(got["ray"] / got["local"], 2),
         note="one host: the two worker nodes share its cores, so this is Ray's overhead, not a speed-up")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--copies", type=int, default=8)
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--concurrency", type=int, default=4, help="the plan's concurrency per target")
    ap.add_argument("--items", type=int, default=16)
    ap.add_argument("--profile", default="quick", choices=["quick", "standard"],
                    help="quick: 30 cases (60 cells); standard: 150 cases (300 cells; needs --copies 45: 180 problems)")
    ap.add_argument("--weak-coder", action="store_true",
                    help="the second target is a weak coder whose wrong programs fail slowly (CPU-bound)")
    ap.add_argument("--fail-busy-s", type=float, default=0.05,
                    help="with --weak-coder: CPU seconds a wrong program computes before it fails (0.05: about "
                         "one sandbox start-up, so its failing programs cost twice a plain one)")
    ap.add_argument("--fail-loop-share", type=float, default=0.0,
                    help="with --weak-coder: share of its wrong programs that loop until the test's time limit")
    ap.add_argument("--backend", choices=["bwrap", "docker"], help="the sandbox (default: bwrap, else Docker)")
    ap.add_argument("--ray-part", action="store_true")
    ap.add_argument("--skip", default="", help="comma-separated: run, throughput, ray")
    a = ap.parse_args()
    if a.ray_part:
        ray_part(a.items)
        return
    skip = set(filter(None, a.skip.split(",")))
    real = local_sandbox(a.backend)
    if "run" not in skip:
        weak = (a.fail_busy_s, a.fail_loop_share) if a.weak_coder else None
        service_run(real, a.copies, a.latency, a.concurrency, a.profile, weak)
    if "throughput" not in skip:
        throughput(real, a.items)
    if "ray" not in skip:
        ray_compare(a.items)


if __name__ == "__main__":
    main()
