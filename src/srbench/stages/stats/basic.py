"""Statistics used by reports (numpy; every formula stated here and tested by hand-computed values).

- Wilson score interval for k correct of n (z = 1.959963984540054, 95 %):
  centre = (p + z²/2n) / (1 + z²/n), half = z·√(p(1−p)/n + z²/4n²) / (1 + z²/n), clamped to [0, 1].
  The endpoints at the edges are exact: at k = 0, centre = half = (z²/2n)/(1 + z²/n), so the lower
  bound is 0.0 (not a float residue of centre − half); at k = n, centre + half = 1 likewise, so the
  upper bound is 1.0. With n = 0 the interval is unknown (None).
- Percentiles: linear interpolation at rank (m−1)·q of the sorted values (numpy's "linear").
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

Z95 = 1.959963984540054


def wilson(k: int, n: int, z: float = Z95) -> list[float] | None:
    """The Wilson score interval [low, high] for k of n, or None when n = 0."""
    if n <= 0:
        return None
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if k <= 0 else max(0.0, centre - half)
    high = 1.0 if k >= n else min(1.0, centre + half)
    return [low, high]


def percentile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    return float(np.percentile(np.asarray(values, dtype=float), q * 100, method="linear"))
