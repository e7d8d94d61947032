"""A big store for the scale benchmarks, written through the service's real code paths.

Used by benchmarks/paged_reads.py (and usable by hand):  python benchmarks/scale_store.py DIR [--calls N]

Runs are submitted to a real (embedded) service and executed by its real RunManager and Dispatcher:
request objects, `dispatching` before the "send", call records, `completed`, group commits, the
run's end and its end-of-run report. Only the network is left out: the transport's `stream_chat`
is replaced by one that answers at once with a synthetic completed call (an MCQ answer, metered
usage, timings; no SSE transcript, to keep the store's size on disk down). Each run is the
MMLU-Pro standard profile (2,000 cases, synthetic native parquet) × `--targets` targets; runs are
added until the journal holds `--calls` calls. Building is resumable: an existing store is topped up.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from srbench import TERMINAL_STATUSES
from srbench.client.embedded import EmbeddedService
from srbench.schemas.call import Usage
from srbench.simulate import samples
from srbench.stages.dispatch import calls as dispatch
from srbench.targets.outcome import CallOutcome

LETTERS = "ABCD"


async def synthetic_stream_chat(client: Any, *, url: str, headers: dict[str, str], body: dict[str, Any],
                                limits: Any, cancel: Any) -> CallOutcome:
    """A completed call, decided by the prompt's length (deterministic), without a socket."""
    text = body["messages"][-1]["content"]
    letter = LETTERS[len(text) % 4]
    prompt = max(1, len(text) // 4)
    usage_raw = {"prompt_tokens": prompt, "completion_tokens": 6, "total_tokens": prompt + 6}
    return CallOutcome(status="completed", http_status=200, headers={"content-type": "text/event-stream"},
                       text=f"The answer is ({letter})", finish_reason="stop", response_model=body["model"],
                       usage_raw=usage_raw, usage=Usage(input=prompt, cached_input=0, cache_write=0, output=6),
                       started_at=time.time(), ttft_s=0.01, latency_s=0.02, bytes_received=400, done=True,
                       usage_shape="openai")


def journal_calls(svc: EmbeddedService) -> int:
    row = svc.service.journal.one("SELECT COALESCE(SUM(n), 0) AS n FROM cell_counts WHERE state != 'pending'")
    return int(row["n"])


def build(store_dir: Path, calls: int, targets: int = 20, concurrency: int = 16, log: Any = print) -> dict[str, Any]:
    """Top the store at `store_dir` up to `calls` journaled calls; returns what it holds."""
    store_dir.mkdir(parents=True, exist_ok=True)
    src = samples.write_mmlu_pro(store_dir.parent / "src", per_category=200)
    original = dispatch.stream_chat
    dispatch.stream_chat = synthetic_stream_chat
    try:
        with EmbeddedService(store_dir / "store") as svc:
            c = svc.client
            ds = c.post("/datasets/prepare", {"benchmark": "mmlu-pro", "profile": "standard", "seed": 1,
                                              "source_path": str(src), "revision": "bench"})
            ids = [f"t{i:02d}" for i in range(targets)]
            c.post("/targets", {"targets": [{"id": t, "kind": "single", "base_url": "http://127.0.0.1:9/v1",
                                             "model": t} for t in ids]})
            manifest = {"version": "sr-bench-1.0", "name": "scale-store", "profile": "standard", "seed": 1,
                        "cost_policy": "capability_only", "dataset": {"path": ds["path"], "sha256": ds["sha256"]},
                        "targets": [{"id": t} for t in ids], "sampling": {"max_tokens": 64},
                        "limits": {"concurrency": concurrency, "total_timeout_s": 30, "idle_timeout_s": 10,
                                   "max_run_seconds": 86400}}
            plan = c.post("/plans", {"manifest": manifest})["manifest"]
            while (have := journal_calls(svc)) < calls:
                t0 = time.perf_counter()
                run_id = c.post("/runs", {"manifest": plan, "idempotency_key": None})["id"]
                while c.get(f"/runs/{run_id}")["status"] not in TERMINAL_STATUSES:
                    time.sleep(0.5)
                while svc.service.runs.tasks:          # its end-of-run report
                    time.sleep(0.1)
                log(f"run {run_id}: {plan['total']} cells in {time.perf_counter() - t0:.0f} s "
                    f"(store: {have + plan['total']} calls)")
            runs = c.get("/runs", limit=500)["runs"]
            return {"calls": journal_calls(svc), "runs": len(runs), "cells_per_run": plan["total"]}
    finally:
        dispatch.stream_chat = original


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir", type=Path)
    ap.add_argument("--calls", type=int, default=1_000_000)
    ap.add_argument("--targets", type=int, default=20)
    args = ap.parse_args()
    print(json.dumps(build(args.dir, args.calls, args.targets)))


if __name__ == "__main__":
    main()
