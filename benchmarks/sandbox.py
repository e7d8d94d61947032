"""Sandbox grading throughput: problems per second on each backend at concurrency 1 and 2.

Run by hand (after `sr-bench setup --build-sandbox --install`):  python benchmarks/sandbox.py [ROUNDS]

The corpus is the LiveCodeBench fixture (synthetic problems in the native JSONL format), each graded
with the simulator's right and wrong program, so every problem is one fresh sandbox (a container or
a bwrap namespace set). Prints problems/s per backend and concurrency, and the concurrency-2 /
concurrency-1 ratio measured in the same run. A backend that is not set up here is named and skipped.
"""

from __future__ import annotations

import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from srbench.benchmarks.livecodebench import LiveCodeBench
from srbench.sandbox import BACKENDS, SandboxUnavailable, open_sandbox
from srbench.simulate import samples
from srbench.simulate.code_answers import lcb_program
from srbench.stages.grading.code import base_limits


def corpus() -> list[tuple[object, str]]:
    bench = LiveCodeBench()
    root = samples.write_livecodebench(Path(tempfile.mkdtemp(prefix="sr-bench-sbx-")) / "lcb")
    cases = bench.load({k: v.read_bytes() for k, v in bench.locate(root).items()}, seed=1, revision="bench")
    return [(c, lcb_program(c.answer, ok)) for c in cases for ok in (True, False)]


def grade_one(sandbox, item) -> str:  # type: ignore[no-untyped-def]
    bench = LiveCodeBench()
    case, reply = item
    options = bench.options({})
    planned = bench.jobs(case, [reply], options)
    limits = base_limits(options)
    reports = sandbox.run_jobs([{"module": j.module, "input": j.input, "limits": limits.child(j.wall_s)}
                                for j in planned.jobs], limits.model_copy(update={"wall_s": 120}))
    verdicts = [bench.verdict({**r, "module": j.module}) for r, j in zip(reports, planned.jobs, strict=False)]
    return str(bench.judge(case, verdicts, planned).status)


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    items = corpus() * rounds
    for name in BACKENDS:
        try:
            sandbox = open_sandbox(name)
        except SandboxUnavailable as exc:
            print(f"{name}: skipped ({exc.message})")
            continue
        grade_one(sandbox, items[0])                     # warm-up (image and page cache)
        rates = {}
        for conc in (1, 2):
            t0 = time.perf_counter()
            with ThreadPoolExecutor(conc) as pool:
                verdicts = list(pool.map(lambda it: grade_one(sandbox, it), items))  # noqa: B023
            dt = time.perf_counter() - t0
            rates[conc] = len(items) / dt
            print(f"{name}: concurrency {conc}: {len(items)} problems in {dt:.2f} s = {rates[conc]:.2f} problems/s "
                  f"({verdicts.count('correct')} correct)")
        print(f"{name}: concurrency 2 / 1 = {rates[2] / rates[1]:.2f}x")


if __name__ == "__main__":
    main()
