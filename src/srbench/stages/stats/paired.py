"""Paired quality statistics for `compare` (REP-5, REP-6, REP-7): pure functions, numpy, seeded.

Notation. A comparison pairs a candidate target with the baseline target on the same cases. For
case i, d_i = 1[candidate correct] − 1[baseline correct] ∈ {−1, 0, 1}. G_b is the list of d_i of
benchmark b, n_b = |G_b|, W_b the fixed benchmark weight (REP-4) and w_b = W_b / Σ_present W the
weight renormalised over the benchmarks present. The paired difference of weighted quality is

    Δ = Σ_b w_b · mean(G_b)      (= Q_candidate − Q_baseline, see `exact_weighted_quality`).

Primary interval (`weighted_hoeffding`, method `weighted-paired-hoeffding`):

    r  = √(2 · ln(2/α) · Σ_b w_b² / n_b)
    CI = [max(−1, Δ − r), min(1, Δ + r)]

Why: the estimator is Δ = Σ_i c_i·d_i with c_i = w_b/n_b for i in benchmark b, a sum of independent
terms each ranging over an interval of length 2·c_i. Hoeffding's inequality gives
P(|Δ − E Δ| ≥ t) ≤ 2·exp(−2t² / Σ_i (2c_i)²) = 2·exp(−t² / (2 Σ_b w_b²/n_b)); setting the right
side to α gives t = r. It assumes only independence across cases, not a variance estimate, so it
stays conservative when every pair agrees (where a plug-in variance would be 0).

Diagnostic interval (`stratified_bootstrap`): a percentile bootstrap stratified by benchmark. It
is not a formal interval: on a small sample where all pairs agree every resample is the same value.
Such a zero-width result is reported as `degenerate` (with `ci: null` and the value it sat on),
never as an interval: [0, 0] would read as proof of parity, which it is not.

Claims (`claim`): improvement only when the lower bound is > 0, regression only when the upper
bound is < 0, otherwise inconclusive — a positive point estimate whose interval spans zero is never
an improvement (UI-6). Non-inferiority (`non_inferiority`, REP-7) needs a margin declared in advance.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Final

import numpy as np

from srbench import DEFAULT_SEED
from srbench.errors import InvalidInput
from srbench.schemas.diagnosis import MeanInterval
from srbench.schemas.intervals import BootstrapInterval, HoeffdingInterval, HoeffdingStratum

HOEFFDING = "weighted-paired-hoeffding"
HOEFFDING_MEAN = "weighted-hoeffding-mean"
BOOTSTRAP = "stratified-percentile-bootstrap"
QUANTILE_METHOD: Final = "linear"
ZERO_WIDTH_NOTE = ("degenerate: every resample gave the same value because the sample is small or "
                   "uniform; this is no interval and proves no parity; use the claim rule's interval")
ZERO_ZERO_NOTE = ("degenerate: every resample gave 0 (e.g. all pairs tie) on this sample; this is no "
                  "interval and proves no parity; use the claim rule's interval")

__all__ = ["HOEFFDING", "BOOTSTRAP", "weighted_hoeffding", "weighted_mean_hoeffding", "stratified_bootstrap", "exact_weighted_quality",
           "non_inferiority", "claim"]


def _alpha(alpha: float) -> float:
    if not (isinstance(alpha, int | float) and 0 < alpha < 1):
        raise InvalidInput(f"alpha must be in (0, 1), got {alpha!r}", code="invalid_alpha")
    return float(alpha)


def _strata(diffs_by_benchmark: Mapping[str, Sequence[int]],
            weights: Mapping[str, float]) -> list[tuple[str, list[int], Fraction]]:
    """Sorted (benchmark, diffs, w_b) with w_b = W_b / Σ_present W in exact fractions; validates input."""
    if not diffs_by_benchmark:
        raise InvalidInput("no paired differences: the comparison needs at least one case", code="no_pairs")
    raw: list[tuple[str, list[int], Fraction]] = []
    for b in sorted(diffs_by_benchmark):
        g = [int(v) for v in diffs_by_benchmark[b]]
        if not g:
            raise InvalidInput(f"benchmark {b} has no paired differences", code="no_pairs")
        if any(v not in (-1, 0, 1) for v in g):
            raise InvalidInput(f"benchmark {b}: a paired difference must be −1, 0 or 1", code="invalid_pairs")
        w = weights.get(b)
        if w is None or not math.isfinite(w) or w <= 0:
            raise InvalidInput(f"benchmark {b} needs a positive finite weight, got {w!r}", code="invalid_weights")
        raw.append((b, g, Fraction(w)))
    total = sum(w for _, _, w in raw)
    return [(b, g, w / total) for b, g, w in raw]


def weighted_hoeffding(diffs_by_benchmark: Mapping[str, Sequence[int]], weights: Mapping[str, float],
                       alpha: float = 0.05) -> HoeffdingInterval:
    """The primary paired interval: Δ = Σ_b w_b·mean(G_b), r = √(2·ln(2/α)·Σ_b w_b²/n_b),
    CI = [max(−1, Δ−r), min(1, Δ+r)].

    It never has zero width. r > 0: ln(2/α) > ln 2 > 0 for α ∈ (0, 1), and Σ_b w_b²/n_b > 0 for
    finite n_b ≥ 1 and w_b > 0; by Cauchy–Schwarz Σ_b w_b²/n_b ≥ (Σ_b w_b)²/Σ_b n_b = 1/N, so
    r ≥ √(2·ln 2/N), far above float resolution for any real case count N. Clamping cannot close the
    interval either: Δ ∈ [−1, 1] cannot be both 1 and −1, so if Δ < 1 the upper bound min(1, Δ+r) > Δ
    ≥ the lower bound, and if Δ = 1 the lower bound max(−1, 1−r) < 1 = the upper bound.
    """
    a = _alpha(alpha)
    strata = _strata(diffs_by_benchmark, weights)
    delta = sum((w * Fraction(sum(g), len(g)) for _, g, w in strata), Fraction(0))
    s = sum((w * w / len(g) for _, g, w in strata), Fraction(0))
    r = math.sqrt(2.0 * math.log(2.0 / a) * float(s))
    d = float(delta)
    lo, hi = max(-1.0, d - r), min(1.0, d + r)
    assert r > 0 and hi > lo, "a Hoeffding interval never has zero width"
    return HoeffdingInterval(
        method=HOEFFDING, alpha=a, confidence=1 - a, estimate=d, radius=r, ci=[lo, hi],
        n=sum(len(g) for _, g, _ in strata),
        strata=[HoeffdingStratum(benchmark=b, n=len(g), weight=float(w), mean_diff=sum(g) / len(g))
                for b, g, w in strata])


def weighted_mean_hoeffding(values_by_benchmark: Mapping[str, Sequence[int]], weights: Mapping[str, float],
                            alpha: float = 0.05) -> MeanInterval:
    """A weighted quality of 0/1 outcomes (an oracle's, issue 43) with its Hoeffding interval:
    Q = Σ_b w_b·mean(x_b), r = √(ln(2/α)/2 · Σ_b w_b²/n_b), CI = [max(0, Q−r), min(1, Q+r)].

    The same derivation as `weighted_hoeffding` with terms c_i·x_i ranging over [0, c_i] (length c_i, not 2·c_i):
    P(|Q − E Q| ≥ t) ≤ 2·exp(−2t² / Σ_b w_b²/n_b)."""
    a = _alpha(alpha)
    if any(v not in (0, 1) for g in values_by_benchmark.values() for v in g):
        raise InvalidInput("an outcome must be 0 or 1", code="invalid_pairs")
    strata = _strata(values_by_benchmark, weights)
    q = float(sum((w * Fraction(sum(g), len(g)) for _, g, w in strata), Fraction(0)))
    r = math.sqrt(math.log(2.0 / a) / 2.0 * float(sum((w * w / len(g) for _, g, w in strata), Fraction(0))))
    return MeanInterval(method=HOEFFDING_MEAN, alpha=a, estimate=q, radius=r, ci=[max(0.0, q - r), min(1.0, q + r)],
                        n=sum(len(g) for _, g, _ in strata))


def stratified_bootstrap(diffs_by_benchmark: Mapping[str, Sequence[int]], weights: Mapping[str, float],
                         seed: int = DEFAULT_SEED, draws: int = 2000, alpha: float = 0.05) -> BootstrapInterval:
    """Diagnostic percentile bootstrap, stratified by benchmark.

    Each draw j is T_j = Σ_b w_b·mean(G*_b,j), G*_b,j a with-replacement resample of G_b of size
    n_b. Because d ∈ {−1, 0, 1}, such a resample is fully described by how often it picked +1, 0
    and −1, which is Multinomial(n_b; c₊/n_b, c₀/n_b, c₋/n_b) for the counts c in G_b; so
    mean(G*_b,j) = (m₊ − m₋)/n_b is drawn from that multinomial — the same distribution as
    resampling indices, in O(draws) memory. Benchmarks are drawn in sorted order from one
    `numpy.random.default_rng(seed)`, so a seed fixes the result.

    CI = [quantile(T, α/2), quantile(T, 1−α/2)] with numpy's `linear` method (Hyndman–Fan type 7:
    the sorted draws interpolated at rank (B−1)·q, as in report percentiles). Upstream took the
    fixed sorted indices 49 and 1949, which only fit B = 2000 and α = 0.05 and are lopsided by one
    (index 49 is the 50th smallest draw, index 1949 the 51st largest). Type 7 works for any B and α
    and is mirror-symmetric: the rank for 1−q is (B−1) minus the rank for q.
    """
    a = _alpha(alpha)
    if not isinstance(draws, int) or draws < 1:
        raise InvalidInput(f"draws must be a positive integer, got {draws!r}", code="invalid_draws")
    strata = _strata(diffs_by_benchmark, weights)
    rng = np.random.default_rng(seed)
    total = np.zeros(draws, dtype=float)
    for _, g, w in strata:
        n = len(g)
        counts = np.array([g.count(1), g.count(0), g.count(-1)], dtype=float)
        picks = rng.multinomial(n, counts / n, size=draws)
        total += float(w) * (picks[:, 0] - picks[:, 2]) / n
    lo, hi = (float(x) for x in np.quantile(total, [a / 2, 1 - a / 2], method=QUANTILE_METHOD))
    estimate = float(sum((w * Fraction(sum(g), len(g)) for _, g, w in strata), Fraction(0)))
    out = BootstrapInterval(method=BOOTSTRAP, label="diagnostic", diagnostic=True, alpha=a, seed=seed, draws=draws,
                            quantile_method=QUANTILE_METHOD, estimate=estimate, ci=[lo, hi], degenerate=False,
                            degenerate_at=None, note=None)
    if hi - lo <= 0:
        # every resample gave the same value: that is no interval, and it is never shown as one
        out = out.model_copy(update={"ci": None, "degenerate": True, "degenerate_at": lo,
                                     "note": ZERO_ZERO_NOTE if lo == 0 and hi == 0 else ZERO_WIDTH_NOTE})
    return out


def exact_weighted_quality(correct_by_benchmark: Mapping[str, tuple[int, int]],
                           weights: Mapping[str, float]) -> Fraction:
    """Q = Σ_b W_b·k_b/n_b / Σ_b W_b over the benchmarks given, in exact fractions (REP-5).

    k_b = correct cases of benchmark b, n_b = its planned cases. Exact arithmetic makes ties on
    quality exact, so the baseline choice never depends on float rounding.
    """
    if not correct_by_benchmark:
        raise InvalidInput("weighted quality needs at least one benchmark", code="invalid_counts")
    num, den = Fraction(0), Fraction(0)
    for b in sorted(correct_by_benchmark):
        k, n = correct_by_benchmark[b]
        if n < 1 or not 0 <= k <= n:
            raise InvalidInput(f"benchmark {b}: need 0 ≤ correct ≤ total and total ≥ 1, got {k}/{n}",
                               code="invalid_counts")
        w = weights.get(b)
        if w is None or not math.isfinite(w) or w <= 0:
            raise InvalidInput(f"benchmark {b} needs a positive finite weight, got {w!r}", code="invalid_weights")
        num += Fraction(w) * Fraction(k, n)
        den += Fraction(w)
    return num / den


def non_inferiority(ci_low: float, margin: float) -> bool:
    """Non-inferior ⇔ ci_low > −margin (strict), margin ≥ 0 declared before the run (REP-7).

    The margin is in weighted-quality units (0.02 = two points of accuracy). Whether the verdict
    is formal (holdout) is decided by the caller, not here.
    """
    if not (math.isfinite(margin) and margin >= 0):
        raise InvalidInput(f"the non-inferiority margin must be finite and ≥ 0, got {margin!r}",
                           code="invalid_margin")
    return bool(ci_low > -margin)


def claim(ci: Sequence[float]) -> str:
    """`improvement` if lower > 0, `regression` if upper < 0, else `inconclusive` (it spans 0)."""
    if len(ci) != 2 or not ci[0] <= ci[1]:
        raise InvalidInput(f"an interval is [low, high] with low ≤ high, got {list(ci)!r}", code="invalid_interval")
    lo, hi = ci
    if lo > 0:
        return "improvement"
    if hi < 0:
        return "regression"
    return "inconclusive"
