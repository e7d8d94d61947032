"""Sample-size planning for the paired comparison: the smallest effect each claim rule detects with
the wanted power at the planned sizes, and the cases per benchmark a chosen effect or margin needs.

Assumption (stated in every answer): every benchmark has the same tie rate τ (share of cases where
candidate and baseline are both right or both wrong) and the same true difference δ, so a case is
a win with p₊ = (1 − τ + δ)/2 and a loss with p₋ = (1 − τ − δ)/2 (|δ| ≤ 1 − τ). Notation as in
`paired` and `betting`: w_b = W_b/ΣW, n_b planned cases, c_b = w_b/n_b, S = Σ_b w_b²/n_b,
L = ln(2/α), Φ the standard normal distribution function.

    σ²(δ) = (1 − τ) − δ²                      variance of one d
    s(δ)  = σ(δ)·√S                           standard deviation of Δ̂ = Σ_b w_b·mean(G_b)

Hoeffding (`paired.weighted_hoeffding`): the radius is fixed, r_H = √(2·L·S).
Betting (`betting`): with the bet the plug-in settles on, q = 1 − τ,
    θ = θ*(q) (`betting.best_theta`),   λ_b = θ·c_b/c_max,   g_b = p₊·ln(1 + λ_b) + p₋·ln(1 − λ_b)
    r_B(δ) = c_max·(L + Σ_b n_b·(λ_b·δ − g_b)) / θ
This is the lower bound's distance below Δ̂ when the wealth Σ ln(1 + λ d) is replaced by
θΔ̂/c_max plus its expected curvature Σ_b n_b(g_b − λ_b δ) (ln(1+x) − x summed): the same formula
as the interval, at its expected value.

Power of an improvement claim (lower bound > 0) at δ:  P(δ) = Φ((δ − r(δ)) / s(δ)).
Non-inferiority at margin m (lower bound > −m) when the true difference is 0: Φ((m − r(0)) / s(0)).
The detectable effect is the smallest δ ∈ (0, 1 − τ] with P(δ) ≥ the wanted power (bisection; null
when even δ = 1 − τ falls short). Cases needed: every benchmark scaled by one factor k,
n_b' = ⌈k·n_b⌉, the smallest k (bisection over [1/max n_b, 10⁴]) whose sizes reach the wanted power
(per-benchmark sizes instead: `sizing.sizes_needed`).

That is the planning of plans made before issue 28 (`singles=None`, kept so their stored answers do
not change). New plans (`singles=K`, K ≥ 1 single targets the baseline is chosen among) plan the
claim they make (`stages/selection`):
- Running intersection (betting). The claim uses max over prefixes of the lower bound, not its last
  value. With the bets λ_b = θ·c_b/c_max (θ = θ*(q)), the lower bound at the last prefix clears t iff
  the wealth W⁺ = Σ_i ln(1 + λ_i·d_i) exceeds L + t·ΣΛ + U(t) (U: uneven bets, below). W⁺ is a sum
  of independent terms with mean M = Σ_b n_b·g_b, variance V and third cumulant K₃ (each term takes
  ln(1 + λ_b), ln(1 − λ_b), 0 with p₊, p₋, τ), so the last prefix clears with
      last = Φ̄(z) + φ(z)·(γ/6)·(z² − 1),  z = (L + t·ΣΛ + U − M)/√V,  γ = K₃/V^1.5   (Edgeworth)
  — the normal approximation on Δ̂'s variance (the formula above) is 4 points short at 90 % ties and
  +3 points on the standard sizes, where a few heavily weighted Terminal-Bench cases carry big bets.
  The earlier prefixes: as a Brownian motion of variance V crossing the line a + β·f (a = L/√V,
  a + β = z) the chance that only an earlier prefix clears is e^(−2aβ)·Φ̄(a − β); the real walk moves
  in jumps (the bets are large where few cases are discordant) and its bets adapt, so a share
      ρ = min(1, max(0, 0.645 − J·(1.42 − 0.26·D))),   D = −β = (M − U − t·ΣΛ)/√V,
      J = √(Σ_b n_b·a_b⁴ / (q·(Σ_b n_b·a_b²)²))   (a_b = c_b/c_max)
  of it is realised — J is one discordant case's share of the walk's spread (0.36 on the standard
  sizes at 90 % ties, 0.06–0.21 for per-benchmark sizes), D how far the walk's drift ends above the bar
  in its standard deviations (2.6 there at +5 points): the jumpier the walk the less of the Brownian
  term it realises, and the less so the more of the crossing the drift makes. ρ (which also absorbs
  the last-prefix formula's own error, −1 to +2 points) was fitted by least squares on (simulated −
  last) over 48 simulated batches of 4,000 replications on 31 designs (`benchmarks/planning_power.py
  --shares`: the standard sizes at 50–93 % ties and +3 to +8 points, 4 more Terminal-Bench cases, two
  `cases_needed` and eight `sizes_needed` sizes; seeds 7100 + row and 8100 + row, none of the check's;
  those simulated above 98 % left out): residuals 0.94 points rms, the simulation's own error ~0.7. The share before, 0.72 − 1.2·J (seven designs),
  left 1.07 rms there: it did not rise with D, so it fell 1 point short at 90 % ties and +5 points.
  Uneven bets. The bet grows while q̂ settles (q̂_i = (1 + #discordant before i)/i), and each benchmark's
  cases sit at other points of that path, so Λ_b = Σ_{i∈b} λ_i is not exactly ∝ w_b; the interval's
  linear program then finds benchmark means μ ∈ [−1, 1]^B that keep the lower bound ≤ t with
  W⁺ − L up to K*(t) = max{Σ_b Λ_b μ_b : Σ_b w_b μ_b ≤ t}, against t·ΣΛ_b for even bets:
  U(t) = K*(t) − t·ΣΛ_b, with Λ_b on the expected path q̂_i = (1 + q(i − 1))/i over the interleaved
  order's first I₀ = max(4000, 400(1 − q)/q) positions (θ*(q) after them) (`_uneven`). It matters for
  small plans — per-benchmark sizes near 500 cases lose 4–5 points of power to it — and little at the
  standard sizes.
  Hoeffding is valid only at the planned size: P₁ = Φ((δ − t − r_H)/s).
- K singles. An improvement (or non-inferiority) claim needs the candidate's lower bound to clear t
  against every one of the K singles (the intersection–union side, at the unadjusted level). The
  planning assumes the worst case — K singles as strong as each other — and exchangeable models that
  are compared with a common control, the router (`singles`): given the router's answers the K claims
  are independent, so P_K = E[π^K] over the router's answers, π the chance one claim clears given them
  and E[π] = P₁; π comes from the statistic's conditional mean m and variance v (m skewed, v falling as
  m rises, their cumulants exact sums over the cases), nothing fitted. Below ½ ties (where that model
  does not hold) the differences are taken as normal and correlated ½: with z = Φ̄⁻¹(P₁),
  P_K = E_U[Φ̄(√2·z − U)^K]. K = 1 gives P₁. Singles weaker than the strongest cost less power, down to P₁.
Against the project's simulation of the claim (`benchmarks/planning_power.py`: `simulate_selection`,
2,000 seeded replications a setting, 200 looks; 21 settings: K = 1, 3, 6, 10, ties 50–90 %, +3 to
+10 points, the standard sizes, the sizes `cases_needed` asks for, 4 more Terminal-Bench cases, and
four per-benchmark sizes of `sizing.sizes_needed`), 2026-12-07, pooled over four batches: 21 of 21
within 2 points, worst 1.2 (K = 6 at 90 % ties, conservative: 41.6 % planned, 42.8 % simulated); the
worst optimistic setting is +1.1 (K = 3, 80 % ties). With ρ = 0.72 − 1.2·J the same batches gave 20 of
21 (K = 6 −2.1: P₁ 1.1 points short at 90 % ties, carried by the K step; K = 3 at 80 % ties +1.5); with
the correlation-½ K step K = 6 and 10 were −3.6 and −3.4. The formula before the wealth's moments
(independence of the earlier prefixes, Δ̂'s normal law at the last one, no uneven-bets term) was
optimistic by 2.8 points (80.1 % planned, 77.3 % simulated) on the per-benchmark sizes it led to.
tests/stages/test_planning_power.py checks five settings, the K step alone (from the simulated P₁) and the
whole planning at K = 1, 3, 6, 10 on one seeded draw.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping

import numpy as np

from srbench.errors import InvalidInput
from srbench.schemas.intervals import CasesNeeded, PowerPlan
from srbench.stages.stats.betting import METHOD as BETTING
from srbench.stages.stats.betting import best_theta
from srbench.stages.stats.paired import HOEFFDING
from srbench.stages.stats.singles import all_claims

RULES = {"hoeffding": HOEFFDING, "betting": BETTING}
ALPHA = 0.05
MAX_SCALE = 1e4
MODEL = ("running intersection (betting) and the intersection-union claim against K equally strong singles, "
         "compared with the router as a common control")
RHO = (0.645, 1.42, 0.26)   # the share ρ = 0.645 − J·(1.42 − 0.26·D) of the crossing term the earlier prefixes realise

__all__ = ["RULES", "ALPHA", "MAX_SCALE", "MODEL", "radius", "power_at", "detectable_effect", "cases_needed",
           "power_plan", "normal_cdf"]


def normal_cdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def _shape(counts: Mapping[str, int | float], weights: Mapping[str, float]) -> tuple[list[float], list[float]]:
    if not counts:
        raise InvalidInput("planning needs at least one benchmark with cases", code="invalid_counts")
    ws, ns = [], []
    for b in sorted(counts):
        w, n = weights.get(b), counts[b]
        if w is None or not math.isfinite(w) or w <= 0:
            raise InvalidInput(f"benchmark {b} needs a positive finite weight, got {w!r}", code="invalid_weights")
        if not n > 0:
            raise InvalidInput(f"benchmark {b} needs at least one planned case", code="invalid_counts")
        ws.append(float(w))
        ns.append(float(n))
    total = sum(ws)
    return [w / total for w in ws], ns


def _check(tie_rate: float, delta: float) -> None:
    if not 0 <= tie_rate < 1:
        raise InvalidInput(f"tie_rate must be in [0, 1), got {tie_rate!r}", code="invalid_planning")
    if abs(delta) > 1 - tie_rate + 1e-12:
        raise InvalidInput(f"an effect of {delta} is impossible with a tie rate of {tie_rate} (|δ| ≤ 1 − τ)",
                           code="invalid_planning")


def radius(rule: str, counts: Mapping[str, int | float], weights: Mapping[str, float], tie_rate: float,
           delta: float = 0.0, alpha: float = ALPHA) -> float:
    """r_H, or r_B(δ), as in the module docstring."""
    _check(tie_rate, delta)
    w, n = _shape(counts, weights)
    s = sum(wb * wb / nb for wb, nb in zip(w, n, strict=True))
    big_l = math.log(2.0 / alpha)
    if rule == "hoeffding":
        return math.sqrt(2.0 * big_l * s)
    if rule != "betting":
        raise InvalidInput(f"unknown claim rule {rule!r}; choose hoeffding or betting", code="invalid_rule")
    c = [wb / nb for wb, nb in zip(w, n, strict=True)]
    c_max = max(c)
    q = 1.0 - tie_rate
    theta = _theta(q, tuple(w), tuple(n), alpha)
    p_win, p_loss = (q + delta) / 2.0, (q - delta) / 2.0
    curvature = 0.0
    for cb, nb in zip(c, n, strict=True):
        lam = theta * cb / c_max
        g = p_win * math.log1p(lam) + p_loss * math.log1p(-lam)
        curvature += nb * (lam * delta - g)
    return c_max * (big_l + curvature) / theta


def _sd(counts: Mapping[str, int | float], weights: Mapping[str, float], tie_rate: float, delta: float) -> float:
    w, n = _shape(counts, weights)
    s = sum(wb * wb / nb for wb, nb in zip(w, n, strict=True))
    return math.sqrt(max(0.0, (1.0 - tie_rate) - delta * delta) * s)


@functools.lru_cache(maxsize=1024)
def _theta(q: float, w: tuple[float, ...], n: tuple[float, ...], alpha: float) -> float:
    """θ*(q) of `betting.best_theta`, remembered (planning asks for the same one many times)."""
    return float(best_theta(q, np.asarray(w), np.asarray(n), alpha))


def _log_tail(x: float) -> float:
    """ln Φ̄(x), also far in the tail (Mills' ratio once erfc underflows)."""
    tail = 0.5 * math.erfc(x / math.sqrt(2.0))
    if tail > 0:
        return math.log(tail)
    return -0.5 * x * x - math.log(x * math.sqrt(2.0 * math.pi))


def _claim_power(w: tuple[float, ...], n: tuple[float, ...], q: float, delta: float, threshold: float,
                 alpha: float) -> float:
    """P₁ of the module docstring: the running intersection's lower bound clears the threshold at the last
    prefix (W⁺'s mean, variance and skewness: Edgeworth) or, a share ρ(J, D) of the Brownian crossing term, at
    an earlier one."""
    parts = _walk(w, n, q, delta, threshold, alpha)
    if isinstance(parts, float):
        return parts
    last, earlier, jump, lead = parts
    share = min(1.0, max(0.0, RHO[0] - jump * (RHO[1] - RHO[2] * lead)))
    return float(min(1.0, last + share * earlier))


def _walk(w: tuple[float, ...], n: tuple[float, ...], q: float, delta: float, threshold: float,
          alpha: float) -> tuple[float, float, float, float] | float:
    """The wealth walk's last-prefix power, its Brownian crossing term, J and D (the module docstring), or
    the power itself when the walk cannot move."""
    wa, na = np.asarray(w), np.asarray(n)
    c = wa / na
    a_b = c / float(np.max(c))
    lam = _theta(q, w, n, alpha) * a_b
    p_win, p_loss = (q + delta) / 2.0, (q - delta) / 2.0
    up, down = np.log1p(lam), np.log1p(-lam)
    m = p_win * up + p_loss * down
    v = p_win * up ** 2 + p_loss * down ** 2 - m ** 2
    k3 = p_win * (up - m) ** 3 + p_loss * (down - m) ** 3 + (1.0 - q) * (-m) ** 3
    mean, var, third = float(na @ m), float(na @ v), float(na @ k3)
    need = math.log(2.0 / alpha) + _uneven(w, tuple(max(1, round(x)) for x in n), q, threshold, alpha) + \
        threshold * float(na @ lam)
    if var <= 0:
        return 1.0 if mean > need else 0.0
    z = (need - mean) / math.sqrt(var)
    skew = third / var ** 1.5
    last = 1.0 - normal_cdf(z) + math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi) * skew / 6.0 * (z * z - 1.0)
    a = math.log(2.0 / alpha) / math.sqrt(var)
    beta = z - a
    earlier = math.exp(min(0.0, -2.0 * a * beta + _log_tail(a - beta)))
    jump = math.sqrt(float(na @ a_b ** 4) / (q * float(na @ a_b ** 2) ** 2))
    return min(1.0, max(0.0, last)), earlier, jump, -beta


def _shares(counts: Mapping[str, int | float], weights: Mapping[str, float], tie_rate: float, delta: float,
            threshold: float = 0.0, alpha: float = ALPHA) -> tuple[float, float, float, float]:
    """`_walk`'s parts for planned counts (`benchmarks/planning_power.py --shares`: what ρ was fitted on)."""
    w, n = _shape(counts, weights)
    parts = _walk(tuple(w), tuple(n), 1.0 - tie_rate, delta, threshold, alpha)
    return (parts, 0.0, 0.0, 0.0) if isinstance(parts, float) else parts


@functools.lru_cache(maxsize=1024)
def _uneven(w: tuple[float, ...], n: tuple[int, ...], q: float, threshold: float, alpha: float) -> float:
    """K*(t) − t·ΣΛ_b of the module docstring: how far the bets' uneven spread over the benchmarks (the bet
    grows while q̂ settles, and each benchmark's cases sit at other points of that path) moves the wealth a
    claim needs, with the bets on the expected path q̂_i = (1 + q(i − 1))/i over the first I₀ positions of
    the interleaved order (θ*(q) after them)."""
    big_n = sum(n)
    i0 = min(big_n, max(4000, math.ceil(400 * (1 - q) / max(q, 1e-9))))
    keys, strata = [], []
    for b, nb in enumerate(n):
        j = np.arange(min(nb, int((i0 + 0.5) / big_n * nb) + 1))       # the cases that can fall in the first I₀
        k = (2 * j + 1) / (2.0 * nb)
        keep = k <= (i0 + 0.5) / big_n
        keys.append(k[keep])
        strata.append(np.full(int(keep.sum()), b))
    order = np.lexsort((np.concatenate(strata), np.concatenate(keys)))[:i0]
    stratum = np.concatenate(strata)[order]
    wa, na = np.asarray(w), np.asarray(n, dtype=float)
    a = (wa / na) / float(np.max(wa / na))
    pos = np.arange(1, stratum.size + 1)
    theta = best_theta((1 + q * (pos - 1)) / pos, wa, na, alpha)
    early = np.bincount(stratum, weights=theta, minlength=len(n))
    seen = np.bincount(stratum, minlength=len(n))
    lam = a * (early + float(best_theta(q, wa, na, alpha)) * (na - seen))
    ratio = np.argsort(-lam / wa, kind="stable")          # max Σ Λ_b μ_b over Σ w_b μ_b ≤ t, μ ∈ [−1, 1]
    budget, best = threshold + 1.0, -float(lam.sum())
    for b in ratio:
        step = min(1.0, max(0.0, budget / (2 * wa[b])))
        best += 2 * lam[b] * step
        budget -= 2 * wa[b] * step
    return max(0.0, best - threshold * float(lam.sum()))


def _all_of(p1: float, singles: int, w: tuple[float, ...], n: tuple[float, ...], q: float, delta: float,
            alpha: float, betting: bool) -> float:
    """P_K from P₁ (the module docstring, `singles.all_claims`): the statistic's terms ln(1 ± λ_b) of the
    betting wealth, or ± c_b of Hoeffding's Δ̂ (the scale does not matter)."""
    wa, na = np.asarray(w), np.asarray(n)
    a_b = (wa / na) / float(np.max(wa / na))
    if betting:
        lam = np.minimum(_theta(q, w, n, alpha) * a_b, 0.999)
        up, down = np.log1p(lam), np.log1p(-lam)
    else:
        up, down = a_b, -a_b
    return all_claims(p1, singles, na, up, down, q, delta)


def power_at(rule: str, counts: Mapping[str, int | float], weights: Mapping[str, float], tie_rate: float,
             delta: float, threshold: float = 0.0, alpha: float = ALPHA, singles: int | None = None) -> float:
    """P(lower bound > threshold) when the true difference is δ: Φ((δ − threshold − r(δ))/s(δ)); with
    `singles` = K, the claim new plans make (running intersection, K singles: the module docstring).
    Remembered by its inputs (the searches of `cases_needed`, `detectable_effect` and `sizing` ask again)."""
    names = sorted(counts)
    return _power_at(rule, tuple((b, counts[b]) for b in names), tuple((b, weights.get(b)) for b in names),
                     tie_rate, delta, threshold, alpha, singles)


@functools.lru_cache(maxsize=1024)
def _power_at(rule: str, count_items: tuple[tuple[str, int | float], ...],
              weight_items: tuple[tuple[str, float | None], ...], tie_rate: float, delta: float, threshold: float,
              alpha: float, singles: int | None) -> float:
    counts, weights = dict(count_items), {b: w for b, w in weight_items if w is not None}
    r = radius(rule, counts, weights, tie_rate, delta, alpha)
    sd = _sd(counts, weights, tie_rate, delta)
    gap = delta - threshold - r
    if sd == 0:
        return 1.0 if gap > 0 else 0.0
    if singles is None:
        return normal_cdf(gap / sd)
    p1 = normal_cdf(gap / sd)
    w, n = _shape(counts, weights)
    if rule == "betting":
        p1 = _claim_power(tuple(w), tuple(n), 1.0 - tie_rate, delta, threshold, alpha)
    return _all_of(p1, singles, tuple(w), tuple(n), 1.0 - tie_rate, delta, alpha, rule == "betting")


def detectable_effect(rule: str, counts: Mapping[str, int | float], weights: Mapping[str, float], tie_rate: float,
                      power: float = 0.8, alpha: float = ALPHA, singles: int | None = None) -> float | None:
    """The smallest δ ∈ (0, 1 − τ] whose improvement claim has at least `power`; None if none has."""
    top = 1.0 - tie_rate
    if power_at(rule, counts, weights, tie_rate, top, 0.0, alpha, singles) < power:
        return None
    lo, hi = 0.0, top
    for _ in range(60):
        mid = (lo + hi) / 2
        if power_at(rule, counts, weights, tie_rate, mid, 0.0, alpha, singles) >= power:
            hi = mid
        else:
            lo = mid
    return hi


def cases_needed(rule: str, counts: Mapping[str, int | float], weights: Mapping[str, float], tie_rate: float,
                 delta: float, threshold: float = 0.0, power: float = 0.8, alpha: float = ALPHA,
                 singles: int | None = None) -> CasesNeeded | None:
    """The smallest common scale k (n_b' = ⌈k·n_b⌉) with P(lower bound > threshold | δ) ≥ power."""
    def sizes(k: float) -> dict[str, int]:
        return {b: max(1, math.ceil(k * counts[b] - 1e-9)) for b in counts}

    def ok(k: float) -> bool:
        return power_at(rule, sizes(k), weights, tie_rate, delta, threshold, alpha, singles) >= power

    lo, hi = 1.0 / max(counts.values()), MAX_SCALE
    if not ok(hi):
        return None
    if ok(lo):
        hi = lo
    for _ in range(80):
        if hi / lo < 1 + 1e-6:
            break
        mid = math.sqrt(lo * hi)
        if ok(mid):
            hi = mid
        else:
            lo = mid
    per = sizes(hi)
    return CasesNeeded(scale=hi, per_benchmark=dict(sorted(per.items())), total=sum(per.values()),
                       power=power_at(rule, per, weights, tie_rate, delta, threshold, alpha, singles))


def power_plan(counts: Mapping[str, int], weights: Mapping[str, float], *, rule: str, tie_rate: float,
               effect: float, margin: float | None = None, power: float = 0.8, alpha: float = ALPHA,
               singles: int | None = None) -> PowerPlan:
    """Planning for one claim rule at the planned sizes `counts` (one line of the plan's answer);
    `singles` = K plans the claim of a new plan (the module docstring), None a plan from before."""
    if rule not in RULES:
        raise InvalidInput(f"unknown claim rule {rule!r}; choose hoeffding or betting", code="invalid_rule")
    _check(tie_rate, min(effect, 1 - tie_rate))
    at_effect = effect <= 1 - tie_rate
    ni = margin is not None and margin > 0
    out = PowerPlan(
        rule=rule, method=RULES[rule], tie_rate=tie_rate, power=power, alpha=alpha,
        radius_at_zero=radius(rule, counts, weights, tie_rate, 0.0, alpha),
        detectable_effect=detectable_effect(rule, counts, weights, tie_rate, power, alpha, singles),
        effect=effect, margin=margin,
        power_at_effect=power_at(rule, counts, weights, tie_rate, effect, 0.0, alpha, singles) if at_effect else None,
        needed_for_effect=cases_needed(rule, counts, weights, tie_rate, effect, 0.0, power, alpha, singles)
        if at_effect else None,
        power_non_inferiority=power_at(rule, counts, weights, tie_rate, 0.0, -margin, alpha, singles)
        if margin is not None and ni else None,
        needed_for_margin=cases_needed(rule, counts, weights, tie_rate, 0.0, -margin, power, alpha, singles)
        if margin is not None and ni else None)
    return out if singles is None else out.model_copy(update={"singles": singles, "model": MODEL})
