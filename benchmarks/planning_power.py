"""Planning against the project's own simulation (issue 43, item 7): does `power_at` (and the sizes
`cases_needed` prints) predict the power the claim really has?

Run by hand:  python benchmarks/planning_power.py [--reps 2000] [--looks 200]

For each setting — K equally strong singles (the baseline chosen as the strongest, the adjusted
claim of a new plan), a tie rate, a true difference, and the planned sizes (the standard profile,
the sizes `cases_needed` asks for, the standard profile with 4 more Terminal-Bench cases) — it prints
`power_at("betting", …, singles=K)` beside the share of `simulate.paired.simulate_selection`
replications (seeded: 4300 + the setting's row) that claim an improvement, and how many settings agree
within 2 points. Goal: all of them.
"""

from __future__ import annotations

import argparse
import time

from srbench.simulate.paired import profile_design, simulate_selection
from srbench.stages.stats.betting import Design, interleave, make_design
from srbench.stages.stats.power import cases_needed, power_at

Setting = tuple[str, dict[str, int], int, float, float]


def design_of(counts: dict[str, int], weights: dict[str, float]) -> Design:
    """The interleaved design of these planned sizes (as `profile_design` builds the profile's)."""
    names = [b for b in sorted(counts) for _ in range(counts[b])]
    return make_design([names[i] for i in interleave(names)], weights, 0.05)


def settings(counts: dict[str, int], weights: dict[str, float]) -> list[Setting]:
    """The 17 settings: 12 at the standard sizes (K = 1, 3), K = 6 and 10, the two sizes `cases_needed`
    plans for 80 % at +5 points and 90 % ties, and 4 more Terminal-Bench cases."""
    out: list[Setting] = []
    for k in (1, 3):
        for tie, delta in ((0.5, 0.05), (0.5, 0.1), (0.8, 0.05), (0.9, 0.05), (0.9, 0.03), (0.9, 0.08)):
            out.append((f"standard K={k} ties {tie:.0%} +{delta * 100:g} pts", counts, k, tie, delta))
    for k in (6, 10):
        out.append((f"standard K={k} ties 90% +5 pts", counts, k, 0.9, 0.05))
    for k in (1, 3):
        need = cases_needed("betting", counts, weights, 0.9, 0.05, singles=k)
        assert need is not None
        out.append((f"cases_needed K={k} ({need.total} cases) ties 90% +5 pts", dict(need.per_benchmark), k, 0.9, 0.05))
    out.append(("standard +4 Terminal-Bench K=1 ties 90% +5 pts", {**counts, "terminal-bench-2.1": counts["terminal-bench-2.1"] + 4},
                1, 0.9, 0.05))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--looks", type=int, default=200, help="prefixes of the running intersection")
    args = ap.parse_args()
    design = profile_design("standard")
    counts = {b: int(n) for b, n in zip(design.names, design.counts, strict=True)}
    weights = dict(zip(design.names, design.weights, strict=True))
    ok, rows = 0, settings(counts, weights)
    worst = 0.0
    print(f"predicted (power_at) vs simulated (simulate_selection, {args.reps} replications, {args.looks} looks)")
    for i, (name, sizes, k, tie, delta) in enumerate(rows):
        t0 = time.perf_counter()
        pred = power_at("betting", sizes, weights, tie, delta, singles=k)
        sim = simulate_selection(design_of(sizes, weights), singles=k, tie_rate=tie, delta=delta, reps=args.reps,
                                 seed=4300 + i, looks=args.looks)["adjusted"]["improvement"]
        good = abs(pred - sim) <= 0.02
        ok += good
        worst = max(worst, abs(pred - sim))
        print(f"{name:52s} predicted {100 * pred:5.1f}%  simulated {100 * sim:5.1f}%  {100 * (pred - sim):+5.1f}  "
              f"{'ok' if good else 'OFF'}  ({time.perf_counter() - t0:.0f} s)", flush=True)
    print(f"{ok} of {len(rows)} settings within 2 points; worst {100 * worst:.1f} points")


if __name__ == "__main__":
    main()
