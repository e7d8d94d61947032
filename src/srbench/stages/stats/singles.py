"""The K step of planning (`power.power_at(..., singles=K)`): the chance P_K that a candidate's claim clears
against every one of K equally strong singles, from the chance P₁ that it clears against one.

Model (the one `simulate.paired.draw_singles` simulates, a comparison with a common control): a share
f = min(1, 2q) of the cases is contested (q = 1 − τ); there every single is right with probability ½,
independently, and the router with p = ½ + δ/f; on the others all agree. Each pair then has tie rate τ
and difference δ. Given the router's answers G (which cases are contested, and where the router is
right), the K claims are independent — each depends on G and its own single only — so, exactly,

    P_K = E_G[π(G)^K],   π(G) = P(one claim clears | G),   E_G[π(G)] = P₁.

The claim is a sum over cases of a statistic's terms: ln(1 + λ_b·d) for the betting wealth (λ_b its bet
at θ*(q)), c_b·d for Hoeffding's Δ̂. Case i of benchmark b adds, given G, a term with mean μ_i and
variance σ²_i: 0 and 0 when uncontested; ½·ln(1 + λ_b) and ¼·ln²(1 + λ_b) when the router is right (the
single's coin decides between ln(1 + λ_b) and a tie); ½·ln(1 − λ_b) and ¼·ln²(1 − λ_b) when it is wrong.
So σ²_i = μ_i², and m = Σ μ_i, v = Σ σ²_i have exactly known cumulants (sums over independent cases):
E m, Var m, the third cumulant κ₃(m), E v and Cov(m, v). The planning takes
    m on its Edgeworth density φ(u)(1 + γ/6·(u³ − 3u)) (γ = κ₃/Var(m)^1.5; 121 points on [−6, 6]),
    v = E v + Cov(m, v)/Var(m)·(m − E m),      π = Φ̄((h − m)/√v),
with the one unknown, the bar h, set so that E[π] = P₁ (P₁ from `power`: the running intersection, its
uneven bets). Nothing is fitted: the dependence between the K claims comes from the model alone.
Correlation ½ with normal differences (the step before, kept below ½ ties, where the contested model
does not hold) is the special case of a normal m and a constant v; the real m is skewed (γ ≈ −0.25 on the
standard sizes at 90 % ties: a router that misses a heavily bet Terminal-Bench case loses against every
single at once) and v falls as m rises (correlation ≈ −0.6), so a few router outcomes carry all K claims
and P_K falls more slowly with K: 40.7 against 39.2 % at K = 6, 32.6 against 30.3 % at K = 10.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

__all__ = ["all_claims", "normal_tail"]

_GRID = np.linspace(-6.0, 6.0, 121)
_GRID_W = np.exp(-0.5 * _GRID * _GRID)
_GRID_W /= _GRID_W.sum()
_U = np.linspace(-6.0, 6.0, 81)          # the correlated-½ step's rule, as before
_PHI = np.exp(-0.5 * _U * _U)
_PHI /= _PHI.sum()


def normal_tail(x: np.ndarray) -> np.ndarray:
    """Φ̄(x) for an array (erfc by its Chebyshev fit, relative error < 1.2·10⁻⁷)."""
    y = np.abs(x) / math.sqrt(2.0)
    t = 1.0 / (1.0 + 0.5 * y)
    poly = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (
        0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))))
    half = 0.5 * t * np.exp(-y * y + poly)
    out: np.ndarray = np.where(x >= 0, half, 1.0 - half)
    return out


def correlated_half(p1: float, singles: int) -> float:
    """P_K with K normal claims correlated ½: z = Φ̄⁻¹(P₁), P_K = E_U[Φ̄(√2·z − U)^K], U standard normal."""
    z = NormalDist().inv_cdf(1.0 - p1)
    each = np.array([0.5 * math.erfc((math.sqrt(2.0) * z - u) / math.sqrt(2.0)) for u in _U])
    return float(np.sum(_PHI * each ** singles))


def all_claims(p1: float, singles: int, n: np.ndarray, up: np.ndarray, down: np.ndarray, q: float,
               delta: float) -> float:
    """P_K (the module docstring) for planned counts n_b and the statistic's terms up_b (the single wrong,
    the router right) and down_b (the other way round)."""
    if singles <= 1 or p1 >= 1.0 - 1e-12:
        return p1
    if p1 <= 1e-12:                     # P_K ≤ P₁: negligible
        return 0.0
    f = min(1.0, 2.0 * q)
    p = 0.5 + delta / f
    if q > 0.5 or not 0 < p < 1:
        return correlated_half(p1, singles)
    mu = [f * (p * (up / 2.0) ** j + (1.0 - p) * (down / 2.0) ** j) for j in (1, 2, 3)]   # E μ_i^j per case
    mean_m, var_m = float(n @ mu[0]), float(n @ (mu[1] - mu[0] ** 2))
    third = float(n @ (mu[2] - 3.0 * mu[0] * mu[1] + 2.0 * mu[0] ** 3))
    mean_v, cov_mv = float(n @ mu[1]), float(n @ (mu[2] - mu[0] * mu[1]))
    if var_m <= 0 or mean_v <= 0:
        return correlated_half(p1, singles)
    sd = math.sqrt(var_m)
    m = mean_m + sd * _GRID
    root_v = np.sqrt(np.maximum(mean_v + cov_mv / var_m * (m - mean_m), 1e-3 * mean_v))
    dens = np.maximum(_GRID_W * (1.0 + third / sd ** 3 / 6.0 * (_GRID ** 3 - 3.0 * _GRID)), 0.0)
    dens /= dens.sum()
    h = _bar(p1, dens, m, root_v, mean_m, math.sqrt(var_m + mean_v))
    return float(min(p1, dens @ normal_tail((h - m) / root_v) ** singles))


def _bar(p1: float, dens: np.ndarray, m: np.ndarray, root_v: np.ndarray, mean: float, spread: float) -> float:
    """The bar h with E[π] = dens·Φ̄((h − m)/√v) = P₁ (it falls as h rises): Newton's steps from the normal
    guess, a halving of the bracket [mean ∓ 12·spread] whenever a step would leave it."""
    lo, hi = mean - 12.0 * spread, mean + 12.0 * spread
    h = min(hi, max(lo, mean + spread * NormalDist().inv_cdf(1.0 - p1)))
    for _ in range(100):
        x = (h - m) / root_v
        gap = float(dens @ normal_tail(x)) - p1
        if gap > 0:
            lo = h
        else:
            hi = h
        slope = float(dens @ (np.exp(-0.5 * x * x) / root_v)) / math.sqrt(2.0 * math.pi)
        if abs(gap) <= 1e-13 or hi - lo <= 1e-15 * max(1.0, abs(h)):
            break
        step = h + gap / slope if slope > 0 else lo - 1.0
        h = step if lo < step < hi else (lo + hi) / 2.0
    return h
