"""A big store for the scale benchmarks, written through the service's real code paths.

Used by benchmarks/paged_reads.py (and usable by hand):  python benchmarks/scale_store.py DIR [--calls N]

Runs are submitted to a real (embedded) service and executed by its real RunManager and Dispatcher:
request objects, `dispatching` before the "send", call records, `completed`, group commits, the
run's end and its end-of-run report. Only the network is left out: the transport's `stream_chat`
is replaced by one that answers at once with a synthetic completed call (an MCQ answer, metered
usage, timings; no SSE transcript, to keep the store's size on disk down). Each run is the
MMLU-Pro standard profile (2,000 cases, synthetic native parquet) × `--targets` targets; runs are
added until the journal holds `--calls` calls. Building is resumable: an existing store is topped up.

With `--copies` (benchmarks/paged_reads.py's default) only the first run is made so; the store is topped up
by copies of it (`copy_run`), each written straight into the journal through the journal's own functions in
one transaction: its run row, its cells (same cases, targets, sequence, states, requests and grades), its
events, its budget and a report head naming the first run's report (the results pages read it as their
own). Each copy's call records are objects of its own (the first run's, its start time moved: a store of
real runs holds as many call objects as calls), written in packs. A 1M-call store is built in minutes
instead of the half hour 25 real 40k-cell runs take; the pages read the same tables, indexes and objects.
"""

from __future__ import annotations

import argparse
import json
import time
import uuid
from pathlib import Path
from typing import Any

from srbench import TERMINAL_STATUSES
from srbench.cas.digest import canonical_json
from srbench.client.embedded import EmbeddedService
from srbench.schemas.call import Usage
from srbench.schemas.event_data import parse_event
from srbench.service.journal import evidence as jev
from srbench.service.journal import runs as jruns
from srbench.service.journal.cell_rows import run_cells
from srbench.service.journal.writer import add_event
from srbench.simulate import samples
from srbench.stages.dispatch import calls as dispatch
from srbench.stages.report.rule import report_signature
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


def copy_run(service: Any, template: str, k: int) -> str:
    """Run `template` copied under a new id (the `k`-th copy); see the module's docstring."""
    journal, objects = service.journal, service.objects
    row = jruns.run_row(journal, template)
    assert row is not None, template
    cells = run_cells(journal, template, ordered=True)
    records = {c.call: objects.get_json(c.call) for c in cells if c.call}
    moved: dict[str, bytes] = {}
    for digest, record in records.items():
        record["timings"]["started_at"] += k * 1e-3
        moved[digest] = canonical_json(record)
    blobs = list(moved.values())
    new_digests = [d for i in range(0, len(blobs), 4096) for d in objects.put_many(blobs[i:i + 4096], durable=False)]
    objects.sync()
    calls_of = dict(zip(moved, new_digests, strict=True))
    run_id = "run-" + uuid.uuid4().hex[:20]
    now = time.time()
    copy = row.model_copy(update={"id": run_id, "idem_key": None, "created_at": now, "updated_at": now,
                                  "started_at": now - (row.finished_at or now) + (row.started_at or now),
                                  "finished_at": now})
    rows = [(run_id, c.cell_id, c.seq, c.case_id, c.target_id, c.state, c.request,
             calls_of.get(c.call or ""), c.judge_call, now) for c in cells]
    events = [(e.type, parse_event(e.type, e.data)) for e in jev.events_after(journal, template, 0, 1000)]
    budget = jruns.budget(journal, template)

    def write(c: Any) -> None:
        jruns.insert_run(c, copy)
        jruns.insert_finished_cells(c, rows)
        for type_, data in events:
            add_event(c, run_id, type_, data)
        if budget is not None:
            jruns.insert_budget(c, run_id, budget.cap_usd)
    journal.submit_sync(write)
    head = jruns.report_head(journal, template)
    if head is not None:            # the head's signature as the service computes it for this run
        sig, rsig = report_signature(service.runs._report_request(run_id), service.runs._cells_version(run_id))
        journal.submit_sync(lambda c: jruns.put_report_head(c, run_id, head._replace(sig=sig, results_sig=rsig)))
    return run_id


def build(store_dir: Path, calls: int, targets: int = 20, concurrency: int = 16, log: Any = print,
          copies: bool = False) -> dict[str, Any]:
    """Top the store at `store_dir` up to `calls` journaled calls (with `copies`: by copies of its first run);
    returns what it holds."""
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
                runs = c.get("/runs")["runs"]
                if copies and runs:
                    run_id = copy_run(svc.service, runs[-1]["id"], len(runs))
                    log(f"copy {run_id} of {runs[-1]['id']}: {plan['total']} cells in {time.perf_counter() - t0:.1f} s "
                        f"(store: {have + plan['total']} calls)")
                    continue
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
    ap.add_argument("--copies", action="store_true", help="one real run, then copies of it (minutes for 1M calls)")
    args = ap.parse_args()
    print(json.dumps(build(args.dir, args.calls, args.targets, copies=args.copies)))


if __name__ == "__main__":
    main()
