"""Issue 43 (item 7): the planned power of a new plan's claim (`power_at(..., singles=K)`, the betting
interval's running intersection against the strongest of K equally strong singles) agrees with the
project's own simulation of that claim (`simulate.paired.simulate_selection`, seeded) within 2 points.
The settings are ones where an earlier planning missed by more (+2.5, −2.4 and −4.0 points);
test_per_benchmark_sizes_reach_their_planned_power checks the small designs per-benchmark sizing plans, where
the bets' uneven spread over the benchmarks costs power; benchmarks/planning_power.py runs all 21 settings."""

from __future__ import annotations

import numpy as np
import pytest

from srbench.benchmarks.pins import source_tasks
from srbench.simulate.paired import draw_singles, profile_design, simulate_selection
from srbench.stages.stats.betting import bounds, interleave, make_design
from srbench.stages.stats.power import _all_of, power_at
from srbench.stages.stats.singles import all_claims, correlated_half
from srbench.stages.stats.sizing import sizes_needed

STANDARD = profile_design("standard")
COUNTS = {b: int(n) for b, n in zip(STANDARD.names, STANDARD.counts, strict=True)}
WEIGHTS = dict(zip(STANDARD.names, STANDARD.weights, strict=True))


@pytest.mark.parametrize("singles,tie_rate,delta,reps,seed", [
    (1, 0.5, 0.05, 2000, 4300),      # first planning 16.8 %, simulated 19.3 %
    (1, 0.9, 0.03, 2000, 4304),      # first 20.4 % (Δ̂'s normal law at the last prefix: 16.4 %), simulated 22.9 %
    (3, 0.9, 0.05, 2000, 4309),      # first 56.6 %, simulated 52.6 % (54.3 % over four batches)
])
def test_planned_power_is_within_two_points_of_the_simulated_claim(singles, tie_rate, delta, reps, seed):
    simulated = simulate_selection(STANDARD, singles=singles, tie_rate=tie_rate, delta=delta, reps=reps, seed=seed,
                                   looks=200)["adjusted"]["improvement"]
    predicted = power_at("betting", COUNTS, WEIGHTS, tie_rate, delta, singles=singles)
    assert abs(predicted - simulated) <= 0.02, (predicted, simulated)


@pytest.mark.parametrize("singles,tie_rate,delta,seed", [
    (1, 0.9, 0.05, 9000),            # 482 cases, 80.0 % planned (481 with the share before ρ(J, D): 78.7 % over
                                     # 10 batches; the planning before the W⁺-moment and uneven-bets terms said
                                     # 80.1 % of 473 cases: 77.3 %)
    (1, 0.5, 0.1, 9000),             # 571 cases, 80.0 %; simulated 79.8 % (before: 606 cases, simulated 82.6 %)
])
def test_per_benchmark_sizes_reach_their_planned_power(singles, tie_rate, delta, seed):
    available = {b: n for b in COUNTS if (n := source_tasks(b)) is not None}
    sized = sizes_needed("betting", COUNTS, WEIGHTS, tie_rate, delta, singles=singles, available=available)
    names = [b for b in sorted(sized.per_benchmark) for _ in range(sized.per_benchmark[b])]
    design = make_design([names[i] for i in interleave(names)], WEIGHTS, 0.05)
    simulated = sum(simulate_selection(design, singles=singles, tie_rate=tie_rate, delta=delta, reps=2000,
                                       seed=seed + j, looks=200)["adjusted"]["improvement"] for j in range(4)) / 4
    assert sized.reached and abs(sized.power - simulated) <= 0.02, (sized.power, simulated)


def test_the_k_step_is_the_correlated_half_step_when_the_common_control_is_symmetric():
    """An exact identity: with symmetric terms (Hoeffding's ± c_b) and no difference, the router's answers give
    the claims a normal common part (no skew) with the same variance as their own part and no effect on it
    (Cov(m, v) = 0): the common-control K step is then the correlated-½ one."""
    n = np.array([40.0, 200.0, 15.0])
    a = np.array([0.1, 0.02, 0.5]) / 0.5
    for p1 in (0.2, 0.5, 0.8):
        for k in (2, 6, 10):
            assert all_claims(p1, k, n, a, -a, 0.1, 0.0) == pytest.approx(correlated_half(p1, k), abs=2e-3)


def test_the_k_step_follows_the_simulated_claims_from_the_simulated_p1():
    """The K step alone (P₁ taken from the simulation, so its own error does not count): K = 10 singles at 90 %
    ties, +5 points, the standard sizes. One seeded draw of the K pairs (as `simulate_selection` draws them,
    200 looks); P_K is the share clearing against all of the first K. From the same P₁ (75.6 %) the
    correlated-½ step said 31.7 % against 34.9 % simulated at K = 10 (−3.2); the common-control step says
    34.0 % (−0.9), and is within 1.5 points at K = 3, 6 and 10."""
    reps = 2000
    d = draw_singles(np.random.default_rng(4312), reps, STANDARD, 10, 0.9, 0.05)
    at = np.unique(np.linspace(len(STANDARD.names), STANDARD.size, 200).astype(np.int64))
    clear = np.stack([bounds(d[k].astype(float), STANDARD, at)[0].max(axis=1) > 0 for k in range(10)])
    p1 = float(clear.mean())
    w = tuple(float(x) for x in STANDARD.weights)
    n = tuple(float(x) for x in STANDARD.counts)
    for k in (3, 6, 10):
        simulated = float(clear[:k].all(axis=0).mean())
        assert abs(_all_of(p1, k, w, n, 0.1, 0.05, 0.05, True) - simulated) <= 0.015, (k, p1, simulated)
    # and the whole planning (its own P₁: the earlier prefixes' share ρ(J, D)) on the same draw: with
    # ρ = 0.72 − 1.2·J it said 74.5 / 32.6 % at K = 1 / 10 against 75.6 / 34.9 % (−2.3 at K = 10)
    for k in (1, 3, 6, 10):
        simulated = float(clear[:k].all(axis=0).mean())
        assert abs(power_at("betting", COUNTS, WEIGHTS, 0.9, 0.05, singles=k) - simulated) <= 0.02, (k, simulated)
