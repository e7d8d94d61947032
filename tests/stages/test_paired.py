"""Paired statistics by hand: Hoeffding radius and interval, bootstrap determinism, claims, A/A simulation."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from srbench.errors import InvalidInput
from srbench.stages.stats.paired import (
    BOOTSTRAP,
    HOEFFDING,
    claim,
    exact_weighted_quality,
    non_inferiority,
    stratified_bootstrap,
    weighted_hoeffding,
)

LN40 = math.log(40)                      # ln(2/α) for α = 0.05 = 3.6888794541139363
W = {"a": 10, "b": 15}


def test_hoeffding_two_benchmarks_by_hand():
    # a: W=10, n=4, d = [1, 1, 0, −1] → mean 1/4;  b: W=15, n=6, d = [1, 1, 0, 0, 0, −1] → mean 1/6
    # w_a = 10/25 = 0.4, w_b = 15/25 = 0.6;  Δ = 0.4·0.25 + 0.6·(1/6) = 0.1 + 0.1 = 0.2
    # Σ w²/n = 0.16/4 + 0.36/6 = 0.04 + 0.06 = 0.10;  r = √(2·ln 40·0.10) = √0.7377758908 = 0.8589388167
    # CI = [max(−1, 0.2 − 0.8589388167), min(1, 0.2 + 0.8589388167)] = [−0.6589388167, 1.0] (upper clamped)
    h = weighted_hoeffding({"a": [1, 1, 0, -1], "b": [1, 1, 0, 0, 0, -1]}, W)
    assert h.method == HOEFFDING == "weighted-paired-hoeffding"
    assert h.estimate == pytest.approx(0.2, abs=1e-15)
    assert h.radius == pytest.approx(0.8589388166934752, abs=1e-12)
    assert h.radius == pytest.approx(math.sqrt(2 * LN40 * 0.1), abs=1e-15)
    assert h.ci == pytest.approx([-0.6589388166934751, 1.0], abs=1e-12)
    assert h.n == 10 and h.confidence == pytest.approx(0.95)
    assert [s.weight for s in h.strata] == pytest.approx([0.4, 0.6])


def test_positive_estimate_spanning_zero_is_inconclusive():
    # one benchmark, n = 100: 30 wins, 10 losses, 60 ties → Δ = 20/100 = 0.2
    # r = √(2·ln 40·1/100) = √0.0737775891 = 0.2716203...;  CI = [−0.0716203, 0.4716203] spans 0
    h = weighted_hoeffding({"a": [1] * 30 + [-1] * 10 + [0] * 60}, {"a": 10})
    assert h.radius == pytest.approx(math.sqrt(2 * LN40 / 100), abs=1e-15)
    assert h.ci == pytest.approx([0.2 - 0.27162031, 0.2 + 0.27162031], abs=1e-7)
    assert h.estimate > 0 and claim(h.ci) == "inconclusive"


@pytest.mark.parametrize("diffs,lo,hi", [
    ({"a": [0] * 50, "b": [0] * 80}, None, None),           # all ties (all right or all wrong)
    ({"a": [1] * 5}, None, 1.0),                             # all wins: Δ = 1, the upper bound clamps
    ({"a": [-1] * 5}, -1.0, None),                           # all losses: Δ = −1, the lower bound clamps
    ({"a": [0] * 1_000_000}, None, None),                    # a huge sample still has r > 0
])
def test_hoeffding_never_zero_width(diffs, lo, hi):
    h = weighted_hoeffding(diffs, W)
    assert h.ci[1] - h.ci[0] > 0 and h.radius > 0
    if lo is not None:
        assert h.ci[0] == lo
    if hi is not None:
        assert h.ci[1] == hi


def test_hoeffding_all_ties_is_symmetric_and_wide():
    # 4 ties per benchmark, weights 10/15: Σ w²/n = 0.16/4 + 0.36/4 = 0.13; r = √(2·ln 40·0.13)
    h = weighted_hoeffding({"a": [0] * 4, "b": [0] * 4}, W)
    r = math.sqrt(2 * LN40 * 0.13)
    assert h.estimate == 0 and h.ci == pytest.approx([-min(1, r), min(1, r)])


@pytest.mark.parametrize("diffs,weights", [
    ({}, W), ({"a": []}, W), ({"a": [2]}, W), ({"c": [1]}, W), ({"a": [1]}, {"a": 0}),
    ({"a": [1]}, {"a": float("nan")}),
])
def test_hoeffding_refuses_bad_input(diffs, weights):
    with pytest.raises(InvalidInput):
        weighted_hoeffding(diffs, weights)
    with pytest.raises(InvalidInput):
        stratified_bootstrap(diffs, weights)


@pytest.mark.parametrize("alpha", [0, 1, -0.1, 1.5])
def test_alpha_is_checked(alpha):
    with pytest.raises(InvalidInput):
        weighted_hoeffding({"a": [1]}, W, alpha=alpha)


def test_bootstrap_is_deterministic_by_seed():
    diffs = {"a": [1, 0, 0, -1, 1, 1, 0, 0], "b": [0, 1, -1, 0, 0, 1]}
    one = stratified_bootstrap(diffs, W)
    assert one == stratified_bootstrap(diffs, W)
    assert one == stratified_bootstrap(dict(reversed(list(diffs.items()))), W)      # order-independent
    assert stratified_bootstrap(diffs, W, seed=1) != one
    assert one.method == BOOTSTRAP and one.diagnostic is True and one.label == "diagnostic"
    assert one.seed == 20260918 and one.draws == 2000 and one.quantile_method == "linear"
    assert one.ci[0] <= one.estimate <= one.ci[1] and one.note is None and one.degenerate is False
    # Δ = 0.4·(2/8) + 0.6·(1/6) = 0.1 + 0.1
    assert one.estimate == pytest.approx(0.2)


def test_bootstrap_quantiles_are_type7_at_rank_b_minus_1_q():
    # Rebuild the draws with the documented recipe and interpolate the sorted draws by hand.
    diffs = {"a": [1, 0, -1, 0, 1], "b": [0, 0, 1, -1, -1, 1, 1]}
    draws, seed = 400, 7
    rng = np.random.default_rng(seed)
    total = np.zeros(draws)
    for b, w in (("a", 0.4), ("b", 0.6)):
        g = diffs[b]
        p = np.array([g.count(1), g.count(0), g.count(-1)]) / len(g)
        m = rng.multinomial(len(g), p, size=draws)
        total += w * (m[:, 0] - m[:, 2]) / len(g)
    s = np.sort(total)

    def type7(q: float) -> float:
        h = (draws - 1) * q                 # 399·0.025 = 9.975 and 399·0.975 = 389.025 = 399 − 9.975
        lo = math.floor(h)
        return float(s[lo] + (h - lo) * (s[lo + 1] - s[lo]))

    out = stratified_bootstrap(diffs, W, seed=seed, draws=draws)
    assert out.ci == pytest.approx([type7(0.025), type7(0.975)], abs=1e-12)


def test_bootstrap_zero_width_is_degenerate_never_an_interval():
    out = stratified_bootstrap({"a": [0] * 6, "b": [0] * 3}, W)
    assert out.ci is None and out.degenerate is True and out.degenerate_at == 0.0
    assert out.note.startswith("degenerate") and "proves no parity" in out.note
    # every pair a win: every resample is 1 — degenerate too, at 1.0, and says so
    ones = stratified_bootstrap({"a": [1] * 3}, W)
    assert ones.ci is None and ones.degenerate is True and ones.degenerate_at == 1.0
    assert "no interval" in ones.note
    # n = 10 with one win: the resampled win count is Binomial(10, 0.1); P(0) = 0.349 and
    # P(≤ 3) = 0.987, so the 2.5 % quantile is 0 and the 97.5 % one 0.3 (w_a = 1: only a is present)
    some = stratified_bootstrap({"a": [1] + [0] * 9}, W)
    assert some.degenerate is False and some.note is None
    assert some.ci == pytest.approx([0.0, 0.3])


def test_exact_weighted_quality_by_hand():
    # (10·3/4 + 15·2/6) / 25 = (7.5 + 5) / 25 = 1/2 exactly
    assert exact_weighted_quality({"a": (3, 4), "b": (2, 6)}, W) == Fraction(1, 2)
    # (10·1/3 + 15·0/1) / 25 = (10/3)/25 = 2/15: no float rounding
    assert exact_weighted_quality({"a": (1, 3), "b": (0, 1)}, W) == Fraction(2, 15)
    # only the benchmarks present are weighted
    assert exact_weighted_quality({"b": (1, 3)}, W) == Fraction(1, 3)
    for bad in ({"a": (5, 4)}, {"a": (0, 0)}, {"c": (1, 1)}, {}):
        with pytest.raises(InvalidInput):
            exact_weighted_quality(bad, W)


@pytest.mark.parametrize("ci,expected", [
    ([0.01, 0.2], "improvement"), ([-0.2, -0.01], "regression"), ([-0.1, 0.3], "inconclusive"),
    ([0.0, 0.3], "inconclusive"), ([-0.3, 0.0], "inconclusive"), ([-1.0, 1.0], "inconclusive"),
])
def test_claim(ci, expected):
    assert claim(ci) == expected


def test_claim_refuses_a_malformed_interval():
    for bad in ([0.2, 0.1], [0.1], []):
        with pytest.raises(InvalidInput):
            claim(bad)


def test_non_inferiority_is_strict_and_margin_checked():
    assert non_inferiority(-0.01, 0.02) is True
    assert non_inferiority(-0.03, 0.02) is False
    assert non_inferiority(-0.02, 0.02) is False            # the bound must clear −margin
    assert non_inferiority(0.001, 0.0) is True
    for bad in (-0.01, float("inf"), float("nan")):
        with pytest.raises(InvalidInput):
            non_inferiority(0.0, bad)


def _simulate(p_base: tuple[float, float], p_cand: tuple[float, float], sims: int, n: int,
              seed: int) -> np.ndarray:
    """d[s, b, i] for `sims` independent comparisons, n cases per benchmark, i.i.d. Bernoulli outcomes."""
    rng = np.random.default_rng(seed)
    pb = np.array(p_base)[None, :, None]
    pc = np.array(p_cand)[None, :, None]
    base = rng.random((sims, 2, n)) < pb
    cand = rng.random((sims, 2, n)) < pc
    return cand.astype(np.int8) - base.astype(np.int8)


def test_aa_simulation_claims_improvement_at_most_2_5_percent():
    # 10,000 A/A comparisons: candidate and baseline both Bernoulli(0.6), n = 100 on each of 2 benchmarks.
    sims, n = 10_000, 100
    d = _simulate((0.6, 0.6), (0.6, 0.6), sims, n, seed=20260918)
    # vectorised expectation: Δ = 0.4·mean_a + 0.6·mean_b;  r = √(2·ln 40·(0.16 + 0.36)/100) ≈ 0.4381
    means = d.mean(axis=2)
    delta = 0.4 * means[:, 0] + 0.6 * means[:, 1]
    r = math.sqrt(2 * LN40 * 0.52 / n)
    improvements = regressions = 0
    for s in range(sims):
        h = weighted_hoeffding({"a": d[s, 0].tolist(), "b": d[s, 1].tolist()}, W)
        assert h.ci[1] - h.ci[0] > 0
        if s % 997 == 0:
            assert h.estimate == pytest.approx(delta[s], abs=1e-12)
            assert h.radius == pytest.approx(r, abs=1e-12)
        verdict = claim(h.ci)
        improvements += verdict == "improvement"
        regressions += verdict == "regression"
    assert improvements <= 0.025 * sims
    assert regressions <= 0.025 * sims
    # the vectorised interval agrees in count with the looped one
    assert int(np.sum(delta - r > 0)) == improvements


def test_hoeffding_covers_a_true_difference():
    # candidate better by 0.1 on benchmark a only: true Δ = 0.4·0.1 = 0.04; 95 % coverage at least.
    sims, n = 2000, 100
    d = _simulate((0.6, 0.6), (0.7, 0.6), sims, n, seed=11)
    covered = 0
    for s in range(sims):
        lo, hi = weighted_hoeffding({"a": d[s, 0].tolist(), "b": d[s, 1].tolist()}, W).ci
        covered += lo <= 0.04 <= hi
    assert covered >= 0.95 * sims
