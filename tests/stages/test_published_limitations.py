"""The report's published-rule limitation lines (stages/report/published.py `published_limitations`): read
from each benchmark row's stored published figure through the PublishedSummary model."""

from __future__ import annotations

from srbench.schemas.report import BenchmarkRow
from srbench.stages.report.published import published_limitations


def _row(target: str, benchmark: str, published: dict | None) -> BenchmarkRow:
    return BenchmarkRow(benchmark=benchmark, target_id=target, total=4, completed=4, sr_bench_rule="strict-v1",
                        published=published)


def test_each_benchmark_says_how_many_answers_the_rules_grade_differently() -> None:
    rows = [_row("a", "gpqa", {"rule": "gpqa-published", "n": 4, "score": 0.5, "graded_differently": 1}),
            _row("b", "gpqa", {"rule": "gpqa-published", "n": 4, "score": 0.25, "graded_differently": None}),
            _row("a", "hle", {"rule": None, "n": 4, "reason": "no published rule"}),
            _row("a", "arc", None)]
    assert published_limitations(rows) == [
        "gpqa: the published rule gpqa-published grades 1 of 8 answers differently from sr-bench's strict-v1 "
        "(a 1, b None).",
        "hle: no published-rule figure (no published rule)."]
