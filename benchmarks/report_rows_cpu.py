"""CPU a row of the report-rows worker and of the end-of-run report build, in a process of its own (issue 42, item 2).

Run by hand:  python benchmarks/report_rows_cpu.py STORE [--against SRC] [--rounds 3] [--cells 10000]

STORE is a store `benchmarks/memory.py` kept (its printed `store`, ending in /store: a finished zero-latency
run of MMLU-Pro cells). Each measurement runs in a fresh interpreter:
- `rows`: the worker's `build` (service/runs/report_rows_worker.py) over the run's first CELLS cells in one batch,
  as the service asks it (the packs named), with every grade computed (the journal's action cache is asked
  and misses, as during a run): CPU seconds a cell, three passes after a warm-up batch;
- `build`: the report rule's build from those rows as memo rows (the run's end-of-run report, upstream's
  figures collected in the same pass, the collector paused as in the service): CPU a row, three passes.
`--against SRC` alternates this checkout's code (run it with PYTHONPATH=src) with the `src` directory SRC (another
checkout's, e.g. from `git archive`), ROUNDS times each, and prints the medians, ranges and ratios, the load before and
after, and whether both built the same report (`same_report`: one content digest).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, os, sqlite3, sys, time
store_dir, what, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
from srbench.cas import ObjectStore
from srbench.service.journal.report_rows import action_output
from srbench.service.runs import report_rows_worker as w
conn = sqlite3.connect(f"file:{store_dir}/journal.sqlite3?mode=ro", uri=True)
run_id, plan = conn.execute("SELECT id, plan FROM runs ORDER BY created_at DESC LIMIT 1").fetchone()
rows = [tuple(r) for r in conn.execute("SELECT cell_id, seq, case_id, target_id, state, call, error_class, judge_call "
                                       "FROM cells WHERE run_id=? ORDER BY seq LIMIT ?", (run_id, n))]
cells = [(r[0], list(r[1:])) for r in rows]
w.init(store_dir + "/cas", True, store_dir + "/journal.sqlite3")
(wk,) = w._worker
wk.cache.lookup = lambda key: wk.cache.keys.get(key) or action_output(wk.cache.conn, "x" + key)   # a miss, asked
svc = ObjectStore(store_dir + "/cas")
assert svc.packs is not None
svc.packs.refresh()
packs = sorted({p.pack for _, c in cells for d in (c[4], c[6]) if d for p in svc.packs.places(d, look=False)})
w.build(plan, cells[:64], packs)
wk.cache.keys.clear()
out = []
if what == "rows":
    for _ in range(3):
        t0 = time.process_time()
        w.build(plan, cells, packs)
        out.append((time.process_time() - t0) / len(cells))
        wk.cache.keys.clear()
else:
    from srbench.rules import Engine
    from srbench.schemas.report_params import ReportRequest
    from srbench.service.runs.heap import frozen_heap
    from srbench.service.wire.figures import ReportFigures
    from srbench.stages.report.rule import make_report_rule, report_inputs, report_params
    from srbench.stages.report.stream import write_run_cells
    _, built, _ = w.build(plan, cells, packs)
    target_of = {r[0]: r[3] for r in rows}

    class Memo:
        def rows(self, run_id, ctx, tid):
            return {cid: e for cid, e in built if target_of[cid] == tid}

    class NoCache:
        def lookup(self, key): return None
        def record_many(self, entries): pass
        def last(self, rule, subject): return None

    engine = Engine(svc, NoCache())
    request = ReportRequest(run_id=run_id, plan=plan, status="completed", wall_time_s=10.0)
    p = svc.get_json(plan)
    by_target = sorted(rows, key=lambda r: (r[3], r[1]))
    for _ in range(3):
        collect = ReportFigures(svc).collector({t["target"]["id"]: t["target"]["kind"] for t in p["targets"]}, p["mode"])
        cells_in = write_run_cells(svc, by_target)
        rule = make_report_rule(engine, Memo(), collect)
        t0 = time.process_time()
        with frozen_heap():
            report = rule.fn(svc, report_inputs(request, cells_in), report_params(request).model_dump())
        out.append((time.process_time() - t0) / len(rows))
print(json.dumps({"us": [round(x * 1e6, 1) for x in out], "digest": report["content_digest"] if what == "build" else None}))
"""


def measure(store: str, what: str, cells: int, src: str | None, digests: set[str]) -> list[float]:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = src
    out = subprocess.run([sys.executable, "-c", CHILD, store, what, str(cells)], env=env, capture_output=True,
                         text=True, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    if got["digest"]:
        digests.add(got["digest"])
    return list(got["us"])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("store", help="a store memory.py kept (.../store)")
    ap.add_argument("--against", help="the src directory of the code to alternate with (before)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cells", type=int, default=10000)
    args = ap.parse_args()
    store = str(Path(args.store).resolve())
    load0 = os.getloadavg()
    sides = {"this": None, **({"against": args.against} if args.against else {})}
    got: dict[tuple[str, str], list[float]] = {}
    digests: set[str] = set()                   # the reports' content digests: one when the bytes did not change
    for i in range(args.rounds):
        for what in ("rows", "build"):
            for name, src in (sides.items() if i % 2 == 0 else reversed(sides.items())):   # alternated
                got.setdefault((what, name), []).extend(measure(store, what, args.cells, src, digests))
    for what in ("rows", "build"):
        line = {"measure": what, "cells": args.cells, "unit": "us CPU a cell"}
        for name in sides:
            v = got[(what, name)]
            line[name] = {"median": round(statistics.median(v), 1), "range": [min(v), max(v)], "n": len(v)}
        if args.against:
            line["ratio_median"] = round(statistics.median(got[(what, "this")]) / statistics.median(got[(what, "against")]), 3)
        if what == "build":
            line["same_report"] = len(digests) == 1
        print(json.dumps(line | {"load_before": [round(x, 2) for x in load0],
                                 "load_after": [round(x, 2) for x in os.getloadavg()], "store": store}))


if __name__ == "__main__":
    main()
