"""The long simulation of the paired claim rules on the catalog's real sizes and weights.

Run by hand:  python benchmarks/stats_power.py [--reps 2000] [--profile standard]

Simulated paired differences (srbench.simulate.paired: every benchmark the same tie rate and true
difference Δ, seeded numpy) go through the real interval code. Printed, per profile:
- coverage of Hoeffding (at the planned size) and of the betting interval (at all 50 looks at once,
  and at the data-chosen stop), at Δ ∈ {−0.2, −0.05, 0, +0.05, +0.2} × tie rates {0, 50, 90 %};
- the A/A false-claim rates (improvement and regression, optional stopping included);
- the power table: P(improvement claim) for Hoeffding and betting, simulated and predicted by
  the planning formulas (stages/stats/power.py), at Δ ∈ {+0.02, +0.05, +0.1, +0.2};
- the calls early stopping saves (share of cases never dispatched) and its claim rates;
- issue 28, the claim a plan written without any statistics section makes (betting, adjusted for
  choosing the baseline as the strongest of K singles; simulate.paired.simulate_selection, router
  and K equally strong singles, exchangeable): the A/A false regression rate unadjusted and adjusted
  for K ∈ {1, 3, 6, 10}, and the power for +5 points at 90 % ties for K ∈ {1, 3}, with the
  replication count and the planning formula's prediction (stages/stats/power.py, `singles=K`).
Goals: power ≥ 50 % for +5 points at a 90 % tie rate on the standard profile (K ≤ 3); stopping saves
≥ 30 % of calls when |Δ| ≥ 0.2; coverage ≥ 95 % and false claims ≤ 2.5 % everywhere, whatever K.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from srbench.simulate.paired import profile_design, simulate, simulate_selection
from srbench.stages.stats.power import power_at

DELTAS = (-0.2, -0.05, 0.0, 0.05, 0.2)
TIES = (0.0, 0.5, 0.9)
POWER_DELTAS = (0.02, 0.05, 0.1, 0.2)


def pct(x: float | None) -> str:
    return "   n/a" if x is None else f"{100 * x:5.1f}%"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--profile", default="standard", choices=("smoke", "quick", "standard"))
    ap.add_argument("--seed", type=int, default=20260918)
    ap.add_argument("--selection-reps", type=int, default=1000, help="replications of each selection row")
    ap.add_argument("--looks", type=int, default=200, help="prefixes of the selection rows' running intersection")
    args = ap.parse_args()
    design = profile_design(args.profile)
    counts = {b: int(n) for b, n in zip(design.names, design.counts, strict=True)}
    weights = dict(zip(design.names, design.weights, strict=True))
    t0 = time.perf_counter()
    print(f"profile {args.profile}: {design.size} cases over {len(design.names)} benchmarks, {args.reps} runs each")
    print("\ncoverage (goal ≥ 95 %) and claims; betting = at every look; stop = at the data-chosen stop")
    print(f"{'Δ':>6} {'ties':>5} | {'Hoeff':>6} {'betting':>7} {'stop':>6} | {'imp':>6} {'reg':>6} | "
          f"{'saved':>6} {'half-width B/H':>15}")
    worst_cov, worst_false = 1.0, 0.0
    for k, (delta, tie) in enumerate((d, t) for d in DELTAS for t in TIES):
        if abs(delta) > 1 - tie + 1e-12:
            print(f"{delta:+6.2f} {100 * tie:4.0f}% | infeasible (|Δ| > 1 − tie rate)")
            continue
        o = simulate(design, tie_rate=tie, delta=delta, reps=args.reps, seed=args.seed + k)
        h, b, s = o["hoeffding"], o["betting"], o["stopping"]
        worst_cov = min(worst_cov, h["coverage"], b["coverage"], s["coverage"])
        if delta == 0:
            worst_false = max(worst_false, h["improvement"], h["regression"], b["improvement"], b["regression"],
                              s["improvement"], s["regression"])
        print(f"{delta:+6.2f} {100 * tie:4.0f}% | {pct(h['coverage'])} {pct(b['coverage']):>7} {pct(s['coverage'])} | "
              f"{pct(s['improvement'])} {pct(s['regression'])} | {pct(s['calls_saved'])} "
              f"{b['half_width']:7.4f}/{h['half_width']:.4f}")
    print(f"\nworst coverage {pct(worst_cov)} (goal ≥ 95 %); worst A/A false-claim rate per side {pct(worst_false)} "
          "(goal ≤ 2.5 %)")
    print("\npower: P(improvement claim), simulated [predicted by stages/stats/power.py]")
    print("(betting predicted: [terminal formula of old plans | new plans' running intersection]; the simulation "
          "looks at 50 prefixes, the real interval at every one)")
    print(f"{'Δ':>6} {'ties':>5} | {'Hoeffding':>17} | {'betting':>24} | {'stop: saved':>11}")
    for k, (delta, tie) in enumerate((d, t) for d in POWER_DELTAS for t in TIES):
        if delta > 1 - tie + 1e-12:
            continue
        o = simulate(design, tie_rate=tie, delta=delta, reps=args.reps, seed=args.seed + 100 + k)
        ph, pb = (power_at(r, counts, weights, tie, delta) for r in ("hoeffding", "betting"))
        pn = power_at("betting", counts, weights, tie, delta, singles=1)
        print(f"{delta:+6.2f} {100 * tie:4.0f}% | {pct(o['hoeffding']['improvement'])} [{pct(ph)}] | "
              f"{pct(o['betting']['improvement'])} [{pct(pb)}|{pct(pn)}] | {pct(o['stopping']['calls_saved']):>11}")
    saved = [simulate(design, tie_rate=t, delta=d, reps=args.reps, seed=args.seed + 200 + i)["stopping"]["calls_saved"]
             for i, (d, t) in enumerate(((0.2, 0.0), (-0.2, 0.0), (0.2, 0.5), (-0.2, 0.5)))]
    print(f"\ncalls saved by early stopping at |Δ| = 0.2 (ties 0 %, 50 %): min {pct(min(saved))} (goal ≥ 30 %)")
    selection(design, counts, weights, args)
    print(f"({time.perf_counter() - t0:.1f} s)")


def selection(design: Any, counts: dict[str, int], weights: dict[str, float], args: argparse.Namespace) -> None:
    """Issue 28: the default claim against the strongest of K singles measured on the same cases."""
    reps, looks = args.selection_reps, args.looks
    print(f"\nbaseline = the strongest of K equally strong singles; {reps} replications per row, running "
          f"intersection over {looks} prefixes")
    print(f"{'K':>3} | A/A false regression: {'unadjusted':>10} {'adjusted':>9} | false improvement (adjusted)")
    worst = 0.0
    for i, k in enumerate((1, 3, 6, 10)):
        o = simulate_selection(design, singles=k, tie_rate=0.5, delta=0.0, reps=reps, seed=args.seed + 300 + i,
                               looks=looks)
        worst = max(worst, o["adjusted"]["regression"], o["adjusted"]["improvement"])
        print(f"{k:>3} | {'':>21} {pct(o['unadjusted']['regression']):>10} {pct(o['adjusted']['regression']):>9} | "
              f"{pct(o['adjusted']['improvement'])}")
    print(f"{'K':>3} | power, +5 points at 90 % ties: {'adjusted':>9} [predicted] | unadjusted")
    powers = []
    for i, k in enumerate((1, 3)):
        o = simulate_selection(design, singles=k, tie_rate=0.9, delta=0.05, reps=reps, seed=args.seed + 310 + i,
                               looks=looks)
        powers.append(o["adjusted"]["improvement"])
        pred = power_at("betting", counts, weights, 0.9, 0.05, singles=k)
        print(f"{k:>3} | {'':>31} {pct(o['adjusted']['improvement']):>9} [{pct(pred)}] | "
              f"{pct(o['unadjusted']['improvement'])}")
    print(f"a plan without a statistics section ({args.profile}, {reps} replications a row): power for +5 points at "
          f"90 % ties {pct(powers[0])} (K = 1), {pct(powers[1])} (K = 3) (goal ≥ 50 %); worst A/A false claim over "
          f"K ∈ {{1, 3, 6, 10}} {pct(worst)} (goal ≤ 2.5 %)")


if __name__ == "__main__":
    main()
