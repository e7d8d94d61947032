"""The benchmarks' own report figures (`Benchmark.metrics`) as models: what a benchmark row of the report
adds beside the accuracy every benchmark has (SciCode's sub-step rate, LiveCodeBench's pass@1 by difficulty,
HLE's calibration error, SimpleQA's F1). The report keeps them as the row's extra fields (``model_dump``).
Beside them, the views of a stored grade's details that the figures and the published rules read."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

_FIGURES = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)
_VIEW = ConfigDict(frozen=True, extra="ignore", use_attribute_docstrings=True)     # a view: other keys ignored


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


class StepVerdict(BaseModel):
    """One SciCode step's sandbox verdict, as its grade's details list it."""

    model_config = _VIEW
    verdict: str
    """The step's sandbox verdict."""


class CodeDetails(BaseModel):
    """What is read of a code grade's details (LiveCodeBench, SciCode: stages/grading/code.py stores them)."""

    model_config = _VIEW
    verdict: str | None = None
    """The cell's sandbox verdict (passed, failed, …)."""
    difficulty: str | None = None
    """LiveCodeBench: the problem's difficulty."""
    sub_steps_passed: int | None = None
    """SciCode: the scored steps that passed."""
    sub_steps_scored: int | None = None
    """SciCode: the scored steps."""
    steps: list[StepVerdict] | None = None
    """SciCode: each step's verdict."""
    test_data_sha256: str | None = None
    """SciCode: the SHA-256 of the test data the grade used."""


class ConfidenceDetails(BaseModel):
    """What HLE's calibration reads of a grade's details: the confidence the reply stated."""

    model_config = _VIEW
    confidence: float = 1.0
    """The stated confidence, in [0, 1] (absent: 1, as HLE's own rule counts an unstated one)."""


class TrialDetails(BaseModel):
    """What Terminal-Bench's figures read of a trial grade's details."""

    model_config = _VIEW
    reward: float | None = None
    """The trial's reward (None: no reward was computed)."""
    stop_reason: str | None = None
    """Why the agent stopped (None: not recorded)."""


class TauExtracted(BaseModel):
    """What τ³'s figures read of a grade's ``extracted`` (benchmarks/tau3.py grade_conversation writes it)."""

    model_config = _VIEW
    reward: float | None = None
    """The conversation's reward (None: not graded, e.g. an invalid conversation)."""
    termination: str | None = None
    """How the conversation ended."""
    domain: str | None = None
    """The task's domain."""


__all__ = ["CodeDetails", "ConfidenceDetails", "F1Metrics", "HleFigures", "LcbFigures", "SciCodeFigures",
           "SimpleQaFigures", "StepVerdict", "TauExtracted", "TrialDetails"]
