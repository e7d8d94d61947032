"""Wilson intervals by hand, and their exact endpoints at k = 0 and k = n."""

from __future__ import annotations

import math

import pytest

from srbench.stages.stats.basic import Z95, percentile, wilson


def test_wilson_by_hand():
    # k = 3, n = 10: p = 0.3, z² = 3.841458820694124, z²/n = 0.3841458820694124, denom = 1.3841458820694124
    # centre = (0.3 + 0.1920729410347062)/denom = 0.35550656; half = z·√(0.021 + z²/400)/denom = 0.24771529
    z2 = Z95 * Z95
    denom = 1 + z2 / 10
    centre = (0.3 + z2 / 20) / denom
    half = Z95 * math.sqrt(0.3 * 0.7 / 10 + z2 / 400) / denom
    assert centre == pytest.approx(0.35550656, abs=1e-8) and half == pytest.approx(0.24771529, abs=1e-8)
    assert wilson(3, 10) == pytest.approx([centre - half, centre + half], abs=1e-15)
    assert wilson(3, 10) == pytest.approx([0.10779127, 0.60322185], abs=1e-8)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 10, 15, 20, 100, 2000])
def test_wilson_endpoints_are_exact(n):
    # centre − half at k = 0 and centre + half at k = n are 0 and 1 in exact arithmetic; in floats they
    # were 5.55e-17 (n = 3) and 0.9999999999999999 (n = 10): the interval now says 0.0 and 1.0 exactly
    z2 = Z95 * Z95
    low0, high0 = wilson(0, n)
    lown, highn = wilson(n, n)
    assert low0 == 0.0 and highn == 1.0
    assert high0 == pytest.approx(z2 / (n + z2), rel=1e-12)     # = 2·centre at k = 0
    assert lown == pytest.approx(1 - z2 / (n + z2), rel=1e-12)
    assert 0.0 < high0 < 1.0 and 0.0 < lown < 1.0


def test_wilson_unknown_without_cases_and_percentiles():
    assert wilson(0, 0) is None
    assert percentile([], 0.5) is None
    # linear interpolation at rank (m − 1)·q: m = 4, q = 0.5 → rank 1.5 → (2 + 3)/2
    assert percentile([4.0, 1.0, 3.0, 2.0], 0.5) == 2.5
