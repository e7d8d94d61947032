"""A cell's stored grade (kind ``grade``): what sr-bench's grader decided, and the benchmark's
published rule applied to the same reply.

Written by the rules ``grade`` and ``grade-conversation`` (stages/grading/grade.py); a code benchmark's grade
(stages/grading/code.py, rule ``code-grade``) carries the sandbox receipt instead of ``published``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Grade(BaseModel):
    """What every stored grade holds."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, use_attribute_docstrings=True)
    kind: Literal["grade"] = "grade"
    """What this object is."""
    schema_: Literal[1] = Field(default=1, alias="schema")
    """The layout of this object."""
    grader: str
    """The grader and its version (for a judged benchmark: the pinned judge template)."""
    correct: bool
    """sr-bench's verdict: the reply is credited (never for a truncated reply)."""
    status: str
    """Why: correct, incorrect, unparsed, output_limit, judge_failed, judge_error, trial_error … (the
    benchmark's own statuses)."""
    extracted: Any
    """The answer read from the reply (a letter, a number, grids, a reward …; None: none)."""
    strict_format: bool | None
    """The reply used the exact required answer format (None: not applicable)."""
    details: dict[str, Any]
    """The benchmark's grading details (the judge's verdict and explanation, a trial's reward …)."""

    def stored(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


class GradeRecord(_Grade):
    """The stored grade of one cell (rules ``grade`` and ``grade-conversation``)."""

    published: dict[str, Any] | None
    """The benchmark's upstream rule applied to the same reply (None: the benchmark has none)."""


class CodeGradeRecord(_Grade):
    """The stored grade of a code cell, graded in the sandbox (rule ``code-grade``)."""

    sandbox: dict[str, Any] | None
    """The receipt of the sandbox the programs ran in (None: nothing was runnable, nothing ran)."""


StoredGrade = GradeRecord | CodeGradeRecord
"""A cell's stored grade, of either rule (what a report reads and a benchmark's figures take)."""


def read_grade(data: Mapping[str, Any]) -> StoredGrade:
    """A stored grade object's JSON as its model (a code grade carries ``sandbox``, the others ``published``)."""
    return (CodeGradeRecord if "sandbox" in data else GradeRecord).model_validate(data)
