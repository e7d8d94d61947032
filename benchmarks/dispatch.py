"""Dispatch throughput: calls/s of an sr-bench run vs bare streaming loops, same fake server.

Run by hand:  python benchmarks/dispatch.py [--concurrency 8] [--repeat 3]

Both sides stream the same 500 quick-profile requests (synthetic MMLU-Pro in its native parquet
format) from the same zero-latency simulated endpoint (its own process, so that its CPU does not
share this process's GIL), with the same concurrency.
The bare loops only stream and read every chunk: one with httpx (the baseline the goal names), one
with aiohttp (the client sr-bench's transport uses, so that its ratio is sr-bench's own
bookkeeping). The run also journals `dispatching` and `completed` (durable SQLite commits,
grouped), stores the request, the SSE transcript and the call record (objects behind one
durability barrier per group commit), parses usage and checks every limit. Prints the best of
`--repeat` for each side and both ratios (goal: >= 0.9 against bare httpx).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import httpx

from srbench import TERMINAL_STATUSES
from srbench.service.embedded import EmbeddedService
from srbench.simulate import samples


async def _timed(bodies: list[dict[str, Any]], concurrency: int,
                 one: Callable[[dict[str, Any]], Awaitable[None]]) -> float:
    sem = asyncio.Semaphore(concurrency)

    async def limited(body: dict[str, Any]) -> None:
        async with sem:
            await one(body)
    t0 = time.perf_counter()
    await asyncio.gather(*(limited(b) for b in bodies))
    return time.perf_counter() - t0


async def bare_loop(url: str, bodies: list[dict[str, Any]], concurrency: int) -> float:
    limits = httpx.Limits(max_connections=concurrency + 4, max_keepalive_connections=concurrency + 4)
    async with httpx.AsyncClient(timeout=30, limits=limits) as client:
        async def one(body: dict[str, Any]) -> None:
            async with client.stream("POST", url, json=body) as resp:
                async for _chunk in resp.aiter_bytes():
                    pass
        return await _timed(bodies, concurrency, one)


async def bare_aiohttp_loop(url: str, bodies: list[dict[str, Any]], concurrency: int) -> float:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency + 4)) as session:
        async def one(body: dict[str, Any]) -> None:
            async with session.post(url, json=body) as resp:
                async for _chunk in resp.content.iter_any():
                    pass
        return await _timed(bodies, concurrency, one)


def run_once(client: Any, plan: dict[str, Any], svc: Any) -> tuple[float, int]:
    """Seconds from the run's start to its end as the journal recorded them (polling stays rare so
    that this process's own polling does not compete with the run for the GIL). Waits until the
    run's task is done (it builds the end-of-run report) so that runs never overlap."""
    run_id = client.post("/runs", {"plan": plan, "idempotency_key": None})["run"]["id"]
    while (run := client.get(f"/runs/{run_id}"))["status"] not in TERMINAL_STATUSES:
        time.sleep(0.25)
    while svc.service.runs.tasks:
        time.sleep(0.05)
    return run["finished_at"] - run["started_at"], run["progress"]["completed"]


@contextlib.contextmanager
def simulator_process() -> Iterator[str]:
    """A zero-latency simulator in a child process; yields its base URL."""
    code = ("import time,sys\n"
            "from srbench.simulate.behaviour import SimModel\n"
            "from srbench.simulate.server import SimulatorThread\n"
            "s=SimulatorThread(models=[SimModel('fast', skill=0.5)]).start()\n"
            "print(s.url, flush=True)\n"
            "sys.stdin.read()\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        proc.kill()
        proc.wait()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sr-bench-dispatch-"))
    src = samples.write_mmlu_pro(work / "src", per_category=40)
    with simulator_process() as sim_url, EmbeddedService(work / "store") as svc:
        sim = type("Sim", (), {"v1_url": sim_url + "/v1"})
        c = svc.client
        ds = c.post("/datasets/prepare", {"benchmark": "mmlu-pro", "profile": "quick", "seed": 1,
                                          "source_path": str(src), "revision": "bench"})
        c.post("/targets", {"targets": [{"id": "fast", "kind": "single", "base_url": sim.v1_url, "model": "fast"}]})
        manifest = {"version": "sr-bench-1.0", "name": "dispatch-bench", "profile": "quick", "seed": 1,
                    "cost_policy": "capability_only", "dataset": {"path": ds["path"], "sha256": ds["sha256"]},
                    "targets": [{"id": "fast"}], "sampling": {"max_tokens": 256},
                    "limits": {"concurrency": args.concurrency, "total_timeout_s": 30, "idle_timeout_s": 10}}
        plan = c.post("/plans", {"manifest": manifest})["plan"]
        cases = [json.loads(line) for line in Path(ds["path"]).read_bytes().splitlines()]
        bodies = [{"model": "fast", "messages": case["messages"], "stream": True,
                   "stream_options": {"include_usage": True}, "temperature": 0, "max_tokens": 256}
                  for case in cases]
        url = sim.v1_url + "/chat/completions"
        asyncio.run(bare_loop(url, bodies[:50], args.concurrency))          # warm-up
        asyncio.run(bare_aiohttp_loop(url, bodies[:50], args.concurrency))
        bare = min(asyncio.run(bare_loop(url, bodies, args.concurrency)) for _ in range(args.repeat))
        bare_aio = min(asyncio.run(bare_aiohttp_loop(url, bodies, args.concurrency)) for _ in range(args.repeat))
        commits0 = svc.service.journal.commits
        cpu0 = time.process_time()
        t0 = time.perf_counter()
        timed = [run_once(c, plan, svc) for _ in range(args.repeat)]
        cpu_share = (time.process_time() - cpu0) / (time.perf_counter() - t0)
        run_s, done = min(timed)
        bare_rate, aio_rate, run_rate = len(bodies) / bare, len(bodies) / bare_aio, done / run_s
        print(json.dumps({"calls": len(bodies), "concurrency": args.concurrency,
                          "bare_httpx_calls_per_s": round(bare_rate, 1), "bare_aiohttp_calls_per_s": round(aio_rate, 1),
                          "sr_bench_calls_per_s": round(run_rate, 1),
                          "ratio": round(run_rate / bare_rate, 3), "ratio_vs_bare_aiohttp": round(run_rate / aio_rate, 3),
                          "journal_commits_per_run": (svc.service.journal.commits - commits0) // args.repeat,
                          "service_process_cpu_cores": round(cpu_share, 2)}))


if __name__ == "__main__":
    main()
