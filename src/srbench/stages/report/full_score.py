"""The full sr-bench score of one target (REP-4, CAT-2): all nine benchmarks complete, or nothing.

A benchmark is complete for a target when every planned cell of it completed and was graded. With all
nine complete the score is the weighted mean of the per-benchmark accuracies, the weights being the
registry's (percent, summing to 100), with a 95% weighted Hoeffding interval: the score is
Σ_b ω_b·mean_b with ω_b = w_b/Σw over independent cells in [0, 1], so
r = √(ln(2/α)/2 · Σ_b ω_b²/n_b) and CI = [max(0, s−r), min(1, s+r)]. It never has zero width
(Σ_b ω_b²/n_b ≥ 1/N > 0), so a small profile shows the wide interval it has.

Otherwise the score is null and the summary names the benchmarks that are missing from the plan and
those that are incomplete. A score whose cases came from sources other than the registry's pins (a
local copy at another revision, a synthetic sample, τ²-era data), or whose bytes at the pinned revision
were never checked against the pin table (`source_labels.for_full_score`), is still computed, but its
scope says which benchmarks are not at their pinned sources: it is then not an sr-bench 1.0 result.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction

from srbench.benchmarks import all_benchmarks
from srbench.schemas.report_sections import FullScore
from srbench.schemas.results import ResultRow

ALPHA = 0.05
METHOD = "weighted Hoeffding 95% over per-benchmark accuracies (registry weights)"


def score_interval(by_bench: Mapping[str, tuple[int, int]], weights: Mapping[str, float],
                   alpha: float = ALPHA) -> tuple[float, list[float]]:
    """(score, [low, high]) for `by_bench` = {benchmark: (correct, n)} with every n > 0."""
    total_w = sum((Fraction(weights[b]) for b in by_bench), Fraction(0))
    exact = sum((Fraction(weights[b]) / total_w * Fraction(k, n) for b, (k, n) in by_bench.items()), Fraction(0))
    spread = sum(((Fraction(weights[b]) / total_w) ** 2 / n for b, (_k, n) in by_bench.items()), Fraction(0))
    r = math.sqrt(math.log(2.0 / alpha) / 2.0 * float(spread))
    score = float(exact)
    return score, [max(0.0, score - r), min(1.0, score + r)]


def full_score(rows_by_bench: Mapping[str, list[ResultRow]],
               revisions: Mapping[str, set[str | None]] | None = None) -> FullScore:
    """The target summary's full-score fields from its rows grouped by benchmark."""
    registry = all_benchmarks()
    weights = {b.id: b.weight for b in registry}
    # the full score is the nine's: a plugin benchmark's rows never enter it (issue 39, item 7)
    rows_by_bench = {b: rs for b, rs in rows_by_bench.items() if b in weights}
    missing = [b.id for b in registry if b.id not in rows_by_bench]
    incomplete = sorted(b for b, rs in rows_by_bench.items()
                        if any(r.state != "completed" or r.correct is None for r in rs))
    if missing or incomplete:
        parts = ([f"missing: {', '.join(missing)}"] if missing else []) + \
            ([f"incomplete: {', '.join(incomplete)}"] if incomplete else [])
        head = "selected benchmark subset; renormalized fixed weights" if missing else "not every benchmark complete"
        return FullScore(sr_bench_score=None, sr_bench_score_ci95=None, score_method=METHOD,
                         missing_benchmarks=missing, incomplete_benchmarks=incomplete, unpinned_benchmarks=[],
                         score_scope=f"{head}, no full sr-bench score ({'; '.join(parts)})")
    counts = {b: (sum(bool(r.correct) for r in rs), len(rs)) for b, rs in rows_by_bench.items()}
    score, ci = score_interval(counts, weights)
    pins = {b.id: b.source.revision for b in registry}
    unpinned = sorted(b for b, revs in (revisions or {}).items() if b in pins and revs != {pins[b]})
    return FullScore(sr_bench_score=score, sr_bench_score_ci95=ci, score_method=METHOD, missing_benchmarks=missing,
                     incomplete_benchmarks=incomplete, unpinned_benchmarks=unpinned,
                     score_scope="full sr-bench 1.0" if not unpinned else
                     f"all nine benchmarks, but not at their pinned sources ({', '.join(unpinned)}): not an "
                     "sr-bench 1.0 result")
