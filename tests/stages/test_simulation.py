"""Simulation suite (seeded numpy, bounded): both claim rules on simulated paired differences with the
catalog's real benchmark sizes and weights. A/A false claims ≤ 2.5 % per side, coverage ≥ 95 % at
Δ ∈ {−0.2, −0.05, 0, +0.05, +0.2} × tie rates {0, 50, 90 %} (|Δ| ≤ 1 − tie rate), optional stopping
included; the betting interval is much tighter when pairs tie, and stopping saves calls on large Δ.
The longer version with a power table is benchmarks/stats_power.py."""

from __future__ import annotations

import pytest

from srbench.simulate.paired import profile_design, simulate
from srbench.stages.stats.power import power_at

QUICK = profile_design("quick")            # 740 cases; scicode and terminal-bench have 3 each (w = 0.1)
STANDARD = profile_design("standard")      # 3,183 cases
DELTAS = (-0.2, -0.05, 0.0, 0.05, 0.2)
TIES = (0.0, 0.5, 0.9)
GRID = [(d, t) for d in DELTAS for t in TIES if abs(d) <= 1 - t + 1e-12]


@pytest.mark.parametrize("tie_rate", TIES)
def test_aa_false_claims_at_most_2_5_percent_with_optional_stopping(tie_rate):
    out = simulate(QUICK, tie_rate=tie_rate, delta=0.0, reps=2000, seed=100 + int(10 * tie_rate))
    for rule in ("hoeffding", "betting", "stopping"):
        assert out[rule]["improvement"] <= 0.025, (rule, out[rule])
        assert out[rule]["regression"] <= 0.025, (rule, out[rule])


@pytest.mark.parametrize("delta,tie_rate", GRID)
def test_coverage_at_least_95_percent_every_effect_and_tie_rate(delta, tie_rate):
    out = simulate(QUICK, tie_rate=tie_rate, delta=delta, reps=1000, seed=7 + GRID.index((delta, tie_rate)))
    assert out["hoeffding"]["coverage"] >= 0.95, out["hoeffding"]
    assert out["betting"]["coverage"] >= 0.95, out["betting"]          # at every look at once
    assert out["stopping"]["coverage"] >= 0.95, out["stopping"]        # at the data-chosen stop


def test_coverage_when_benchmarks_differ_in_sign():
    # Δ = 0 overall, but the benchmarks differ by ±0.3 (alternating, then centred): the linear programs
    # must handle the unknown benchmark means, not just their weighted sum
    w = QUICK.weights
    per = [0.3 if k % 2 else -0.3 for k in range(len(w))]
    shift = sum(a * b for a, b in zip(w, per, strict=True))
    per = [p - shift for p in per]
    out = simulate(QUICK, tie_rate=0.5, delta=per, reps=1000, seed=31)
    assert abs(out["delta"]) < 1e-12
    assert out["betting"]["coverage"] >= 0.95 and out["stopping"]["coverage"] >= 0.95
    assert out["betting"]["improvement"] <= 0.025 and out["betting"]["regression"] <= 0.025


def test_betting_is_much_tighter_when_pairs_tie_and_close_to_hoeffding_without_ties():
    tied = simulate(STANDARD, tie_rate=0.9, delta=0.0, reps=200, seed=3, looks=2)
    untied = simulate(STANDARD, tie_rate=0.0, delta=0.0, reps=200, seed=4, looks=2)
    assert tied["betting"]["half_width"] < 0.5 * tied["hoeffding"]["half_width"]
    # with no ties there is nothing to adapt to: a few percent wider than Hoeffding, never much more
    assert untied["betting"]["half_width"] < 1.1 * untied["hoeffding"]["half_width"]


def test_standard_profile_power_goal_and_planning_agree():
    # +5 points at a 90 % tie rate on the standard profile: the goal is ≥ 50 % power; Hoeffding has ~0
    out = simulate(STANDARD, tie_rate=0.9, delta=0.05, reps=300, seed=5, looks=2)
    assert out["betting"]["improvement"] >= 0.5 and out["hoeffding"]["improvement"] < 0.01
    counts = {b: int(n) for b, n in zip(STANDARD.names, STANDARD.counts, strict=True)}
    weights = dict(zip(STANDARD.names, STANDARD.weights, strict=True))
    predicted = power_at("betting", counts, weights, 0.9, 0.05)
    assert abs(predicted - out["betting"]["improvement"]) < 0.1, (predicted, out["betting"])


@pytest.mark.parametrize("delta,tie_rate", [(0.2, 0.0), (-0.2, 0.5)])
def test_early_stopping_saves_calls_on_large_effects(delta, tie_rate):
    out = simulate(STANDARD, tie_rate=tie_rate, delta=delta, reps=200, seed=11)
    assert out["stopping"]["calls_saved"] >= 0.30, out["stopping"]
    assert out["stopping"]["coverage"] >= 0.95
    side = "improvement" if delta > 0 else "regression"
    assert out["stopping"][side] >= 0.9
