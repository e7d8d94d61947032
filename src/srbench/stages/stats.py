"""Statistics used by reports (numpy; every formula stated here and tested by hand-computed values).

- Wilson score interval for k correct of n (z = 1.959963984540054, 95 %):
  centre = (p + z²/2n) / (1 + z²/n), half = z·√(p(1−p)/n + z²/4n²) / (1 + z²/n), clamped to [0, 1].
  With n = 0 the interval is unknown (None).
- Percentiles: linear interpolation at rank (m−1)·q of the sorted values (numpy's "linear").
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

Z95 = 1.959963984540054


def wilson(k: int, n: int, z: float = Z95) -> list[float] | None:
    if n <= 0:
        return None
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return [max(0.0, centre - half), min(1.0, centre + half)]


def percentile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    return float(np.percentile(np.asarray(values, dtype=float), q * 100, method="linear"))
