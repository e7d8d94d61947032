"""Runs frozen manifests through upstream's own engine, in upstream's interpreter (the released `vllm-sr`
wheel), and prints what its service would answer: each run, its report, and the comparison of the
first run (baseline) with each later one.

Usage: ``<upstream python> engine_driver.py SPEC.json`` where SPEC is ``{"store": dir, "manifests": [...],
"timeout_s": N}``. It imports only the wheel's modules and the standard library."""

from __future__ import annotations

import json
import sys
import time


def main() -> None:
    from cli.sr_bench.engine import Engine  # noqa: PLC0415 - upstream's interpreter only
    from cli.sr_bench.report import compare, make_report  # noqa: PLC0415
    from cli.sr_bench.store import TERMINAL, Store  # noqa: PLC0415

    with open(sys.argv[1], encoding="utf-8") as fh:
        spec = json.load(fh)
    store = Store(spec["store"])
    engine = Engine(store)
    ids = []
    for manifest in spec["manifests"]:
        run = engine.start(manifest)
        deadline = time.monotonic() + float(spec.get("timeout_s", 60))
        while store.get(run["id"])["status"] not in TERMINAL or run["id"] in engine.cancels:
            if time.monotonic() > deadline:
                raise SystemExit(f"upstream run {run['id']} did not finish")
            time.sleep(0.05)
        ids.append(run["id"])
    pages = [(store.page(i, "results", 0, 500), store.page(i, "calls", 0, 500)) for i in ids]
    out = {"runs": [store.get(i) for i in ids], "reports": [make_report(store, i) for i in ids],
           "comparisons": [compare(store, ids[0], i) for i in ids[1:]],
           "results": [r for r, _ in pages], "calls": [c for _, c in pages],
           "call": [store.call(i, c["calls"][0]["id"]) for i, (_, c) in zip(ids, pages, strict=True)]}
    engine.close()
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
