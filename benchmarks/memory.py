"""Service memory during and after a big run vs its idle baseline (issue 11, item 2; goal: +100 MiB).

Run by hand:  python benchmarks/memory.py [--targets 50]      (50 targets x 2,000 cases = 100k cells)

The service runs in its own process (the real app, RunManager and Dispatcher) with the network left
out as in benchmarks/scale_store.py: `stream_chat` answers at once with a synthetic completed call.
Its RSS (/proc/PID/status VmRSS) with every process under it (the report-rows worker,
service/runs/report_rows_worker.py) is sampled every 0.2 s: fresh (started on an empty store), idle (one
dataset and the targets registered, every process settled), during the run, during its end-of-run report
(the first GET /report after the run, timed: goal <= 0.05 of dispatch, issue 42), and after (30 s after
every process of the service stopped using CPU). Prints each in MiB, the growth over idle and its ratio
to the 100 MiB budget (<= 1 meets the goal), after over fresh (goal <= 100 MiB), and apart the peak RSS
of the service's worker processes (and, per phase, the service's own peak and its workers' apart), and the
peak of their summed PSS (pages they share counted once: RSS counts them in each process).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

import httpx

from srbench import TERMINAL_STATUSES
from srbench.discovery import API_PREFIX
from srbench.simulate import samples

SERVER = """
import asyncio, logging, sys
logging.basicConfig(level=logging.INFO)
sys.path.insert(0, {bench!r})
from scale_store import synthetic_stream_chat
from srbench.stages.dispatch import calls as dispatch
from srbench.service.app import serve
dispatch.stream_chat = synthetic_stream_chat
asyncio.run(serve(__import__("pathlib").Path({store!r}), "127.0.0.1", {port}, {token!r}))
"""


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def pss_mib(pid: int) -> float:
    """The proportional set size: pages shared with other processes (the worker's and the service's copies
    of libpython and the extension modules) counted once across them, not once in each as RSS counts them."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def children(pid: int) -> list[int]:
    """Every descendant of `pid` (the report-rows worker, sandboxes), depth first."""
    out: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return out
    for task in tasks:
        try:
            kids = (task / "children").read_text().split()
        except OSError:
            continue
        for kid in kids:
            out.append(int(kid))
            out += children(int(kid))
    return out


def children_rss_mib(pid: int) -> float:
    """The RSS of the service's descendant processes (its report-rows worker), apart from its own."""
    total = 0.0
    for kid in children(pid):
        try:
            total += rss_mib(kid)
        except (OSError, ValueError):
            pass
    return total


def cpu_s(pid: int) -> float:
    """CPU seconds of `pid` and of every process under it (the report-rows worker's too)."""
    total = 0.0
    for p in [pid, *children(pid)]:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def settle(pid: int) -> float:
    """Wait until the service and all its processes stop using CPU (under 0.05 s a second); seconds waited."""
    t0 = time.perf_counter()
    busy = cpu_s(pid)
    while True:
        time.sleep(1.0)
        now = cpu_s(pid)
        if now - busy < 0.05:
            return time.perf_counter() - t0 - 1.0
        busy = now


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--targets", type=int, default=50)
    ap.add_argument("--after-s", type=float, default=30.0)
    ap.add_argument("--samples", type=Path, help="write every sample here (JSON lines: s, phase, service, workers)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sr-bench-memory-"))
    src = samples.write_mmlu_pro(work / "src", per_category=200)
    token = secrets.token_urlsafe(24)
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = SERVER.format(bench=str(Path(__file__).parent), store=str(work / "store"), port=port, token=token)
    log = (work / "service.log").open("wb")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=log)
    c = httpx.Client(base_url=f"http://127.0.0.1:{port}{API_PREFIX}", headers={"authorization": f"Bearer {token}"},
                     timeout=600, trust_env=False)
    samples_: list[tuple[str, float, float]] = []       # (phase, the service's RSS, its processes' RSS)
    phase = ["idle"]
    times: list[float] = []
    pss: list[float] = []                               # the service's and its processes' PSS, summed
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            samples_.append((phase[0], rss_mib(proc.pid), children_rss_mib(proc.pid)))
            times.append(time.perf_counter())
            pss.append(sum(pss_mib(p) for p in [proc.pid, *children(proc.pid)]))
            time.sleep(0.2)
    try:
        for _ in range(300):
            try:
                if c.get("/health").status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        time.sleep(2)
        fresh = rss_mib(proc.pid) + children_rss_mib(proc.pid)
        ds = c.post("/datasets/prepare", json={"benchmark": "mmlu-pro", "profile": "standard", "seed": 1,
                                               "source_path": str(src), "revision": "bench"}).json()
        ids = [f"t{i:02d}" for i in range(args.targets)]
        c.post("/targets", json={"targets": [{"id": t, "kind": "single", "base_url": "http://127.0.0.1:9/v1",
                                              "model": t} for t in ids]}).raise_for_status()
        manifest = {"version": "sr-bench-1.0", "name": "memory", "profile": "standard", "seed": 1,
                    "cost_policy": "capability_only", "dataset": {"path": ds["path"], "sha256": ds["sha256"]},
                    "targets": [{"id": t} for t in ids], "sampling": {"max_tokens": 64},
                    "limits": {"concurrency": 8, "total_timeout_s": 30, "idle_timeout_s": 10,
                               "max_run_seconds": 86400}}
        plan = c.post("/plans", json={"manifest": manifest}).json()["manifest"]
        c.get("/runs")
        settle(proc.pid)
        idle = rss_mib(proc.pid) + children_rss_mib(proc.pid)
        idle_pss = sum(pss_mib(p) for p in [proc.pid, *children(proc.pid)])
        threading.Thread(target=sample, daemon=True).start()
        phase[0] = "run"
        run_id = c.post("/runs", json={"manifest": plan}).json()["id"]
        while (view := c.get(f"/runs/{run_id}").json())["status"] not in TERMINAL_STATUSES:
            time.sleep(0.2)
        phase[0] = "report"
        t0 = time.perf_counter()        # the first GET /report after the run: answered when its report is ready
        first = c.get(f"/runs/{run_id}/report")
        first_s = time.perf_counter() - t0
        first.raise_for_status()
        report_s = first_s + settle(proc.pid)       # until the service and its worker stop using CPU
        assert c.get(f"/runs/{run_id}/report").json()["cache_hit"] is True
        phase[0] = "after"
        time.sleep(args.after_s)
        stop.set()
        after = rss_mib(proc.pid) + children_rss_mib(proc.pid)
        view = c.get(f"/runs/{run_id}").json()
    finally:
        stop.set()
        c.close()
        proc.terminate()
        proc.wait(timeout=30)
        log.close()
    if args.samples:
        args.samples.write_text("".join(json.dumps({"s": round(t - times[0], 1), "phase": ph, "service": round(r, 1),
                                                    "workers": round(w, 1)}) + "\n"
                                        for t, (ph, r, w) in zip(times, samples_, strict=False)))
    dispatch_s = (datetime.fromisoformat(view["finished_at"]) - datetime.fromisoformat(view["started_at"])).total_seconds()
    peak = {p: max((r + w for ph, r, w in samples_ if ph == p), default=0.0) for p in ("run", "report", "after")}
    growth = max(peak.values()) - idle
    ended = [ln for ln in (work / "service.log").read_text().splitlines() if "report rows caught up" in ln]
    print(json.dumps({"cells": view["progress"]["total"], "fresh_rss_mib": round(fresh, 1),
                      "idle_rss_mib": round(idle, 1),
                      **{f"peak_{p}_rss_mib": round(v, 1) for p, v in peak.items()},
                      "after_rss_mib": round(after, 1), "after_over_fresh_mib": round(after - fresh, 1),
                      "growth_mib": round(growth, 1), "ratio_to_budget": round(growth / 100.0, 3),
                      "peak_worker_rss_mib": round(max((w for _, _, w in samples_), default=0.0), 1),
                      "idle_pss_mib": round(idle_pss, 1), "peak_pss_mib": round(max(pss, default=0.0), 1),
                      **{f"peak_{p}_service_worker_mib": [round(max((r for ph, r, _ in samples_ if ph == p), default=0.0), 1),
                                                          round(max((w for ph, _, w in samples_ if ph == p), default=0.0), 1)]
                         for p in ("run", "report")},
                      "dispatch_s": round(dispatch_s, 1), "first_report_s": round(first_s, 2),
                      "first_report_ratio": round(first_s / dispatch_s, 4), "report_settled_s": round(report_s, 1),
                      "end_of_run": ended[-1].split(": ", 1)[-1] if ended else None,
                      "loadavg": [round(x, 2) for x in os.getloadavg()], "store": str(work)}))

if __name__ == "__main__":
    main()
