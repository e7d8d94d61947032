"""Paged reads on a store of a million calls: p95 of a 100-row page and of the runs list (issue 11, item 1),
and of pages by offset, deep ones included (issue 42, item 5: an offset is a cursor by one indexed query).

Run by hand:  python benchmarks/paged_reads.py --store /var/tmp/srb-scale [--calls 1000000] [--requests 300]
              python benchmarks/paged_reads.py --store /var/tmp/srb-12k --calls 12000 --targets 6   (one 12k-cell run)

The store is built once (benchmarks/scale_store.py: real service code paths, 40k-cell runs) and
reused. The service runs as `sr-bench serve` in its own process; this process reads it over
loopback with a keep-alive HTTP client: the runs list (its first page), then 100-row pages of
results, calls and events at random cursors of random runs. Before timing, each run's
results are asked for once (a run whose report head is stale, e.g. after a report-rule change,
rebuilds once: that is shown apart as `warm_up_s`). Prints each p95 and its ratio to the 50 ms
goal (<= 1 meets it), and the p95 of `/health` measured in the same run as the floor of one request.
Pages by offset (upstream's clients page so): calls and results at a random offset of the run and calls at a
deep one (its last tenth), each p95 also as a ratio to the results-by-offset p95 measured in the same run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from srbench.discovery import API_PREFIX

GOAL_S = 0.050


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def service_process(store: Path) -> Iterator[tuple[httpx.Client, int]]:
    token = secrets.token_urlsafe(24)
    port = _free_port()
    env = os.environ | {"SR_BENCH_TOKEN": token}
    proc = subprocess.Popen([sys.executable, "-m", "srbench.cli.main", "serve", "--store", str(store),
                             "--host", "127.0.0.1", "--port", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}{API_PREFIX}",
                          headers={"authorization": f"Bearer {token}"}, timeout=600, trust_env=False)
    try:
        for _ in range(600):
            try:
                if client.get("/health").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        yield client, proc.pid
    finally:
        client.close()
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def p95(samples: list[float]) -> float:
    s = sorted(samples)
    return s[min(len(s) - 1, int(0.95 * len(s)))]


def timed_get(client: httpx.Client, path: str, **params: object) -> tuple[float, dict]:
    t0 = time.perf_counter()
    resp = client.get(path, params=params)
    dt = time.perf_counter() - t0
    resp.raise_for_status()
    return dt, resp.json()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", type=Path, required=True, help="the benchmark's folder (store built there once)")
    ap.add_argument("--calls", type=int, default=1_000_000, help="top the store up to this many calls first")
    ap.add_argument("--requests", type=int, default=300, help="timed requests per kind")
    ap.add_argument("--targets", type=int, default=20, help="targets per run (a run is 2,000 cases × targets)")
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).parent))
    from scale_store import build

    build(args.store, args.calls, args.targets, log=lambda m: print(m, file=sys.stderr))
    rng = random.Random(11)
    load0 = os.getloadavg()
    with service_process(args.store / "store") as (client, _):
        runs = client.get("/runs", params={"limit": 500}).json()["runs"]
        calls_total = sum(r["progress"]["total"] - r["progress"]["pending"] for r in runs)
        t0 = time.perf_counter()
        for r in runs:
            client.get(f"/runs/{r['id']}/results", params={"limit": 1})
        warm = time.perf_counter() - t0
        out: dict[str, list[float]] = {k: [] for k in ("health", "runs_list", "results", "calls", "events",
                                                       "results_offset", "calls_offset", "calls_deep_offset")}
        for _ in range(args.requests):
            out["health"].append(timed_get(client, "/health")[0])
            out["runs_list"].append(timed_get(client, "/runs", limit=200)[0])
            run = rng.choice(runs)
            n = run["progress"]["total"]
            dt, page = timed_get(client, f"/runs/{run['id']}/results", after=rng.randrange(0, n), limit=100)
            out["results"].append(dt)
            dt, _ = timed_get(client, f"/runs/{run['id']}/calls", after=rng.randrange(0, n) * 8, limit=100)
            out["calls"].append(dt)
            out["events"].append(timed_get(client, f"/runs/{run['id']}/events", after=0, limit=100)[0])
            sent = n - run["progress"]["pending"]
            out["results_offset"].append(timed_get(client, f"/runs/{run['id']}/results", offset=rng.randrange(0, n),
                                                   limit=100)[0])
            out["calls_offset"].append(timed_get(client, f"/runs/{run['id']}/calls", offset=rng.randrange(0, sent),
                                                 limit=100)[0])
            out["calls_deep_offset"].append(timed_get(client, f"/runs/{run['id']}/calls",
                                                      offset=rng.randrange(sent * 9 // 10, sent), limit=100)[0])
    report = {"store_calls": calls_total, "runs": len(runs), "cells_per_run": runs[0]["progress"]["total"],
              "requests_per_kind": args.requests,
              "warm_up_s": round(warm, 2), "loadavg_before": [round(x, 2) for x in load0],
              "loadavg_after": [round(x, 2) for x in os.getloadavg()]}
    for k, v in out.items():
        report[f"{k}_p95_ms"] = round(p95(v) * 1000, 2)
        if k != "health":
            report[f"{k}_ratio_to_goal"] = round(p95(v) / GOAL_S, 3)
    for k in ("calls_offset", "calls_deep_offset"):
        report[f"{k}_ratio_to_results_offset"] = round(p95(out[k]) / p95(out["results_offset"]), 2)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
