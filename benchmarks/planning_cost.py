"""What an inconclusive claim's planning costs a comparison (issue 43, item 7): `compare`'s `_planning` at one
tie rate (`power.power_plan` and the per-benchmark sizes of `sizing.sizes_needed`), on the standard profile's
sizes with the baseline the strongest of K singles.

Run by hand:  python benchmarks/planning_cost.py [--repeat 5] [--singles 3] [--against SRC]

Per tie rate it prints the median (and range) over `--repeat` rounds of a cold call (every planning cache
emptied first: a new comparison's first candidate) and a warm one (the same inputs again: another candidate,
a report refresh). `--against SRC` also runs the same measurement with another checkout's `src` on the
import path, alternated with this one's (rounds in their own processes), and prints the ratio of the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

TIES = (0.5, 0.8, 0.87, 0.9, 0.93)


def clear_caches() -> None:
    """Empty every functools cache of the planning modules (whichever this checkout has)."""
    from srbench.stages.stats import betting, planning, power, sizing

    for module in (betting, planning, power, sizing):
        for value in vars(module).values():
            if callable(getattr(value, "cache_clear", None)):
                value.cache_clear()


def one_round(singles: int) -> dict[str, dict[str, float]]:
    """Seconds of a cold and a warm `_planning` call per tie rate."""
    from srbench.schemas.plan import Planning
    from srbench.simulate.paired import profile_design
    from srbench.stages.compare.claims import _planning

    design = profile_design("standard")
    weights = dict(zip(design.names, design.weights, strict=True))
    assumptions = Planning.model_validate({"tie_rate": 0.9, "effect": 0.05, "power": 0.8})
    out = {}
    for tie in TIES:
        clear_caches()
        times = []
        for _ in range(2):
            t0 = time.perf_counter()
            _planning(design, weights, "betting", tie, assumptions, 0.02, singles)
            times.append(time.perf_counter() - t0)
        out[f"{tie:g}"] = {"cold": times[0], "warm": times[1]}
    return out


def run(src: str | None, singles: int) -> dict[str, dict[str, float]]:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = src
    done = subprocess.run([sys.executable, __file__, "--round", "--singles", str(singles)], env=env,
                          capture_output=True, text=True, check=True)
    result: dict[str, dict[str, float]] = json.loads(done.stdout)
    return result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--singles", type=int, default=3)
    ap.add_argument("--against", default=None, help="another checkout's src folder, measured alternately")
    ap.add_argument("--round", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.round:
        print(json.dumps(one_round(args.singles)))
        return
    here = str(Path(__file__).resolve().parent.parent / "src")
    trees = {"this": here} if args.against is None else {"this": here, "against": args.against}
    rounds: dict[str, list[dict[str, dict[str, float]]]] = {name: [] for name in trees}
    for _ in range(args.repeat):
        for name, src in trees.items():
            rounds[name].append(run(src, args.singles))
    print(f"compare's planning at one tie rate, standard sizes, K = {args.singles}; median (range) of "
          f"{args.repeat} rounds, seconds")
    for tie in (f"{t:g}" for t in TIES):
        cells = []
        medians = {}
        for name in trees:
            for kind in ("cold", "warm"):
                xs = [r[tie][kind] for r in rounds[name]]
                medians[name, kind] = statistics.median(xs)
                cells.append(f"{name} {kind} {medians[name, kind]:.3f} ({min(xs):.3f}-{max(xs):.3f})")
        ratio = ""
        if "against" in trees:
            ratio = f"  cold ratio {medians['this', 'cold'] / medians['against', 'cold']:.2f}"
        print(f"ties {tie:>4}: " + "; ".join(cells) + ratio)


if __name__ == "__main__":
    main()
