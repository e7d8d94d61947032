"""Issue 43 (item 7): the planned power of a new plan's claim (`power_at(..., singles=K)`, the betting
interval's running intersection against the strongest of K equally strong singles) agrees with the
project's own simulation of that claim (`simulate.paired.simulate_selection`, seeded) within 2 points.
The settings are ones where the earlier planning missed by more (+2.5, −2.4 and −4.0 points);
benchmarks/planning_power.py runs all 17 settings with more replications."""

from __future__ import annotations

import pytest

from srbench.simulate.paired import profile_design, simulate_selection
from srbench.stages.stats.power import power_at

STANDARD = profile_design("standard")
COUNTS = {b: int(n) for b, n in zip(STANDARD.names, STANDARD.counts, strict=True)}
WEIGHTS = dict(zip(STANDARD.names, STANDARD.weights, strict=True))


@pytest.mark.parametrize("singles,tie_rate,delta,reps,seed", [
    (1, 0.5, 0.05, 2000, 4300),      # earlier planning 16.8 %, simulated 19.3 %
    (1, 0.9, 0.03, 2000, 4304),      # 20.4 % vs 22.9 %
    (3, 0.9, 0.05, 1000, 4309),      # 56.6 % vs 52.6 % (2,000 replications)
])
def test_planned_power_is_within_two_points_of_the_simulated_claim(singles, tie_rate, delta, reps, seed):
    simulated = simulate_selection(STANDARD, singles=singles, tie_rate=tie_rate, delta=delta, reps=reps, seed=seed,
                                   looks=200)["adjusted"]["improvement"]
    predicted = power_at("betting", COUNTS, WEIGHTS, tie_rate, delta, singles=singles)
    assert abs(predicted - simulated) <= 0.02, (predicted, simulated)
