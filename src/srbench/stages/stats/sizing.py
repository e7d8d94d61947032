"""Per-benchmark sample sizes: the cases each benchmark needs for the wanted power, instead of one
common scale of the planned sizes (`power.cases_needed`, whose power steps with the smallest heavily
weighted benchmark: it sets c_max and carries w_b²/n_b of S alone).

Notation as in `power`: w_b = W_b/ΣW, n_b the cases of benchmark b, S = Σ_b w_b²/n_b, c_max = max_b
w_b/n_b; A_b the cases b's pinned source holds (∞ when unknown), κ_b its upper cost per case (1 when
the basis is the fewest cases).

Rule. Over a total cost C = Σ_b κ_b·n_b, S is smallest at n_b ∝ w_b/√κ_b (Lagrange: w_b²/n_b² = ν·κ_b),
and with caps at n_b = min(A_b, k·w_b/√κ_b) (the capped benchmarks at their cap, the rest filled in
proportion: KKT). For the fewest cases (κ_b = 1) this is n_b ∝ w_b, where every case carries the same
c_b = 1/N, which also gives the betting interval its smallest c_max and equal bets. So

    n_b(k) = min(A_b, max(1, ⌈k·w_b/√κ_b⌉))

and k is the smallest (bisection) whose sizes reach the wanted power by `power.power_at` (the same
claim model: rule, K singles, running intersection). Then each benchmark in turn (dearest per case
first) is lowered to the fewest cases that still keep that power (bisection; rounding leaves a little).
No sizes reach it when even every benchmark at its A_b does not (or 10⁴ times the planned total when
some A_b is unknown): the answer then says so (`reached` false) and gives those largest sizes' power.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from srbench.errors import InvalidInput
from srbench.schemas.intervals import SizesNeeded
from srbench.stages.stats.power import ALPHA, MAX_SCALE, power_at

__all__ = ["sizes_needed"]


def _inputs(counts: Mapping[str, int | float], weights: Mapping[str, float], available: Mapping[str, int],
            cost: Mapping[str, float] | None) -> tuple[list[str], dict[str, float], dict[str, float]]:
    names = sorted(counts)
    for b, a in available.items():
        if b in counts and not (isinstance(a, int) and a >= 1):
            raise InvalidInput(f"benchmark {b}: its available cases must be a whole number ≥ 1, got {a!r}",
                               code="invalid_counts")
    kappa = {b: 1.0 for b in names}
    if cost is not None:
        for b in names:
            c = cost.get(b)
            if c is None or not math.isfinite(c) or c <= 0:
                raise InvalidInput(f"benchmark {b} needs a positive upper cost per case to size by cost, got {c!r}",
                                   code="invalid_planning")
            kappa[b] = float(c)
    total_w = sum(float(weights.get(b) or 0.0) for b in names)
    shape = {b: float(weights.get(b) or 0.0) / total_w / math.sqrt(kappa[b]) if total_w > 0 else 0.0 for b in names}
    return names, shape, kappa


def sizes_needed(rule: str, counts: Mapping[str, int | float], weights: Mapping[str, float], tie_rate: float,
                 delta: float, threshold: float = 0.0, power: float = 0.8, alpha: float = ALPHA,
                 singles: int | None = None, available: Mapping[str, int] | None = None,
                 cost: Mapping[str, float] | None = None) -> SizesNeeded:
    """The per-benchmark sizes of the module docstring for the benchmarks of `counts` (the planned sizes:
    they name the benchmarks and bound the search). When no sizes within the caps reach `power`, `reached`
    is false and the sizes are the largest searched (every benchmark at its cap, 10⁴ times the planned total
    where no cap is known) with the power they give."""
    power_at(rule, counts, weights, tie_rate, delta, threshold, alpha, singles)      # checks every input
    caps = dict((available or {}).items())
    names, shape, kappa = _inputs(counts, weights, caps, cost)
    caps = {b: a for b, a in caps.items() if b in counts}

    def sizes(k: float) -> dict[str, int]:
        out = {b: max(1, math.ceil(k * shape[b] - 1e-9)) for b in names}
        return {b: min(n, caps.get(b, n)) for b, n in out.items()}

    def power_of(n: Mapping[str, int]) -> float:
        return power_at(rule, n, weights, tie_rate, delta, threshold, alpha, singles)

    def ok(n: Mapping[str, int]) -> bool:
        return power_of(n) >= power

    planned = sum(float(counts[b]) for b in names)
    if len(caps) == len(names):
        hi = max(caps[b] / shape[b] for b in names)
    else:
        hi = MAX_SCALE * planned / sum(shape.values())
    if not ok(sizes(hi)):
        return _answer(sizes(hi), caps, kappa, cost is not None, False, power_of)
    lo = 0.5 / max(shape.values())
    if ok(sizes(lo)):
        hi = lo
    for _ in range(100):
        if sizes(lo) == sizes(hi) or hi / lo < 1 + 1e-9:
            break
        mid = math.sqrt(lo * hi)
        if ok(sizes(mid)):
            hi = mid
        else:
            lo = mid
    best = sizes(hi)
    for b in sorted(names, key=lambda x: (-kappa[x], x)):
        low, high = 0, best[b]                      # high keeps the power; find the fewest that do
        while high - low > 1:
            mid = (low + high) // 2
            if mid >= 1 and ok({**best, b: mid}):
                high = mid
            else:
                low = mid
        best[b] = high
    return _answer(best, caps, kappa, cost is not None, True, power_of)


def _answer(sizes: dict[str, int], caps: Mapping[str, int], kappa: Mapping[str, float], by_cost: bool, reached: bool,
            power_of: Callable[[Mapping[str, int]], float]) -> SizesNeeded:
    return SizesNeeded(
        basis="least upper cost" if by_cost else "fewest cases", reached=reached,
        per_benchmark=dict(sorted(sizes.items())), total=sum(sizes.values()), power=power_of(sizes),
        upper_cost_usd=sum(kappa[b] * n for b, n in sizes.items()) if by_cost else None,
        available=dict(sorted(caps.items())), at_available=sorted(b for b, n in sizes.items() if b in caps and n >= caps[b]))
