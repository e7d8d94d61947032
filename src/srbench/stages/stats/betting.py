"""A variance-adaptive, anytime-valid interval for the weighted paired difference: a stratified
betting confidence sequence (after Waudby-Smith & Ramdas, "Estimating means of bounded random
variables by betting", JRSS-B 2024). Pure numpy; vectorised over simulated replications.

Notation as in `paired`: case i of benchmark b(i) has d_i ∈ {−1, 0, 1}; w_b = W_b / Σ W (the
benchmarks of the plan), n_b the *planned* cases of b, c_i = w_b / n_b, c_max = max_i c_i,
S = Σ_i c_i² over every planned case. The estimand is Δ = Σ_b w_b μ_b, μ_b = E[d | benchmark b]
(cases of a benchmark are exchangeable draws: the frozen selection order is a hash order).

Analysis order (`benchmark-interleave-v1`): each benchmark keeps its plan order; case j (0-based)
of benchmark b gets the key ((2j + 1)/(2 n_b), b) in exact fractions and the cases follow in
ascending key. Every prefix then holds each benchmark in proportion to its size. The order is a
function of the plan alone, never of an outcome, so any prefix is a well-defined subset.

Bets (predictable: case i's bet uses only |d| of the cases before it):
    q̂_i = (1 + #{j < i : d_j ≠ 0}) / i                  (i = 1, 2, …; one discordant pseudo-case)
    λ_i = θ*(q̂_i) · a_i,   a_i = c_i / c_max           (so 0 < λ_i ≤ θ_max = 0.9)
    θ*(q) = argmin over θ ∈ (0, θ_max] of  r(θ; q) = c_max · (ln(2/α) − (q/2) Σ_b n_b ln(1 − θ² a_b²)) / θ
r(θ; q) is the expected distance of the final lower bound below Δ̂ when a share q of the pairs is
discordant and wins and losses balance (E ln(1 + λd) = (q/2) ln(1 − λ²)); θ*(q) is tabulated at 256
values of q (geometric from 1/(4N) to 1) on 512 values of θ (geometric from 10⁻⁴ to θ_max) and
interpolated linearly in ln q. The bet adapts to the tie rate — ties make q̂ small and the bets
large — and to the exact curvature of ln(1 ± λ), which matters for heavy benchmarks with few cases.

Wealth (one process per side, each at level α/2). For every vector μ = (μ_b):
    M⁺_t(μ) = Π_{i≤t} (1 + λ_i d_i) · exp(−λ_i μ_b(i))
    M⁻_t(μ) = Π_{i≤t} (1 − λ_i d_i) · exp(+λ_i μ_b(i))
Each factor has conditional mean ≤ 1 under the true μ: E[1 + λd] = 1 + λμ ≤ e^{λμ}, and it is
positive because λ ≤ 0.9 < 1. So both are nonnegative supermartingales, and by Ville's inequality
P(∃t: M⁺_t(μ) ≥ 2/α) ≤ α/2 (the same for M⁻): an interval built from them covers Δ at every prefix
simultaneously with probability ≥ 1 − α — also at a stopping time chosen from the data. A tie
(d = 0) multiplies the wealth by exactly exp(−λμ): it costs nothing, which is what makes the
interval tight when router and baseline agree.

Interval at prefix t. With W⁺_t = Σ_{i≤t} ln(1 + λ_i d_i), W⁻_t = Σ_{i≤t} ln(1 − λ_i d_i),
Λ_b(t) = Σ_{i≤t, b(i)=b} λ_i and L = ln(2/α), log M⁺ = W⁺ − Σ_b Λ_b μ_b is linear in μ, so the
benchmark means are eliminated exactly by two linear programs over the box μ ∈ [−1, 1]^B:
    lower_t = min { Σ_b w_b μ_b : Σ_b Λ_b μ_b ≥ W⁺_t − L }
    upper_t = max { Σ_b w_b μ_b : Σ_b Λ_b μ_b ≤ L − W⁻_t }
Each is a fractional knapsack: start from μ = −1 (resp. +1) and move the benchmarks with the most
Λ_b per unit of w_b first. When Λ_b ∝ w_b (every planned case seen and equal θ) this is simply
lower = (W⁺ − L)/Σ_i λ_i and upper = (L − W⁻)/Σ_i λ_i, each clamped to [−1, 1]. A benchmark not
seen yet (Λ_b = 0) stays at its worst value. Since ln(1 + x) < x, lower_t < Σλd/Σλ < upper_t: the
interval never has zero width. The reported interval is the running intersection
[max_{s≤t} lower_s, min_{s≤t} upper_s] (all hold together, so the intersection does too).

Unreachable claims (for stopping early). Let λ̄_i = θ_max·c_i/c_max (the largest bet case i can
get) and R̄_b the sum of λ̄ over the cases of b not yet seen. For any later prefix t' and any
outcomes, ln(1 + λd) ≤ λ gives lower_t' ≤ min over P ∈ Π_b [−Λ_b, Λ_b] with Σ_b P_b ≥ W⁺_t − L of
    Σ_b w_b (P_b + R̄_b) / (Λ_b + R̄_b)
(take μ_b = (P_b + R_b)/(Λ_b + R_b) with R_b ≤ R̄_b the bets actually placed later; the ratio grows
with R_b because P_b ≤ Λ_b). This bound, `best_lower`, is another fractional knapsack; `worst_upper`
mirrors it with −d. If max(lower so far, best_lower) ≤ 0 no improvement can be claimed however the
remaining cases turn out.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from srbench.errors import InvalidInput
from srbench.schemas.intervals import BettingInterval

METHOD = "stratified-betting-cs"
ORDER = "benchmark-interleave-v1"
THETA_MAX = 0.9

__all__ = ["METHOD", "ORDER", "THETA_MAX", "Design", "make_design", "interleave", "best_theta", "bets", "bounds",
           "reach_bounds", "betting_interval"]


def interleave(benchmarks: Sequence[str]) -> list[int]:
    """Indices of `benchmarks` (the benchmark of each case, in plan order) in `benchmark-interleave-v1`
    order: each benchmark keeps its own order; case j of benchmark b has key ((2j+1)/(2 n_b), b)."""
    counts: dict[str, int] = {}
    for b in benchmarks:
        counts[b] = counts.get(b, 0) + 1
    seen: dict[str, int] = {}
    keyed = []
    for i, b in enumerate(benchmarks):
        j = seen.get(b, 0)
        seen[b] = j + 1
        keyed.append((Fraction(2 * j + 1, 2 * counts[b]), b, i))
    return [i for _, _, i in sorted(keyed)]


@dataclass(frozen=True)
class Design:
    """The planned cases in analysis order: what the bets and the linear programs need."""

    names: tuple[str, ...]          # benchmarks, sorted
    weights: np.ndarray             # w_b, summing to 1
    counts: np.ndarray              # planned n_b
    strata: np.ndarray              # benchmark index of every planned case, analysis order
    alpha: float

    @property
    def c(self) -> np.ndarray:
        c: np.ndarray = self.weights[self.strata] / self.counts[self.strata]
        return c

    @property
    def c_max(self) -> float:
        return float(np.max(self.weights / self.counts))

    @property
    def s(self) -> float:
        return float(np.sum(self.weights ** 2 / self.counts))

    @property
    def size(self) -> int:
        return int(self.strata.size)


def make_design(benchmarks_in_order: Sequence[str], weights: Mapping[str, float], alpha: float = 0.05) -> Design:
    """A design from the benchmark of every planned case (already in analysis order) and W_b."""
    if not (isinstance(alpha, int | float) and 0 < alpha < 1):
        raise InvalidInput(f"alpha must be in (0, 1), got {alpha!r}", code="invalid_alpha")
    if not benchmarks_in_order:
        raise InvalidInput("no paired differences: the comparison needs at least one case", code="no_pairs")
    names = tuple(sorted(set(benchmarks_in_order)))
    raw = []
    for b in names:
        w = weights.get(b)
        if w is None or not math.isfinite(w) or w <= 0:
            raise InvalidInput(f"benchmark {b} needs a positive finite weight, got {w!r}", code="invalid_weights")
        raw.append(float(w))
    index = {b: k for k, b in enumerate(names)}
    strata = np.array([index[b] for b in benchmarks_in_order], dtype=np.int64)
    counts = np.bincount(strata, minlength=len(names)).astype(float)
    shares = np.array(raw) / sum(raw)
    return Design(names, shares, counts, strata, float(alpha))


@functools.lru_cache(maxsize=128)
def _theta_table(weights: tuple[float, ...], counts: tuple[float, ...], alpha: float) -> tuple[float, np.ndarray,
                                                                                               np.ndarray]:
    """θ* on a grid of q (its smallest q, ln q, θ*): one design's table, built once (planning asks for it
    hundreds of times; read-only arrays)."""
    w, n = np.asarray(weights), np.asarray(counts)
    thetas = np.geomspace(1e-4, THETA_MAX, 512)
    qs = np.geomspace(0.25 / float(np.sum(n)), 1.0, 256)
    c = w / n
    a = c / c.max()
    curv = (n[None, :] * np.log1p(-(thetas[:, None] * a[None, :]) ** 2)).sum(axis=1)   # per θ
    radius = (math.log(2.0 / alpha) - 0.5 * qs[:, None] * curv[None, :]) / thetas[None, :]
    table = thetas[np.argmin(radius, axis=1)]
    log_qs = np.log(qs)
    log_qs.flags.writeable = table.flags.writeable = False
    return float(qs[0]), log_qs, table


def best_theta(q: np.ndarray | float, weights: np.ndarray, counts: np.ndarray, alpha: float) -> np.ndarray:
    """θ*(q) as documented, for benchmarks of weights w_b (summing to 1) and planned counts n_b."""
    low, log_qs, table = _theta_table(tuple(np.asarray(weights, dtype=float).tolist()),
                                      tuple(np.asarray(counts, dtype=float).tolist()), float(alpha))
    theta: np.ndarray = np.interp(np.log(np.clip(q, low, 1.0)), log_qs, table)
    return theta


def bets(d: np.ndarray, design: Design) -> np.ndarray:
    """λ for each case of `d` (shape (R, T), the first T cases in analysis order), as documented."""
    t = d.shape[1]
    discordant = (d != 0).astype(float)
    before = np.cumsum(discordant, axis=1) - discordant
    q_hat = (1.0 + before) / (1.0 + np.arange(t))
    return best_theta(q_hat, design.weights, design.counts, design.alpha) * (design.c[:t] / design.c_max)


def _knapsack_min(k: np.ndarray, lam: np.ndarray, w: np.ndarray) -> np.ndarray:
    """min Σ_b w_b μ_b subject to Σ_b Λ_b μ_b ≥ k and μ ∈ [−1, 1]^B; k (...), lam (..., B)."""
    need = k + lam.sum(axis=-1)                                  # Σ Λ_b (μ_b + 1) must reach this
    order = np.argsort(-(lam / w), axis=-1, kind="stable")
    ls = np.take_along_axis(lam, order, axis=-1)
    ws = w[order]
    cap = 2.0 * ls
    before = np.cumsum(cap, axis=-1) - cap
    fill = np.clip(need[..., None] - before, 0.0, cap)
    cost = np.divide(fill * ws, ls, out=np.zeros_like(fill), where=ls > 0)
    low: np.ndarray = np.minimum(1.0, -1.0 + cost.sum(axis=-1))
    return low


def _best_case(k: np.ndarray, lam: np.ndarray, rest: np.ndarray, w: np.ndarray) -> np.ndarray:
    """min over P ∈ Π[−Λ_b, Λ_b], Σ P ≥ k of Σ_b w_b (P_b + R̄_b)/(Λ_b + R̄_b) (the module docstring)."""
    den = lam + rest
    safe = np.where(den > 0, den, 1.0)
    base = np.where(den > 0, w * (rest - lam) / safe, -w).sum(axis=-1)
    unit = np.where(lam > 0, w / safe, np.inf)
    order = np.argsort(unit, axis=-1, kind="stable")
    cap = np.take_along_axis(2.0 * lam, order, axis=-1)
    us = np.take_along_axis(unit, order, axis=-1)
    need = k + lam.sum(axis=-1)
    before = np.cumsum(cap, axis=-1) - cap
    fill = np.clip(need[..., None] - before, 0.0, cap)
    cost = np.where(cap > 0, fill * np.where(np.isfinite(us), us, 0.0), 0.0)
    low: np.ndarray = np.minimum(1.0, base + cost.sum(axis=-1))
    return low


def _sums(d: np.ndarray, design: Design, looks: np.ndarray) -> tuple[np.ndarray, ...]:
    lam = bets(d, design)
    wp = np.cumsum(np.log1p(lam * d), axis=1)[:, looks - 1]
    wm = np.cumsum(np.log1p(-lam * d), axis=1)[:, looks - 1]
    strata = design.strata[: d.shape[1]]
    per = np.stack([np.cumsum(np.where(strata == b, lam, 0.0), axis=1)[:, looks - 1]
                    for b in range(len(design.names))], axis=-1)
    return wp, wm, per


def _looks(t: int, looks: Sequence[int] | np.ndarray | None) -> np.ndarray:
    out = np.arange(1, t + 1) if looks is None else np.asarray(looks, dtype=np.int64)
    if out.size == 0 or out.min() < 1 or out.max() > t:
        raise InvalidInput(f"looks must be prefix lengths within 1..{t}", code="invalid_looks")
    return out


def bounds(d: np.ndarray, design: Design, looks: Sequence[int] | np.ndarray | None = None
           ) -> tuple[np.ndarray, np.ndarray]:
    """(lower_t, upper_t) at the prefix lengths `looks` (default every prefix): arrays (R, len(looks))."""
    d = np.atleast_2d(np.asarray(d, dtype=float))
    lk = _looks(d.shape[1], looks)
    wp, wm, per = _sums(d, design, lk)
    thr = math.log(2.0 / design.alpha)
    return _knapsack_min(wp - thr, per, design.weights), -_knapsack_min(wm - thr, per, design.weights)


def reach_bounds(d: np.ndarray, design: Design, looks: Sequence[int] | np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(lower, upper, best_lower, worst_upper) at `looks`: the interval and how far any later prefix
    could move it, whatever the remaining cases are (the module docstring)."""
    d = np.atleast_2d(np.asarray(d, dtype=float))
    lk = _looks(d.shape[1], looks)
    wp, wm, per = _sums(d, design, lk)
    thr = math.log(2.0 / design.alpha)
    a_max = THETA_MAX * design.c / design.c_max
    total = np.bincount(design.strata, weights=a_max, minlength=len(design.names))
    seen = np.stack([np.cumsum(np.where(design.strata == b, a_max, 0.0))[lk - 1]
                     for b in range(len(design.names))], axis=-1)
    rest = np.broadcast_to(total - seen, per.shape)
    w = design.weights
    return (_knapsack_min(wp - thr, per, w), -_knapsack_min(wm - thr, per, w),
            _best_case(wp - thr, per, rest, w), -_best_case(wm - thr, per, rest, w))


def betting_interval(diffs: Sequence[int], design: Design) -> BettingInterval:
    """The betting interval for the first len(diffs) cases of `design` (analysis order).

    `ci` is the running intersection over every prefix; `ci_last` the interval at the last prefix.
    Should the intersection be empty (a miss, probability ≤ α) the last interval is reported and
    `note` says so.
    """
    d = np.asarray([int(v) for v in diffs], dtype=float)
    if d.size == 0:
        raise InvalidInput("no paired differences: the comparison needs at least one case", code="no_pairs")
    if d.size > design.size or np.any(~np.isin(d, (-1.0, 0.0, 1.0))):
        raise InvalidInput("paired differences must be −1, 0 or 1, at most one per planned case",
                           code="invalid_pairs")
    lo, hi = bounds(d[None, :], design)
    lo_run, hi_run = float(np.max(lo)), float(np.min(hi))
    last = [float(lo[0, -1]), float(hi[0, -1])]
    note = None
    ci = [lo_run, hi_run]
    if lo_run >= hi_run:
        ci, note = last, "the running intersection was empty (a miss, probability ≤ α): the last interval is shown"
    strata = design.strata[: d.size]
    seen = [k for k in range(len(design.names)) if np.any(strata == k)]
    present = design.weights[seen] / design.weights[seen].sum()
    estimate = float(sum(wk * d[strata == k].mean() for wk, k in zip(present, seen, strict=True)))
    lam = bets(d[None, :], design)[0]
    return BettingInterval(method=METHOD, anytime_valid=True, alpha=design.alpha, confidence=1 - design.alpha,
                           order=ORDER, theta_max=THETA_MAX, estimate=estimate, ci=ci, ci_last=last, n=int(d.size),
                           planned=design.size, discordant=int(np.sum(d != 0)), mean_bet=float(lam.mean()), note=note)
