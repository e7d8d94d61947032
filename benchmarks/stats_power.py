"""The long simulation of the paired claim rules on the catalog's real sizes and weights.

Run by hand:  python benchmarks/stats_power.py [--reps 2000] [--profile standard]

Simulated paired differences (srbench.simulate.paired: every benchmark the same tie rate and true
difference Δ, seeded numpy) go through the real interval code. Printed, per profile:
- coverage of Hoeffding (at the planned size) and of the betting interval (at all 50 looks at once,
  and at the data-chosen stop), at Δ ∈ {−0.2, −0.05, 0, +0.05, +0.2} × tie rates {0, 50, 90 %};
- the A/A false-claim rates (improvement and regression, optional stopping included);
- the power table: P(improvement claim) for Hoeffding and betting, simulated and predicted by
  the planning formulas (stages/power.py), at Δ ∈ {+0.02, +0.05, +0.1, +0.2};
- the calls early stopping saves (share of cases never dispatched) and its claim rates.
Goals: power ≥ 50 % for +5 points at a 90 % tie rate on the standard profile; stopping saves
≥ 30 % of calls when |Δ| ≥ 0.2; coverage ≥ 95 % and false claims ≤ 2.5 % everywhere.
"""

from __future__ import annotations

import argparse
import time

from srbench.simulate.paired import profile_design, simulate
from srbench.stages.power import power_at

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
    print("\npower: P(improvement claim), simulated [predicted by stages/power.py]")
    print(f"{'Δ':>6} {'ties':>5} | {'Hoeffding':>17} | {'betting':>17} | {'stop: saved':>11}")
    for k, (delta, tie) in enumerate((d, t) for d in POWER_DELTAS for t in TIES):
        if delta > 1 - tie + 1e-12:
            continue
        o = simulate(design, tie_rate=tie, delta=delta, reps=args.reps, seed=args.seed + 100 + k)
        ph, pb = (power_at(r, counts, weights, tie, delta) for r in ("hoeffding", "betting"))
        print(f"{delta:+6.2f} {100 * tie:4.0f}% | {pct(o['hoeffding']['improvement'])} [{pct(ph)}] | "
              f"{pct(o['betting']['improvement'])} [{pct(pb)}] | {pct(o['stopping']['calls_saved']):>11}")
    saved = [simulate(design, tie_rate=t, delta=d, reps=args.reps, seed=args.seed + 200 + i)["stopping"]["calls_saved"]
             for i, (d, t) in enumerate(((0.2, 0.0), (-0.2, 0.0), (0.2, 0.5), (-0.2, 0.5)))]
    print(f"\ncalls saved by early stopping at |Δ| = 0.2 (ties 0 %, 50 %): min {pct(min(saved))} (goal ≥ 30 %)")
    print(f"({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
