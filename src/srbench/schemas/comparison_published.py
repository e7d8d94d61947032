"""A comparison's published side-by-side rows (stages/compare/notes.py): one target's benchmark score by
sr-bench's grading rule beside the published (upstream leaderboard) rule's figure, for a candidate and the
baseline. Part of the stored comparison (schemas/comparison.py)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

Number = int | float


def _config() -> ConfigDict:
    return ConfigDict(extra="forbid", frozen=True, populate_by_name=True, use_attribute_docstrings=True)


class PublishedRules(BaseModel):
    """One target's benchmark score by sr-bench's rule beside the published rule's figure."""

    model_config = _config()
    sr_bench_rule: str | None
    """sr-bench's grading rule."""
    sr_bench_accuracy: Number | None
    """sr-bench's accuracy."""
    published_rule: str | None
    """The published rule."""
    published_metric: str | None
    """The published metric."""
    published: Number | None
    """The published rule's figure."""
    graded_differently: int | None
    """Cells whose published score differs from sr-bench's verdict."""
    reason: str | None
    """Why a figure is missing."""
    note: str | None
    """A note on the published rule."""


class PublishedRow(BaseModel):
    """Both rules for a candidate and the baseline on one benchmark."""

    model_config = _config()
    candidate: str
    """The candidate target."""
    benchmark: str
    """The benchmark."""
    candidate_rules: PublishedRules
    """The candidate's figures."""
    baseline_rules: PublishedRules | None
    """The baseline target's figures (None: not in the baseline report)."""
