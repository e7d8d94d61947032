"""Reports at the end of a big run and asked again (issue 11, item 3).

Run by hand:  python benchmarks/incremental_report.py [--targets 20]    (20 targets x 2,000 cases = 40k cells)

One run of the MMLU-Pro standard profile (synthetic, native parquet) x `--targets` targets against
a zero-latency simulator in its own process, on an embedded service. Prints:
- `end_report_ratio`: the first GET /report asked as the run ends (seen within 50 ms), answered, over the
  dispatch time (started_at to finished_at) — goal <= 0.05 (issue 42, item 2); `end_task_s`: until the
  run's task ended (its clean-up after the report too);
- `settled_s`: from the run's end until the service and every process under it (the report-rows
  worker) stop using CPU; the reports below are timed after that;
- `noop_report_ratio`: GET /report with nothing changed over its first build, both timed at the
  API (the first build after the run's action-cache entries and report head are cleared, so every
  grade and the report are built again) — goal <= 0.05;
- `noop_regrade_ratio`: POST /regrade asked again over its first ask — goal <= 0.05.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from srbench import TERMINAL_STATUSES
from srbench.client.embedded import EmbeddedService
from srbench.simulate import samples

sys.path.insert(0, str(Path(__file__).parent))
from dispatch import simulator_process  # noqa: E402
from memory import settle  # noqa: E402


def timed(fn):  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def start_run(c: Any, sim_url: str, src: Path, targets: int, name: str) -> str:
    """Prepare MMLU-Pro's standard profile from `src`, register `targets` zero-latency single targets on the
    simulator and start one run of them all (capability only, concurrency 8); its id."""
    ds = c.post("/datasets/prepare", {"benchmark": "mmlu-pro", "profile": "standard", "seed": 1,
                                      "source_path": str(src), "revision": "bench"})
    ids = [f"t{i:02d}" for i in range(targets)]
    c.post("/targets", {"targets": [{"id": t, "kind": "single", "base_url": sim_url + "/v1", "model": "fast"}
                                    for t in ids]})
    manifest = {"version": "sr-bench-1.0", "name": name, "profile": "standard", "seed": 1,
                "cost_policy": "capability_only", "dataset": {"path": ds["path"], "sha256": ds["sha256"]},
                "targets": [{"id": t} for t in ids], "sampling": {"max_tokens": 64},
                "limits": {"concurrency": 8, "total_timeout_s": 30, "idle_timeout_s": 10, "max_run_seconds": 86400}}
    plan = c.post("/plans", {"manifest": manifest})["manifest"]
    return str(c.post("/runs", {"manifest": plan})["id"])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--targets", type=int, default=20)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sr-bench-report-"))
    src = samples.write_mmlu_pro(work / "src", per_category=200)
    load0 = os.getloadavg()
    with simulator_process() as sim_url, EmbeddedService(work / "store") as svc:
        c = svc.client
        run_id = start_run(c, sim_url, src, args.targets, "report-bench")
        runs = svc.service.runs
        while runs.get(run_id).status not in TERMINAL_STATUSES:
            time.sleep(0.05)
        ended = time.perf_counter()
        c.get(f"/runs/{run_id}/report")        # the first GET /report after the run: it waits for the end-of-run build
        end_report_s = time.perf_counter() - ended
        while runs.tasks:
            time.sleep(0.02)
        end_task_s = time.perf_counter() - ended
        settled_s = end_task_s + settle(os.getpid())      # every process of the service (the report-rows worker)
        view = runs.get(run_id)
        assert view.finished_at is not None and view.started_at is not None
        dispatch_s = view.finished_at - view.started_at

        def clear(conn):  # type: ignore[no-untyped-def]
            conn.execute("DELETE FROM action_cache")
            conn.execute("DELETE FROM action_last")
            conn.execute("DELETE FROM report_heads")
        svc.service.journal.submit_sync(clear)
        first, r1 = timed(lambda: c.get(f"/runs/{run_id}/report"))
        again, r2 = timed(lambda: c.get(f"/runs/{run_id}/report"))
        assert r2["cache_hit"] and r2["report_digest"] == r1["report_digest"]
        rg1, g1 = timed(lambda: c.post(f"/runs/{run_id}/regrade", {}))
        rg2, g2 = timed(lambda: c.post(f"/runs/{run_id}/regrade", {}))
        assert g2["cache_hit"] and g2["digest"] == g1["digest"]
    print(json.dumps({"cells": view.progress.total, "completed": view.progress.completed,
                      "dispatch_s": round(dispatch_s, 2), "end_report_s": round(end_report_s, 2),
                      "end_report_ratio": round(end_report_s / dispatch_s, 4), "end_task_s": round(end_task_s, 2),
                      "settled_s": round(settled_s, 2),
                      "first_report_s": round(first, 3), "noop_report_s": round(again, 4),
                      "noop_report_ratio": round(again / first, 4),
                      "first_regrade_s": round(rg1, 3), "noop_regrade_s": round(rg2, 4),
                      "noop_regrade_ratio": round(rg2 / rg1, 4), "goal": 0.05,
                      "loadavg_before": [round(x, 2) for x in load0],
                      "loadavg_after": [round(x, 2) for x in os.getloadavg()]}))


if __name__ == "__main__":
    main()
