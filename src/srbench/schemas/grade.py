"""A cell's stored grade (kind ``grade``): what sr-bench's grader decided, and the benchmark's
published rule applied to the same reply.

Written by the rules ``grade`` and ``grade-conversation`` (stages/grading/grade.py); a code benchmark's grade
(stages/grading/code.py, rule ``code-grade``) carries the sandbox receipt instead of ``published``.
`SavedCall` is what those rules read of a stored call record.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue


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
    extracted: JsonValue
    """The answer read from the reply (a letter, a number, grids, a reward …; None: none)."""
    strict_format: bool | None
    """The reply used the exact required answer format (None: not applicable)."""
    details: dict[str, JsonValue]
    """The benchmark's grading details (the judge's verdict and explanation, a trial's reward …)."""

    def stored(self) -> dict[str, JsonValue]:
        return self.model_dump(mode="json", by_alias=True)


class GradeRecord(_Grade):
    """The stored grade of one cell (rules ``grade`` and ``grade-conversation``)."""

    published: dict[str, JsonValue] | None
    """The benchmark's upstream rule applied to the same reply (None: the benchmark has none)."""


class CodeGradeRecord(_Grade):
    """The stored grade of a code cell, graded in the sandbox (rule ``code-grade``)."""

    sandbox: dict[str, JsonValue] | None
    """The receipt of the sandbox the programs ran in (None: nothing was runnable, nothing ran)."""


class SavedCall(BaseModel):
    """What grading reads of a stored call record (schemas/call.py `CallRecord`; a view: other fields ignored)."""

    model_config = ConfigDict(extra="ignore", frozen=True, use_attribute_docstrings=True)
    status: str | None = None
    """completed, or why not."""
    text: str | None = None
    """The visible final text."""
    finish_reason: str | None = None
    """The finish reason (``length``: the reply was truncated)."""

    def answer(self) -> str | None:
        """The text of a completed call, else None."""
        return self.text if self.status == "completed" else None


StoredGrade = GradeRecord | CodeGradeRecord
"""A cell's stored grade, of either rule (what a report reads and a benchmark's figures take)."""


def read_grade(data: Mapping[str, JsonValue]) -> StoredGrade:
    """A stored grade object's JSON as its model (a code grade carries ``sandbox``, the others ``published``)."""
    return (CodeGradeRecord if "sandbox" in data else GradeRecord).model_validate(data)
