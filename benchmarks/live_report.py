"""Live figures while a big run dispatches (issue 41, item 1).

Run by hand:  python benchmarks/live_report.py --targets 5     (5 targets x 2,000 cases = 10k cells)
              python benchmarks/live_report.py --targets 50    (100k cells)

One run of the MMLU-Pro standard profile (synthetic, native parquet) x `--targets` targets against a
zero-latency simulator in its own process, on an embedded service. While it dispatches, a client in a process
of its own (so it does not hold the service's GIL) does what the Dashboard's run page does every `--interval`
seconds (3: its POLL_MS): GET /runs/{id} and then GET /runs/{id}/live (the figures so far, maintained as cells
finish), timing the refresh; `--pages N` opens the page N times (N such processes, their refreshes spread over
the interval: more refreshes to take a p95 of on a short run). Prints one JSON line:
- `refresh_p50_s` / `refresh_p95_s` / `refresh_max_s` over the refreshes while the run went (both requests),
  and `p95_goal_ratio` = p95 / 0.2 s (the goal: ≤ 1);
- `health_p95_s`: GET /health in the same refresh, the control (an O(1) answer from the same loop: what the
  loaded host and the dispatching loop cost any request), and `live_over_health_p95`;
- `lag_cells_max` / `lag_cells_p95`: finished cells the figures did not hold yet, against the counts in the
  same answer (the row builder folds about once a second);
- `lag_s_p95` / `lag_s_max`: how old the figures are, in seconds — from the last moment the journal had no
  more finished cells than the figures hold (sampled every 50 ms in process) to the answer; the goal is at
  most one refresh interval (`lag_goal_ratio` = max / interval);
- `end_report_s`: the end-of-run report of the same run (the first GET /report asked as the run ends,
  answered), `end_report_ratio` over the dispatch time (goal <= 0.05, issue 42) and
  `refresh_p95_over_end_report`;
- with `--report`, `full_report_p95_s`: GET /report on each refresh too (what the page asked before);
- `profile`: where the time of one live report went (cProfile of one in-process `report_digest` at about
  half of the run, the top functions by cumulative time) when `--profile` is given.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import multiprocessing
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from srbench import TERMINAL_STATUSES
from srbench.client.api import Client
from srbench.client.embedded import EmbeddedService
from srbench.simulate import samples

sys.path.insert(0, str(Path(__file__).parent))
from dispatch import simulator_process  # noqa: E402
from incremental_report import start_run  # noqa: E402

GOAL_S = 0.2


def _p(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def poll(url: str, token: str, start: Any, interval: float, out: Any, stop: Any, report: bool, delay: float) -> None:
    """The run page's refresh while the run goes: the run, then its figures so far (GET …/live), each timed,
    with the cells the figures lag the run view's counts read in the same answer; with `report`, also the
    full report (what the page asked for before issue 41). Runs in a process of its own (`out`: a queue that
    gets the list of refreshes at the end; `at` is time.monotonic, the same clock in every process; started
    before the run, it gets the run's id from `start`)."""
    rows: list[dict[str, float]] = []
    c = Client(url, token)
    try:
        run_id = start.get()
        stop.wait(delay)
        while not stop.is_set():
            t0 = time.perf_counter()
            run = c.get(f"/runs/{run_id}")
            if run["status"] in TERMINAL_STATUSES:
                return
            t1 = time.perf_counter()
            live = c.get(f"/runs/{run_id}/live")
            t2, at = time.perf_counter(), time.monotonic()
            p = live["progress"]
            c.get("/health")                         # the control: an O(1) answer from the same loaded loop
            row = {"run_s": t1 - t0, "live_s": t2 - t1, "refresh_s": t2 - t0, "health_s": time.perf_counter() - t2,
                   "lag": p["completed"] + p["failed"] + p["cancelled"] + p["ambiguous"] - live["folded"],
                   "at": at, "folded": live["folded"]}
            if report:
                t3 = time.perf_counter()
                c.get(f"/runs/{run_id}/report")
                row["report_s"] = time.perf_counter() - t3
            rows.append(row)
            stop.wait(max(0.0, interval - (time.perf_counter() - t0)))
    finally:
        c.close()
        out.put(rows)


def profiled(runs: Any, run_id: str) -> list[str]:
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.runcall(runs.report_digest, run_id)
    took = time.perf_counter() - t0
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(14)
    lines = [ln.strip() for ln in buf.getvalue().splitlines() if ln.strip() and ("/" in ln or "{" in ln)]
    return [f"one live report in process: {took:.2f} s"] + lines[:14]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--targets", type=int, default=5)
    ap.add_argument("--interval", type=float, default=3.0)
    ap.add_argument("--pages", type=int, default=1, help="run pages open (each a client process)")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--report", action="store_true", help="also time GET /report on every refresh (the old page)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sr-bench-live-"))
    src = samples.write_mmlu_pro(work / "src", per_category=200)
    load0 = os.getloadavg()
    polls: list[dict[str, float]] = []
    series: list[tuple[float, int]] = []        # (time, the journal's finished cells), every 50 ms
    prof: list[str] = []
    with simulator_process() as sim_url, EmbeddedService(work / "store") as svc:
        c = svc.client
        ctx = multiprocessing.get_context("spawn")
        stop, out, ids = ctx.Event(), ctx.Queue(), ctx.Queue()
        pollers = [ctx.Process(target=poll, args=(svc.url, svc.token, ids, args.interval, out, stop, args.report,
                                                  i * args.interval / args.pages)) for i in range(args.pages)]
        for proc in pollers:
            proc.start()
        run_id = start_run(c, sim_url, src, args.targets, "live-bench")
        for _ in pollers:
            ids.put(run_id)
        runs = svc.service.runs
        while runs.get(run_id).status not in TERMINAL_STATUSES:
            p = runs.get(run_id).progress
            series.append((time.monotonic(), p.completed + p.failed + p.cancelled + p.ambiguous))
            if args.profile and not prof and p.completed >= p.total // 2:
                prof = profiled(runs, run_id)
            time.sleep(0.05)
        ended = time.perf_counter()
        stop.set()
        c.get(f"/runs/{run_id}/report")        # the first GET /report after the run: it waits for the end-of-run build
        end_report_s = time.perf_counter() - ended
        for _ in pollers:
            polls += out.get(timeout=60)
        for proc in pollers:
            proc.join()
        view = runs.get(run_id)
        assert view.finished_at is not None and view.started_at is not None
        dispatch_s = view.finished_at - view.started_at
    took = [x["refresh_s"] for x in polls]
    lags = [staleness(series, x["at"], int(x["folded"])) for x in polls]
    p95 = _p(took, 0.95)
    reports = [x["report_s"] for x in polls if "report_s" in x]
    print(json.dumps({
        "cells": view.progress.total, "dispatch_s": round(dispatch_s, 2), "refreshes": len(took),
        "refresh_p50_s": None if not took else round(statistics.median(took), 4),
        "refresh_p95_s": None if p95 is None else round(p95, 4),
        "refresh_max_s": None if not took else round(max(took), 4),
        "p95_goal_ratio": None if p95 is None else round(p95 / GOAL_S, 3),
        "live_p95_s": _r(_p([x["live_s"] for x in polls], 0.95)),
        "run_view_p95_s": _r(_p([x["run_s"] for x in polls], 0.95)),
        "health_p95_s": _r(_p([x["health_s"] for x in polls], 0.95)),
        "live_over_health_p95": None if not polls else round((_p([x["live_s"] for x in polls], 0.95) or 0) /
                                                             max(1e-9, _p([x["health_s"] for x in polls], 0.95) or 0), 2),
        "lag_cells_max": None if not polls else max(x["lag"] for x in polls),
        "lag_cells_p95": _r(_p([x["lag"] for x in polls], 0.95)),
        "lag_s_p95": _r(_p(lags, 0.95)), "lag_s_max": None if not lags else round(max(lags), 3),
        "lag_goal_ratio": None if not lags else round(max(lags) / args.interval, 3),
        "full_report_p95_s": _r(_p(reports, 0.95)),
        "end_report_s": round(end_report_s, 2), "end_report_ratio": round(end_report_s / dispatch_s, 4),
        "refresh_p95_over_end_report": None if p95 is None else round(p95 / end_report_s, 4),
        "loadavg_before": [round(x, 2) for x in load0], "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        **({"profile": prof} if prof else {})}))


def staleness(series: list[tuple[float, int]], at: float, folded: int) -> float:
    """Seconds between `at` and the last sample before it whose finished cells were no more than `folded`
    (the figures are the journal as it was then; 0 when the journal had no more at the last sample)."""
    last = None
    for t, finished in series:
        if t > at:
            break
        if finished <= folded:
            last = t
    before = [t for t, _ in series if t <= at]
    if not before or last == before[-1]:
        return 0.0
    return at - (before[0] if last is None else last)


def _r(v: float | None) -> float | None:
    return None if v is None else round(v, 4)


if __name__ == "__main__":
    main()
