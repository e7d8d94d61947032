"""SciCode grading throughput: main problems and steps per second on each backend at concurrency 1 and 2.

Run by hand (after `sr-bench setup --build-sandbox --install`; needs h5py for the fixture):
    python benchmarks/scicode_grading.py [ROUNDS]

The corpus is the synthetic SciCode sample (two problems, six scored steps, native JSONL + its own
test_data.h5), each graded with the simulator's all-right and all-wrong replies; a problem is one
sandbox execution holding one child process per scored step. Prints problems/s and steps/s per
backend and concurrency, and the concurrency-2 / concurrency-1 ratio measured in the same run.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from srbench.benchmarks import get
from srbench.sandbox import BACKENDS, SandboxUnavailable, open_sandbox, scicode_data
from srbench.simulate import scicode_samples
from srbench.stages.grading.code import base_limits

BENCH = get("scicode")


def corpus() -> tuple[list[tuple[object, list[str]]], dict[str, object]]:
    root = scicode_samples.write_scicode(Path(tempfile.mkdtemp(prefix="sr-bench-scicode-")) / "src")
    os.environ["SR_BENCH_SCICODE_TEST_DATA"] = str(root / "test_data.h5")
    options = BENCH.options({"test_data_sha256": scicode_data.file_sha256(root / "test_data.h5")})
    cases = BENCH.load({"problems_test.jsonl": (root / "problems_test.jsonl").read_bytes()}, seed=1, revision="bench")
    key = {v["scicode_step"]: v for v in scicode_samples.answer_key().values()}
    items = [(c, [key[s["step_number"]][kind] for s in c.answer["steps"]]) for c in cases for kind in ("right", "wrong")]
    return items, options


def grade_one(sandbox, item, options) -> tuple[bool, int]:  # type: ignore[no-untyped-def]
    case, replies = item
    jobs, ctx = BENCH.jobs(case, replies, options)
    limits = base_limits(options)
    run = limits.model_copy(update={"wall_s": sum(j["wall_s"] for j in jobs) + 15})
    reports = sandbox.run_jobs([{**j, "limits": run.child(j["wall_s"])} for j in jobs], run,
                               mounts=BENCH.mounts(options, sandbox.receipt(limits)))
    grade = BENCH.judge(case, [BENCH.verdict({**r, "module": "script_child.py"}) for r in reports], ctx)
    return grade.correct, len(jobs)


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    base, options = corpus()
    items = base * rounds
    for name in BACKENDS:
        try:
            sandbox = open_sandbox(name)
        except SandboxUnavailable as exc:
            print(f"{name}: skipped ({exc.message})")
            continue
        grade_one(sandbox, items[0], options)                  # warm-up (image and page cache)
        rates = {}
        for conc in (1, 2):
            t0 = time.perf_counter()
            with ThreadPoolExecutor(conc) as pool:
                got = list(pool.map(lambda it: grade_one(sandbox, it, options), items))  # noqa: B023
            dt = time.perf_counter() - t0
            steps = sum(n for _, n in got)
            rates[conc] = len(items) / dt
            print(f"{name}: concurrency {conc}: {len(items)} problems ({steps} steps) in {dt:.2f} s = "
                  f"{rates[conc]:.2f} problems/s, {steps / dt:.2f} steps/s ({sum(ok for ok, _ in got)} resolved)")
        print(f"{name}: concurrency 2 / 1 = {rates[2] / rates[1]:.2f}x")


if __name__ == "__main__":
    main()
