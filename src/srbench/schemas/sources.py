"""Where a plan says each benchmark's cases came from (DS-1, DS-2): one label per benchmark, frozen in the
plan's dataset block and read by its report and comparison (stages/datasets/source_labels.py)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SourceLabel(BaseModel):
    """One benchmark's source as the plan freezes it."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    revision: str | None = Field(description="the revision its cases were read at (None: mixed revisions)")
    pinned: bool = Field(description="whether that is the registry's pinned revision, for every case")
    check: str | None = Field(default=None, description="how the bytes were held to the pin table "
                                                        "(source_labels.CHECKS; None: not checked or not pinned)")
