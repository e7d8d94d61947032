"""Paged reads on a store of a million calls: p95 of a 100-row page and of the runs list (issue 11, item 1),
and of pages by offset, deep ones included (issue 42, item 5: an offset is a cursor by one indexed query).

Run by hand:  python benchmarks/paged_reads.py --store /tmp/srb-1m [--calls 1000000] [--requests 100]
              python benchmarks/paged_reads.py --store /tmp/srb-12k --calls 12000 --targets 6   (one 12k-cell run)

The store is built once (benchmarks/scale_store.py: one real 40k-cell run through the service's code paths,
then copies of it written straight into the journal, `scale_store.copy_run`: ~2.5 min for 1M calls at low
load; `--real-runs`: every run through the service, ~30 min) and reused. The service runs as `sr-bench serve`
in its own process; this process reads it over loopback with a keep-alive HTTP client, in rounds: each page
kind at its first, middle, last and a random position of a random run — results and calls pages of 100 rows
by offset (upstream's clients page so), events after a sequence number, the runs list after a keyset cursor
(pages of a third of the runs, at most 100) — and a calls page by cursor. Before timing, each run's
results are asked for once (a run whose report head is stale, e.g. after a report-rule change,
rebuilds once: that is shown apart as `warm_up_s`). Prints each page's p50 and p95, the worst p95 and its
ratio to the 50 ms goal (<= 1 meets it), the p95 of `/health` measured in the same run as the floor of one
request, the load before and after, and where the store is.
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


POSITIONS = ("first", "middle", "last", "random")


def _runs_cursors(client: httpx.Client, limit: int) -> list[str | None]:
    """The `after` of every page of the runs list (None: the first page)."""
    cursors: list[str | None] = [None]
    while (nxt := client.get("/runs", params={"limit": limit, **({"after": cursors[-1]} if cursors[-1] else {})}
                             ).json()["next_cursor"]) is not None:
        cursors.append(nxt)
    return cursors


def _at(position: str, first: int, last: int, rng: random.Random) -> int:
    """The position's value between `first` and `last` (inclusive)."""
    fixed = {"first": first, "middle": (first + last) // 2, "last": last}
    return fixed[position] if position in fixed else rng.randint(first, last)


def _requests(runs: list[dict], run_events: dict[str, list[int]], runs_cursors: list[str | None], runs_limit: int,
              rng: random.Random) -> list[tuple[str, str, str, dict[str, object]]]:
    """One round: (kind, position, path, params) for every kind at every position, each of a random run: calls
    and results pages by offset (the last: the run's last 100-row page), events after a sequence number (the
    run's first, middle and last events), the runs list after a keyset cursor; calls by cursor at random too."""
    out: list[tuple[str, str, str, dict[str, object]]] = []
    for position in POSITIONS:
        run = rng.choice(runs)
        rid, n = run["id"], run["progress"]["total"]
        sent = n - run["progress"]["pending"]
        out.append(("results", position, f"/runs/{rid}/results", {"offset": _at(position, 0, max(0, n - 100), rng),
                                                                   "limit": 100}))
        out.append(("calls", position, f"/runs/{rid}/calls", {"offset": _at(position, 0, max(0, sent - 100), rng),
                                                               "limit": 100}))
        seqs = [0, *run_events[rid]]
        out.append(("events", position, f"/runs/{rid}/events",
                    {"after": seqs[_at(position, 0, len(seqs) - 2, rng)], "limit": 100}))
        after = runs_cursors[_at(position, 0, len(runs_cursors) - 1, rng)]
        out.append(("runs_list", position, "/runs", {"limit": runs_limit, **({"after": after} if after else {})}))
    run = rng.choice(runs)
    out.append(("calls", "cursor", f"/runs/{run['id']}/calls",
                {"after": rng.randrange(0, run["progress"]["total"]) * 8, "limit": 100}))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", type=Path, required=True, help="the benchmark's folder (store built there once)")
    ap.add_argument("--calls", type=int, default=1_000_000, help="top the store up to this many calls first")
    ap.add_argument("--requests", type=int, default=100, help="timed requests per page kind and position")
    ap.add_argument("--targets", type=int, default=20, help="targets per run (a run is 2,000 cases × targets)")
    ap.add_argument("--real-runs", action="store_true",
                    help="build every run through the service (slow) instead of copies of the first")
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).parent))
    from scale_store import build

    t_build = time.perf_counter()
    build(args.store, args.calls, args.targets, log=lambda m: print(m, file=sys.stderr), copies=not args.real_runs)
    built_s = time.perf_counter() - t_build
    rng = random.Random(11)
    load0 = os.getloadavg()
    with service_process(args.store / "store") as (client, _):
        runs = client.get("/runs").json()["runs"]
        calls_total = sum(r["progress"]["total"] - r["progress"]["pending"] for r in runs)
        t0 = time.perf_counter()
        for r in runs:
            client.get(f"/runs/{r['id']}/results", params={"limit": 1})
        warm = time.perf_counter() - t0
        run_events = {r["id"]: [e["seq"] for e in client.get(f"/runs/{r['id']}/events").json()["events"]]
                      for r in runs}
        runs_limit = min(100, max(1, len(runs) // 3))
        runs_cursors = _runs_cursors(client, runs_limit)
        out: dict[str, list[float]] = {}
        for _ in range(args.requests):
            out.setdefault("health", []).append(timed_get(client, "/health")[0])
            for kind, position, path, params in _requests(runs, run_events, runs_cursors, runs_limit, rng):
                out.setdefault(f"{kind}_{position}", []).append(timed_get(client, path, **params)[0])
    report: dict[str, object] = {
        "store": str(args.store), "store_calls": calls_total, "runs": len(runs),
        "cells_per_run": runs[0]["progress"]["total"], "runs_list_page_rows": runs_limit,
        "requests_per_kind": args.requests, "build_s": round(built_s, 1), "warm_up_s": round(warm, 2),
        "loadavg_before": [round(x, 2) for x in load0], "loadavg_after": [round(x, 2) for x in os.getloadavg()]}
    for k, v in out.items():
        report[f"{k}_p50_ms"] = round(sorted(v)[len(v) // 2] * 1000, 2)
        report[f"{k}_p95_ms"] = round(p95(v) * 1000, 2)
    worst = max((k for k in out if k != "health"), key=lambda k: p95(out[k]))
    report["worst_page"] = worst
    report["worst_p95_ratio_to_goal"] = round(p95(out[worst]) / GOAL_S, 3)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
