"""Named-history exclusions at MMLU-Pro's real profile sizes (issue 13): what identities and exclusion cost.

Run by hand:  python benchmarks/exclusions.py [--per-category 860]

A synthetic MMLU-Pro parquet of 14 × per-category questions (860: 12,040, about the upstream 12,032)
is prepared through the stage (an in-memory action cache, so every build is cold; one untimed
warm-up build first): the plain standard
cut (2,000) as the baseline, then quick with --source-partition, a snapshot of quick and of a
partitioned standard, and the holdout standard that excludes both. Prints one JSON line per step with
its seconds and its ratio to the plain standard preparation measured in the same run, and the
snapshot's size in bytes (it must fit a request body inline: 8 MiB).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from srbench.benchmarks import get as get_benchmark
from srbench.benchmarks.acquire import acquire
from srbench.cas import ObjectStore, canonical_json
from srbench.rules import Engine
from srbench.rules.engine import MemoryActionCache
from srbench.schemas.dataset import FrozenDataset
from srbench.simulate import samples
from srbench.stages.datasets import exclusions as ex
from srbench.stages.datasets.build import prepare


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-category", type=int, default=860)
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="srb-excl-"))
    source = samples.write_mmlu_pro(root / "mmlu", per_category=args.per_category)
    bench = get_benchmark("mmlu-pro")
    got = acquire(bench, cache_dir=root / "cache", source_path=str(source), revision="bench-rev")
    store = ObjectStore(str(root / "cas"))

    def step(name: str, fn: Any) -> tuple[Any, float]:
        engine = Engine(store, MemoryActionCache())
        t0 = time.perf_counter()
        out = fn(engine)
        return out, time.perf_counter() - t0

    def prep(engine: Engine, profile: str, **kw: Any) -> FrozenDataset:
        return prepare(engine, "mmlu-pro", profile, 1, None, got.files, revision=got.revision, url=bench.source.url,
                       origin=got.origin, **kw)[0]

    step("warm-up", lambda e: prep(e, "smoke"))                 # imports and the first parquet read, untimed
    _, base = step("plain", lambda e: prep(e, "standard"))
    quick, t_quick = step("quick", lambda e: prep(e, "quick", partition="test"))
    used, t_used = step("standard", lambda e: prep(e, "standard", partition="test"))
    snap, t_snap = step("snapshot", lambda e: ex.compile_snapshot(store, [quick, used], []))
    digest = store.put_json(snap.model_dump(mode="json"))
    held, t_held = step("holdout", lambda e: prep(e, "standard", partition="test", role="holdout", snapshot=digest))
    load = os.getloadavg()[0]
    for name, secs, extra in (
            ("plain standard (baseline)", base, {}),
            ("quick with --source-partition", t_quick, {"cases": quick.case_count}),
            ("standard with --source-partition", t_used, {"cases": used.case_count}),
            ("compile snapshot (quick + standard)", t_snap,
             {"identities": snap.families[0].count, "snapshot_bytes": len(canonical_json(snap.model_dump(mode="json")))}),
            ("holdout standard excluding the snapshot", t_held,
             {"cases": held.case_count, "excluded": (held.evaluation or {})["mmlu-pro"].excluded})):
        print(json.dumps({"step": name, "seconds": round(secs, 3), "ratio_to_plain": round(secs / base, 2),
                          "source_questions": 14 * args.per_category, "loadavg": round(load, 2), **extra}))


if __name__ == "__main__":
    main()
