"""A benchmark's entry of the suite's catalog (CAT-1): what `Benchmark.catalog_entry` returns and GET /catalog
lists (service/api/catalog.py), with its pinned source."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Kind = Literal["mcq", "grid", "judge", "code", "agent"]
"""How a benchmark is graded."""


class CatalogSource(BaseModel):
    """Where a benchmark's questions come from, pinned."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    url: str
    """The upstream source."""
    revision: str
    """The pinned revision."""
    files: list[str]
    """The files read from it."""
    gated: bool
    """Reading it needs an accepted licence (a token)."""


class CatalogPlugin(BaseModel):
    """Where a plugin benchmark comes from: the installed package exposing it (docs/benchmarks.md#plugins)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    package: str
    """The distribution that exposes it (as pip names it)."""
    version: str
    """That distribution's installed version."""
    entry_point: str
    """Its entry point in the ``srbench.benchmarks`` group (``name = module:attribute``)."""


class CatalogEntry(BaseModel):
    """One benchmark of the suite."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    id: str
    """Its id (a manifest's benchmark name)."""
    title: str
    """Its name for people."""
    capability: str
    """What it measures."""
    kind: Kind
    """How it is graded: mcq, grid, judge, code or agent."""
    weight: int
    """Its percent of the full sr-bench score (REP-4)."""
    profiles: dict[str, int]
    """Tasks per profile."""
    source: CatalogSource
    """Its pinned source."""
    grader_version: str | None
    """The grader's version (null: a judge's is pinned by the operator)."""
    adapter_version: str
    """The adapter's version."""
    available: bool
    """It can run on this installation."""
    needs_judge: bool
    """Its answers are graded by a judge model."""
    plugin: CatalogPlugin | None = Field(default=None, exclude_if=lambda v: v is None)
    """Set for a plugin benchmark (an installed package's, never counted in the nine-benchmark full score);
    absent for the nine."""
    reason: str | None = None
    """Why it is not available (absent when it is)."""
