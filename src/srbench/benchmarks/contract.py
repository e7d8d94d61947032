"""The plain values of the benchmark adapter contract (base.py): where a benchmark's data lives
(`SourcePin`) and the outcome of grading one answer (`Grade`). A leaf module, so that the source
reader and the graders need not import the contract itself."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, JsonValue


@dataclass(frozen=True)
class SourcePin:
    """Where the upstream data lives and the immutable revision sr-bench reads."""

    url: str                       # e.g. https://huggingface.co/datasets/TIGER-Lab/MMLU-Pro
    revision: str                  # commit sha
    files: tuple[str, ...]         # paths inside the repository (globs allowed, e.g. data/evaluation/*.json)
    license_url: str | None = None
    access_note: str | None = None
    gated: bool = False
    # sha256 over every pinned file's (normalized) content, see `sources.content_sha256`; None: unknown
    content_sha256: str | None = None


class Grade(BaseModel):
    """Outcome of grading one visible final answer (or a stored conversation); the grade rules store it as a
    `GradeRecord` (schemas/grade.py). Not frozen: the grade rule withdraws credit from a truncated reply."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    correct: bool
    """The reply is credited under sr-bench's rule."""
    status: str
    """Why: correct, incorrect, unparsed, invalid, output_limit, trial_error … (the benchmark's own statuses)."""
    extracted: JsonValue = None
    """The answer read from the reply (a letter, a number, grids, a reward …; None: none)."""
    strict_format: bool | None = None
    """The reply used the exact required answer format (None: not applicable)."""
    details: dict[str, JsonValue] = Field(default_factory=dict)
    """The benchmark's grading details (JSON)."""
