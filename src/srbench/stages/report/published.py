"""The report's published-rule figures and its aggregation labels (pure helpers of stages/report/build.py).

Every benchmark row of a report carries sr-bench's score under its own rule (``accuracy``,
``sr_bench_rule``) and, beside it, ``published``: the benchmark's upstream rule applied to the same
stored answers (benchmarks/published.py), with how many answers the two rules grade differently.
``headline`` names the benchmark's published headline metric (F1 for SimpleQA, accuracy otherwise).
`AGGREGATION` says what micro and macro mean wherever the report uses them.
"""

from __future__ import annotations

from pydantic import JsonValue

from srbench.benchmarks import get as get_benchmark
from srbench.benchmarks.base import Benchmark
from srbench.benchmarks.published_grades import PublishedGrade, PublishedSummary
from srbench.schemas.dataset import Case
from srbench.schemas.grade import StoredGrade
from srbench.schemas.report import BenchmarkRow
from srbench.schemas.report_sections import Headline
from srbench.stages.grading.grade import grader_for

AGGREGATION = {
    "accuracy": "micro: correct cells / planned cells with every benchmark pooled, so a benchmark with more "
                "cases weighs more",
    "macro_accuracy": "macro: the mean of the per-benchmark accuracies weighted by the fixed REP-4 weights, "
                      "renormalised over the benchmarks present",
    "sr_bench_score": "macro over all nine benchmarks; null for a subset (CAT-2)",
    "quality": "compare's quality is the macro accuracy (exact fraction)",
    "benchmarks": "each row: sr-bench's own rule (accuracy, sr_bench_rule) and the upstream rule on the same "
                  "answers (published, a diagnostic; zero model calls)",
    "simpleqa-verified": "macro and paired statistics use SimpleQA accuracy (a 0/1 per case); its published "
                         "headline F1 is the row's headline",
}

PUBLISHED_NOTE = ("Benchmark rows show sr-bench's score under its own strict rules and, beside it, the figure "
                  "under each benchmark's published rule from the same stored answers (a diagnostic, no model "
                  "call); hold sr-bench's figures against published numbers only through the latter.")


def published_figure(benchmark: str, grader_version: str | None, answers: list[tuple[str, bool | None]],
                     grades: list[StoredGrade | None], cases: dict[str, Case]) -> dict[str, JsonValue]:
    """The published-rule summary of one target on one benchmark from its planned cells' (case id,
    sr-bench verdict) and grades; a planned cell without a graded answer is graded by the published
    rule as 'no reply'."""
    bench = get_benchmark(benchmark)
    grader = grader_for(benchmark, grader_version)
    cells: list[tuple[bool, PublishedGrade | None]] = []
    by_grade = type(bench).published_stored is Benchmark.published_stored    # it reads the grade alone
    seen: dict[int, PublishedGrade | None] = {}      # grades shared by rows (cells.py `from_memo`): read once
    for (case_id, correct), grade in zip(answers, grades, strict=True):
        case = cases[case_id]
        if grade is None:
            published = bench.published_grade(case, None, None, grader)
        elif by_grade and id(grade) in seen:
            published = seen[id(grade)]
        else:
            published = seen[id(grade)] = bench.published_stored(case, grade, grader)
        cells.append((bool(correct), published))
    return bench.published_summary(cells, grader).stored()


def headline(row: BenchmarkRow) -> Headline:
    """The benchmark's published headline metric for this row (SimpleQA: F1, accuracy beside it)."""
    simpleqa = (row.model_extra or {}).get("simpleqa")
    if isinstance(simpleqa, dict):
        return Headline(metric="f1", value=simpleqa.get("f1"), accuracy=row.accuracy,
                        note="SimpleQA's headline is F1 of accuracy and accuracy-given-attempted; the macro uses accuracy")
    return Headline(metric="accuracy", value=row.accuracy)


def published_limitations(bench_rows: list[BenchmarkRow]) -> list[str]:
    """One line per benchmark: how many answers the two rules grade differently, or why there is no
    published figure."""
    out: list[str] = []
    by_bench: dict[str, list[tuple[BenchmarkRow, PublishedSummary]]] = {}
    for r in bench_rows:
        if r.published is not None:
            by_bench.setdefault(r.benchmark, []).append((r, PublishedSummary.model_validate(r.published)))
    for b, rs in by_bench.items():
        pub = [p for _, p in rs]
        if pub[0].rule is None:
            out.append(f"{b}: no published-rule figure ({pub[0].reason}).")
            continue
        differ = sum(p.graded_differently or 0 for p in pub)
        total = sum(p.n for p in pub)
        per = ", ".join(f"{r.target_id} {p.graded_differently}" for r, p in rs)
        out.append(f"{b}: the published rule {pub[0].rule} grades {differ} of {total} answers differently "
                   f"from sr-bench's {rs[0][0].sr_bench_rule} ({per}).")
    return out
