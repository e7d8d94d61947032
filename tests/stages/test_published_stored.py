"""The report's published figure for benchmarks whose stored grades carry no published grade (the
sandbox's code grades): derived from the grade's stored details (`Benchmark.published_stored`), an
ungraded planned cell scoring 0 — no regrade, no model call (issue 12)."""

from __future__ import annotations

from tests.benchmarks.fixtures import stored_grade

from srbench.schemas.dataset import Case, CaseMetadata, Message
from srbench.stages.report.published import published_figure


def _case(benchmark: str, i: int, answer) -> Case:
    return Case(id=f"{benchmark}/{i}", benchmark=benchmark, messages=[Message(role="user", content="q")],
                answer=answer, metadata=CaseMetadata(stratum="all"))


def test_livecodebench_figure_from_sandbox_grades() -> None:
    cases = {c.id: c for c in (_case("livecodebench", i, {}) for i in range(4))}
    rows = list(zip(cases, (True, False, False, False), strict=True))
    grades = [stored_grade(correct=True, status="correct", details={"verdict": "passed"}, sandbox=None),
              stored_grade(status="output_limit", details={"verdict": "passed"}, sandbox=None),  # cut, yet it passed
              stored_grade(status="incorrect", details={"verdict": "wrong_answer"}, sandbox=None),
              None]                                                                           # never graded
    fig = published_figure("livecodebench", None, rows, grades, cases)
    assert fig["rule"] == "livecodebench-pass-at-1-v1" and fig["score"] == 0.5 and fig["n"] == 4
    assert fig["published_higher"] == 1 and fig["published_lower"] == 0


def test_scicode_figure_counts_every_planned_step() -> None:
    steps = {"steps": [{"step_number": "1.1", "test_cases": ["a"]}, {"step_number": "1.2", "test_cases": ["b"]}]}
    cases = {c.id: c for c in (_case("scicode", i, steps) for i in range(2))}
    rows: list[tuple[str, bool | None]] = [(cid, False) for cid in cases]
    grades = [stored_grade(status="incorrect", sandbox=None,
                           details={"verdict": "wrong_answer", "sub_steps_passed": 1, "sub_steps_scored": 2}), None]
    fig = published_figure("scicode", None, rows, grades, cases)
    assert fig["rule"] == "scicode-main-problem-v1" and fig["score"] == 0.0
    assert (fig["sub_steps_passed"], fig["sub_steps_scored"], fig["sub_step_pass_rate"]) == (1, 4, 0.25)
