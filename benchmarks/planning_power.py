"""Planning against the project's own simulation (issue 43, item 7): does `power_at` (and the sizes
`cases_needed` prints) predict the power the claim really has?

Run by hand:  python benchmarks/planning_power.py [--reps 2000] [--looks 200] [--seeds 1] [--only TEXT]

For each setting — K equally strong singles (the baseline chosen as the strongest, the adjusted
claim of a new plan), a tie rate, a true difference, and the planned sizes (the standard profile,
the sizes `cases_needed` asks for, the standard profile with 4 more Terminal-Bench cases, and the
per-benchmark sizes `sizes_needed` asks for within the pinned sources) — it prints
`power_at("betting", …, singles=K)` beside the share of `simulate.paired.simulate_selection`
replications that claim an improvement (seeded: 4300 + the setting's row, + 1000·j for the j-th of
`--seeds` independent batches, pooled), the simulation's standard error √(p(1 − p)/(seeds·reps)), and
how many settings agree within 2 points. Goal: all of them. At 2,000 replications the standard error
is up to 1.1 points, so a single batch can miss 2 points by chance (K = 3, 80 % ties, +5 points: 17.5 %
at seed 4308 against 20.5 % planned, 20.1 % over nine batches); `--seeds` pools batches to tell.

`--shares BASE` prints instead, for the 31 designs the earlier prefixes' share ρ(J, D) was fitted on
(`power._claim_power`; K = 1, `--reps` replications, seeds BASE + row; fitted on `--shares 8100 --reps
4000` and a batch at seeds 7100 + row of the 19 designs it had then), the planned last-prefix power, the Brownian crossing term, J and D, the simulated power
with 200 looks and at the last prefix alone, the share the simulation realises ((simulated − last) /
crossing term) and what the planned power misses by.
"""

from __future__ import annotations

import argparse
import math
import time

from srbench.benchmarks.pins import source_tasks
from srbench.simulate.paired import profile_design, simulate_selection
from srbench.stages.stats.betting import Design, interleave, make_design
from srbench.stages.stats.power import _shares, cases_needed, power_at
from srbench.stages.stats.sizing import sizes_needed

Setting = tuple[str, dict[str, int], int, float, float]


def design_of(counts: dict[str, int], weights: dict[str, float]) -> Design:
    """The interleaved design of these planned sizes (as `profile_design` builds the profile's)."""
    names = [b for b in sorted(counts) for _ in range(counts[b])]
    return make_design([names[i] for i in interleave(names)], weights, 0.05)


def settings(counts: dict[str, int], weights: dict[str, float]) -> list[Setting]:
    """The 21 settings: 12 at the standard sizes (K = 1, 3), K = 6 and 10, the two sizes `cases_needed`
    plans for 80 % at +5 points and 90 % ties, 4 more Terminal-Bench cases, and four per-benchmark sizes
    `sizes_needed` plans for 80 % (within the pinned sources)."""
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
    available = {b: n for b in counts if (n := source_tasks(b)) is not None}
    for k, tie, delta in ((1, 0.9, 0.05), (3, 0.9, 0.05), (3, 0.8, 0.05), (1, 0.5, 0.1)):
        sized = sizes_needed("betting", counts, weights, tie, delta, singles=k, available=available)
        out.append((f"sizes_needed K={k} ({sized.total} cases) ties {tie:.0%} +{delta * 100:g} pts",
                    dict(sized.per_benchmark), k, tie, delta))
    return out


def share_designs(counts: dict[str, int], weights: dict[str, float]) -> list[Setting]:
    """The designs ρ(J, D) was fitted on: the standard sizes at 50–93 % ties and +3 to +8 points, 4 more
    Terminal-Bench cases, two sizes of `cases_needed` and eight of `sizes_needed` (K = 1 all)."""
    out: list[Setting] = []
    pairs = [(t, d) for t in (0.8, 0.85, 0.9, 0.93) for d in (0.03, 0.05, 0.08)]
    pairs += [(0.5, 0.05), (0.5, 0.07), (0.5, 0.1), (0.6, 0.05), (0.6, 0.08), (0.7, 0.05), (0.7, 0.08), (0.75, 0.05)]
    for tie, delta in pairs:          # 93 % ties +8 points cannot be drawn: kept, so the rows keep their seeds
        out.append((f"standard ties {tie:.0%} +{delta * 100:g} pts", counts, 1, tie, delta))
    more = {**counts, "terminal-bench-2.1": counts["terminal-bench-2.1"] + 4}
    out += [(f"standard +4 Terminal-Bench ties 90% +{d * 100:g} pts", more, 1, 0.9, d) for d in (0.05, 0.03)]
    for k in (1, 3):
        need = cases_needed("betting", counts, weights, 0.9, 0.05, singles=k)
        assert need is not None
        out.append((f"cases_needed K={k} ties 90% +5 pts", dict(need.per_benchmark), 1, 0.9, 0.05))
    available = {b: n for b in counts if (n := source_tasks(b)) is not None}
    for k, tie, delta in ((1, 0.9, 0.05), (3, 0.9, 0.05), (3, 0.8, 0.05), (1, 0.5, 0.1), (1, 0.8, 0.05),
                          (1, 0.85, 0.05), (1, 0.93, 0.05), (1, 0.9, 0.03)):
        sized = sizes_needed("betting", counts, weights, tie, delta, singles=k, available=available)
        out.append((f"sizes_needed K={k} ties {tie:.0%} +{delta * 100:g} pts", dict(sized.per_benchmark), 1, tie, delta))
    return out


def shares(counts: dict[str, int], weights: dict[str, float], reps: int, base: int) -> None:
    """The `--shares` table (the module docstring)."""
    print(f"K = 1, {reps} replications a design, seeds {base} + row; percentages")
    for i, (name, sizes, _, tie, delta) in enumerate(share_designs(counts, weights)):
        if delta > min(1.0, 2.0 * (1.0 - tie)) / 2.0:
            continue
        last, crossing, jump, lead = _shares(sizes, weights, tie, delta)
        design = design_of(sizes, weights)
        sim, at_last = (simulate_selection(design, singles=1, tie_rate=tie, delta=delta, reps=reps, seed=base + i,
                                           looks=looks)["adjusted"]["improvement"] for looks in (200, 2))
        pred = power_at("betting", sizes, weights, tie, delta, singles=1)
        print(f"{name:44s} last {100 * last:5.1f} (simulated {100 * at_last:5.1f})  crossing {100 * crossing:4.1f}  "
              f"J {jump:.3f} D {lead:4.2f}  simulated {100 * sim:5.1f}  share {(sim - last) / crossing:5.2f}  "
              f"planned {100 * pred:5.1f} ({100 * (pred - sim):+.1f})", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--looks", type=int, default=200, help="prefixes of the running intersection")
    ap.add_argument("--seeds", type=int, default=1, help="independent seeded batches pooled per setting")
    ap.add_argument("--only", default="", help="run the settings whose name holds this text")
    ap.add_argument("--shares", type=int, default=None, metavar="BASE",
                    help="print the earlier prefixes' share on the designs it was fitted on, seeds BASE + row")
    args = ap.parse_args()
    design = profile_design("standard")
    counts = {b: int(n) for b, n in zip(design.names, design.counts, strict=True)}
    weights = dict(zip(design.names, design.weights, strict=True))
    if args.shares is not None:
        shares(counts, weights, args.reps, args.shares)
        return
    ok, rows = 0, settings(counts, weights)
    worst = 0.0
    print(f"predicted (power_at) vs simulated (simulate_selection, {args.reps} replications, {args.looks} looks)")
    ran = 0
    for i, (name, sizes, k, tie, delta) in enumerate(rows):
        if args.only not in name:
            continue
        ran += 1
        t0 = time.perf_counter()
        pred = power_at("betting", sizes, weights, tie, delta, singles=k)
        design = design_of(sizes, weights)
        sim = sum(simulate_selection(design, singles=k, tie_rate=tie, delta=delta, reps=args.reps,
                                     seed=4300 + i + 1000 * j, looks=args.looks)["adjusted"]["improvement"]
                  for j in range(args.seeds)) / args.seeds
        se = math.sqrt(max(sim * (1 - sim), 1e-12) / (args.seeds * args.reps))
        good = abs(pred - sim) <= 0.02
        ok += good
        worst = max(worst, abs(pred - sim))
        print(f"{name:58s} predicted {100 * pred:5.1f}%  simulated {100 * sim:5.1f}% (SE {100 * se:.1f})  "
              f"{100 * (pred - sim):+5.1f}  {'ok' if good else f'OFF ({abs(pred - sim) / se:.1f} SE)'}  "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)
    print(f"{ok} of {ran} settings within 2 points; worst {100 * worst:.1f} points")


if __name__ == "__main__":
    main()
