"""The benchmarks' own report figures (`Benchmark.metrics`) as models: what a benchmark row of the report
adds beside the accuracy every benchmark has (SciCode's sub-step rate, LiveCodeBench's pass@1 by difficulty,
HLE's calibration error, SimpleQA's F1). The report keeps them as the row's extra fields (``model_dump``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

_FIGURES = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class SciCodeFigures(BaseModel):
    """SciCode's figures over one target's planned problems (the row's ``scicode`` field)."""

    model_config = _FIGURES
    main_problem_resolve_rate: float | None
    """Problems resolved (every scored step passed) over the planned ones (None: none planned)."""
    problems_resolved: int
    """Problems resolved."""
    problems_graded: int
    """Problems with a grade."""
    problems_planned: int
    """Problems planned."""
    sub_step_pass_rate: float | None
    """Scored steps passed over scored steps of the graded problems (None: none scored)."""
    sub_steps_passed: int
    """Scored steps that passed."""
    sub_steps_scored: int
    """Scored steps of the graded problems."""
    step_verdicts: dict[str, int]
    """How many steps got each sandbox verdict."""
    test_data_sha256: list[str]
    """The SHA-256s of the test data the grades used."""
    test_data_pinned: bool
    """Every grade used the pinned test data."""
    protocol: str
    """The conversation protocol."""
    samples_per_problem: int
    """Samples per problem (1)."""


class LcbFigures(BaseModel):
    """LiveCodeBench's figures over one target's planned problems (the row's ``livecodebench`` field)."""

    model_config = _FIGURES
    pass_at_1: float | None
    """Problems passed over the planned ones (None: none planned)."""
    pass_at_1_by_difficulty: dict[str, float]
    """pass@1 over the graded problems of each difficulty."""
    verdicts: dict[str, int]
    """How many problems got each sandbox verdict."""
    samples_per_problem: int
    """Samples per problem (1)."""


class HleFigures(BaseModel):
    """HLE's calibration figure (the row's own fields)."""

    model_config = _FIGURES
    calibration_error: float | None
    """RMS calibration error of the stated confidences (None below 100 graded answers)."""
    calibration_note: str
    """How it is computed."""


class F1Metrics(BaseModel):
    """SimpleQA's metrics over judge verdicts (`simpleqa_verified.f1_metrics`)."""

    model_config = _FIGURES
    n: int
    """Verdicts counted."""
    correct: float
    """Share correct."""
    incorrect: float
    """Share incorrect."""
    not_attempted: float
    """Share not attempted."""
    correct_given_attempted: float
    """Correct over correct + incorrect (0 when nothing was attempted)."""
    f1: float
    """The harmonic mean of `correct` and `correct_given_attempted` (the headline)."""


class SimpleQaFigures(BaseModel):
    """SimpleQA's figures (the row's own fields)."""

    model_config = _FIGURES
    simpleqa: F1Metrics
    """The metrics over every planned cell."""
    simpleqa_note: str
    """How cells without a verdict count."""


__all__ = ["F1Metrics", "HleFigures", "LcbFigures", "SciCodeFigures", "SimpleQaFigures"]
