"""The stratified betting interval by hand: interleave order, bets, the linear programs, the bound on
what the remaining cases can do, the stopping decision, and sample-size planning."""

from __future__ import annotations

import math

import numpy as np
import pytest

from srbench.errors import InvalidInput
from srbench.stages.stats import betting, power
from srbench.stages.stats.betting import (
    THETA_MAX,
    best_theta,
    bets,
    betting_interval,
    bounds,
    interleave,
    make_design,
    reach_bounds,
)
from srbench.stages.stats.stopping import decide

LN40 = math.log(40)                  # ln(2/α) = 3.6888794541139363
SQRT_2L = math.sqrt(2 * LN40)        # 2.716203031481239


def test_interleave_by_hand():
    # a: keys 1/6, 3/6, 5/6; b: 1/2 — the tie at 1/2 goes to the name, a before b
    assert interleave(["a", "a", "a", "b"]) == [0, 1, 3, 2]
    # two each: keys 1/4 and 3/4 for both; each benchmark keeps its own order
    assert interleave(["b", "a", "b", "a"]) == [1, 0, 3, 2]
    # idempotent on the per-benchmark order: interleaving an interleaved list changes nothing
    names = ["m"] * 7 + ["g"] * 3
    once = [names[i] for i in interleave(names)]
    assert [once[i] for i in interleave(once)] == once


def theta_star(q: float, n: int) -> float:
    """θ*(q) for one benchmark of n cases, by bisection on the derivative of the expected radius
    (L − (q n/2)·ln(1 − θ²))/θ: it vanishes where q n θ²/(1 − θ²) = L − (q n/2)·ln(1 − θ²)."""
    def g(t: float) -> float:
        return q * n * t * t / (1 - t * t) - LN40 + (q * n / 2) * math.log(1 - t * t)
    if g(THETA_MAX) < 0:
        return THETA_MAX
    lo, hi = 1e-9, THETA_MAX
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if g(mid) < 0 else (lo, mid)
    return lo


def test_bets_by_hand():
    # one benchmark of 100 planned cases: a_i = 1, so λ_i = θ*(q̂_i); d = +1, 0, 0, −1, +1 gives
    # q̂ = 1/1, 2/2, 2/3, 2/4, 3/5 (one discordant pseudo-case plus the discordant cases before)
    design = make_design(["a"] * 100, {"a": 10})
    lam = bets(np.array([[1, 0, 0, -1, 1]], dtype=float), design)[0]
    exact = [theta_star(q, 100) for q in (1, 1, 2 / 3, 2 / 4, 3 / 5)]
    assert exact[0] == pytest.approx(0.2580618, abs=1e-6) and exact[3] == pytest.approx(0.3490483, abs=1e-6)
    assert lam == pytest.approx(exact, rel=0.01)            # the 512-point table is within 1 %
    # fewer discordant pairs, larger bets; with almost no discordance the cap θ_max = 0.9 binds
    assert lam[3] > lam[2] > lam[0]
    assert best_theta(0.01, np.array([1.0]), np.array([4.0]), 0.05) == THETA_MAX
    # a benchmark with half the weight per case bets half as much
    two = make_design(["a", "b"] * 50, {"a": 10, "b": 5})
    pair = bets(np.array([[1, 1]], dtype=float), two)[0]
    assert pair[1] == pytest.approx(pair[0] / 2, rel=1e-12)


def test_one_benchmark_interval_by_hand():
    # n = 4, four wins: q̂ = 1 at every case, so λ = θ*(1) = 0.7578 (table 0.7531) for all; with Λ = 4λ the single
    # benchmark needs no LP: lower = (4·ln(1 + λ) − L)/(4λ), upper = (L − 4·ln(1 − λ))/(4λ) > 1 → 1
    design = make_design(["a"] * 4, {"a": 1})
    lam = bets(np.ones((1, 4)), design)[0]
    assert lam == pytest.approx([theta_star(1, 4)] * 4, rel=0.01) and len(set(lam)) == 1
    x = lam[0]
    lo, hi = bounds(np.ones((1, 4)), design)
    assert lo[0, -1] == pytest.approx((4 * math.log1p(x) - LN40) / (4 * x), abs=1e-12)
    assert lo[0, -1] == pytest.approx(-0.4791, abs=1e-4)            # −0.4726 at the exact θ*(1)
    assert hi[0, -1] == 1.0
    # prefixes 1 and 2 are below −1, so −1; the running intersection keeps the best lower bound
    assert lo[0, :2] == pytest.approx([-1.0, -1.0]) and lo[0, 2] == pytest.approx((3 * math.log1p(x) - LN40) / (3 * x))
    out = betting_interval([1, 1, 1, 1], design)
    assert out.ci == pytest.approx([lo[0, -1], 1.0]) and out.estimate == 1.0 and out.anytime_valid
    assert out.method == "stratified-betting-cs" and out.order == "benchmark-interleave-v1"


def test_linear_programs_by_hand():
    # two benchmarks, w = 0.5 each; Λ_a = 1.8, Λ_b = 0.9 (b has one case left); K = 3·ln 1.9 − L
    w = np.array([0.5, 0.5])
    lam = np.array([[1.8, 0.9]])
    k = np.array([3 * math.log(1.9) - LN40])                    # −1.7633178
    # from μ = (−1, −1) (Σ Λμ = −2.7) raise 0.9366822, all on a (Λ/w = 3.6 > 1.8):
    # μ_a = −1 + 0.9366822/1.8 = −0.4796210 → lower = 0.5·(−0.4796210) + 0.5·(−1) = −0.7398105
    assert betting._knapsack_min(k, lam, w)[0] == pytest.approx(-0.7398104987768757, abs=1e-12)
    # the proportional formula K/ΣΛ = −0.6531 would be too optimistic: μ_b is barely constrained
    assert betting._knapsack_min(k, lam, w)[0] < k[0] / 2.7
    # nothing to raise (K + ΣΛ ≤ 0): every μ = −1 is allowed → −1; everything needed → at most 1
    assert betting._knapsack_min(np.array([-3.0]), lam, w)[0] == -1.0
    assert betting._knapsack_min(np.array([2.7]), lam, w)[0] == pytest.approx(1.0)
    # what b's last case could do, with bet ≤ 0.9 (R̄_b = 0.9): from P = −Λ the objective is
    # 0.5·(0 − 1.8)/1.8 + 0.5·(0.9 − 0.9)/1.8 = −0.5; raise 0.9366822 at 0.5/1.8 each → −0.2398105
    rest = np.array([[0.0, 0.9]])
    assert betting._best_case(k, lam, rest, w)[0] == pytest.approx(-0.2398104987768756, abs=1e-12)
    # and it bounds the real thing: b's last case a win at bet 0.9 gives Λ = (1.8, 1.8), proportional,
    # (4·ln 1.9 − L)/3.6 = −0.3115 ≤ −0.2398
    assert (4 * math.log(1.9) - LN40) / 3.6 <= betting._best_case(k, lam, rest, w)[0]


def test_two_benchmarks_bounds_agree_with_the_linear_program():
    # a, b: 2 planned each, w = 0.5: every a_i = 1, and three wins keep q̂ = 1, so λ = θ*(1) for 4 cases
    design = make_design(["a", "b", "a", "b"], {"a": 10, "b": 10})
    d = np.array([[1, 1, 1]], dtype=float)                   # a0, b0, a1 won; b1 not seen yet
    x = bets(d, design)[0][0]
    lo, hi = bounds(d, design, looks=[3])
    k = np.array([3 * math.log1p(x) - LN40])
    assert lo[0, 0] == pytest.approx(betting._knapsack_min(k, np.array([[2 * x, x]]), design.weights)[0], abs=1e-12)
    assert hi[0, 0] == 1.0
    _, _, best, _ = reach_bounds(d, design, looks=[3])
    final, _ = bounds(np.ones((1, 4)), design, looks=[4])
    assert lo[0, 0] <= final[0, 0] <= best[0, 0]


def test_interval_never_has_zero_width_and_inputs_are_checked():
    design = make_design(["a"] * 50 + ["b"] * 5, {"a": 10, "b": 15})
    for d in ([0] * 55, [1] * 55, [-1] * 55, [0] * 3):
        out = betting_interval(d, design)
        assert out.ci[1] > out.ci[0]
    for bad in ([], [2], [0] * 56):
        with pytest.raises(InvalidInput):
            betting_interval(bad, design)
    with pytest.raises(InvalidInput):
        make_design(["a"], {"a": 0})


def test_all_ties_is_much_tighter_than_hoeffding():
    # 1,000 ties over one benchmark: Hoeffding r = √(2L/1000) = 0.0859; the betting interval is ≈ ±L/(0.9·1000)
    design = make_design(["a"] * 1000, {"a": 1})
    out = betting_interval([0] * 1000, design)
    assert out.ci[1] < 0.01 and out.ci[0] > -0.01
    assert math.sqrt(2 * LN40 / 1000) > 8 * out.ci[1]


def test_decide_settled_unreachable_continue_and_non_inferiority():
    design = make_design(["a"] * 40, {"a": 1})
    # 40 wins: λ = θ*(1) = 0.3824 each; lower = (40·ln(1 + λ) − L)/(40 λ) = 0.6056
    won = decide([1] * 40, design)
    x = bets(np.ones((1, 40)), design)[0][0]
    assert x == pytest.approx(theta_star(1, 40), rel=0.01)
    assert won.state == "settled" and won.verdict == "improvement"
    assert won.lower == pytest.approx((40 * math.log1p(x) - LN40) / (40 * x), abs=1e-12)
    assert won.lower == pytest.approx(0.6056, abs=2e-4)
    assert decide([-1] * 40, design).verdict == "regression"
    assert decide([0] * 5, design).state == "continue"
    # 39 ties and one case left: no outcome of it can lift the lower bound above 0 nor the upper below 0
    tied = decide([0] * 39, design)
    assert tied.state == "unreachable" and tied.verdict == "inconclusive"
    assert tied.best_lower <= 0 <= tied.worst_upper
    # with a margin the question is non-inferiority: 39 ties give lower ≈ −L/Σλ ≈ −0.11 > −0.5
    ni = decide([0] * 39, design, margin=0.5)
    assert ni.question == "non_inferiority" and ni.state == "settled" and ni.verdict == "non_inferior"
    assert decide([-1] * 40, design, margin=0.1).verdict == "inferior"


def test_planning_by_hand():
    counts, weights = {"a": 4, "b": 6}, {"a": 10, "b": 15}
    # Hoeffding: S = 0.16/4 + 0.36/6 = 0.1 → r = √(2L·0.1) = 0.8589388; at τ = 0.5, δ = 0.2:
    # s = √((0.5 − 0.04)·0.1) = 0.2144761, Φ((0.2 − 0.8589388)/0.2144761) = Φ(−3.0723181) = 0.0010620
    assert power.radius("hoeffding", counts, weights, 0.5) == pytest.approx(0.8589388166934752, abs=1e-12)
    assert power.power_at("hoeffding", counts, weights, 0.5, 0.2) == pytest.approx(0.001062016308, abs=1e-9)
    # Betting, one benchmark of 100, τ = 0.5: θ = θ*(0.5) = 0.3490483; at δ = 0 (p₊ = p₋ = 0.25)
    # g = 0.25·(ln(1 + θ) + ln(1 − θ)), r = 0.01·(L − 100·g)/θ = 0.1987 (by the table's θ, within 1 %)
    one = {"a": 100}
    theta = float(best_theta(0.5, np.array([1.0]), np.array([100.0]), 0.05))
    assert theta == pytest.approx(theta_star(0.5, 100), rel=0.01)
    g = 0.25 * (math.log1p(theta) + math.log1p(-theta))
    assert power.radius("betting", one, {"a": 1}, 0.5) == pytest.approx(0.01 * (LN40 - 100 * g) / theta, abs=1e-12)
    t0 = theta_star(0.5, 100)
    g0 = 0.25 * (math.log1p(t0) + math.log1p(-t0))
    assert power.radius("betting", one, {"a": 1}, 0.5) == pytest.approx(0.01 * (LN40 - 100 * g0) / t0, rel=1e-4)
    # close to, and above, the normal-theory √(2L·S·q) = 0.1920646 (the curvature beyond the quadratic)
    assert 0.1920645 < power.radius("betting", one, {"a": 1}, 0.5) < 0.2
    with pytest.raises(InvalidInput):
        power.radius("betting", one, {"a": 1}, 0.9, 0.2)          # |δ| > 1 − τ is impossible
    with pytest.raises(InvalidInput):
        power.radius("bonferroni", one, {"a": 1}, 0.5)


def test_detectable_effect_and_cases_needed_are_consistent():
    counts, weights = {"a": 2000, "b": 500}, {"a": 10, "b": 10}
    for rule in ("hoeffding", "betting"):
        mde = power.detectable_effect(rule, counts, weights, 0.8)
        assert mde is not None and power.power_at(rule, counts, weights, 0.8, mde) == pytest.approx(0.8, abs=1e-6)
        assert power.power_at(rule, counts, weights, 0.8, mde * 0.9) < 0.8
        need = power.cases_needed(rule, counts, weights, 0.8, 0.05)
        assert need is not None
        assert need.power >= 0.8 and need.total == sum(need.per_benchmark.values())
        smaller = {b: math.ceil(need.scale * 0.98 * n) for b, n in counts.items()}
        assert power.power_at(rule, smaller, weights, 0.8, 0.05) < 0.8
    # ties help the betting rule, never the Hoeffding radius
    assert power.detectable_effect("betting", counts, weights, 0.8) < power.detectable_effect("hoeffding", counts,
                                                                                              weights, 0.8)
    assert power.radius("hoeffding", counts, weights, 0.0) == power.radius("hoeffding", counts, weights, 0.9)
