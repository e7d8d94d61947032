"""Report and comparison timing: first build vs a second ask of an unchanged run (action cache).

Run by hand:  python benchmarks/report_cache.py

Two runs of the 500-case quick profile (synthetic MMLU-Pro in the native parquet format) against a
zero-latency simulator, then: report (first build, then cached), compare (first, then cached), and
the report after a grader-version bump (only grades and the report rebuild). Prints seconds and
the first/second ratio.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from srbench.client.embedded import EmbeddedService
from srbench.simulate import samples
from srbench.simulate.behaviour import SimModel, load_answer_key
from srbench.simulate.thread import SimulatorThread


def timed(fn):  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="sr-bench-cache-"))
    src = samples.write_mmlu_pro(work / "src", per_category=40)
    with EmbeddedService(work / "store") as svc:
        c = svc.client
        ds = c.post("/datasets/prepare", {"benchmark": "mmlu-pro", "profile": "quick", "seed": 1,
                                          "source_path": str(src), "revision": "bench"})
        models = [SimModel("a", skill=0.7), SimModel("b", skill=0.5)]
        with SimulatorThread(models=models, answer_key=load_answer_key(ds["path"])) as sim:
            c.post("/targets", {"targets": [{"id": m, "kind": "single", "base_url": sim.v1_url, "model": m}
                                            for m in ("a", "b")]})
            ids = []
            for tid in ("a", "b"):
                m = {"version": "sr-bench-1.0", "profile": "quick", "seed": 1, "cost_policy": "capability_only",
                     "dataset": {"path": ds["path"], "sha256": ds["sha256"]}, "targets": [{"id": tid}],
                     "limits": {"concurrency": 16}}
                plan = c.post("/plans", {"manifest": m})["manifest"]
                rid = c.post("/runs", {"manifest": plan})["id"]
                while c.get(f"/runs/{rid}")["status"] not in ("completed", "failed"):
                    time.sleep(0.2)
                ids.append(rid)
        time.sleep(1.0)  # let the end-of-run report task finish
        # a fresh view: drop the report cached at the end of the run by asking about a new subject
        first, r1 = timed(lambda: c.get(f"/runs/{ids[0]}/report"))
        second, r2 = timed(lambda: c.get(f"/runs/{ids[0]}/report"))
        cmp1, _ = timed(lambda: c.post("/comparisons", {"baseline_run_id": ids[0], "candidate_run_id": ids[1]}))
        cmp2, res = timed(lambda: c.post("/comparisons", {"baseline_run_id": ids[0], "candidate_run_id": ids[1]}))
        print(json.dumps({"cells_per_run": 500,
                          "report_first_s (built at run end, so already cached)": round(first, 4),
                          "report_first_hit": r1["cache_hit"], "report_second_s": round(second, 4),
                          "report_second_hit": r2["cache_hit"], "compare_first_s": round(cmp1, 4),
                          "compare_second_s": round(cmp2, 4), "compare_second_hit": res["cache_hit"],
                          "compare_ratio_first_over_second": round(cmp1 / cmp2, 1)}))
        # a cold report: a new store with the same objects would rebuild; measure by a grader bump
        from srbench.benchmarks.mmlu_pro import MmluPro

        MmluPro.grader_version = MmluPro.grader_version + "+bench"
        cold, r3 = timed(lambda: c.get(f"/runs/{ids[0]}/report"))
        warm, r4 = timed(lambda: c.get(f"/runs/{ids[0]}/report"))
        print(json.dumps({"report_after_grader_bump_s": round(cold, 4), "explain": r3["explain"],
                          "report_again_s": round(warm, 4), "hit": r4["cache_hit"],
                          "ratio_rebuild_over_cached": round(cold / warm, 1)}))


if __name__ == "__main__":
    main()
