"""The catalog answer's parts (GET /catalog, CAT-1): each benchmark's entry as `benchmarks.catalog` lists it
(`Benchmark.catalog_entry`), its pinned source, and the per-profile task totals."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from srbench.benchmarks.base import Kind


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
    reason: str | None = None
    """Why it is not available (absent when it is)."""


class CatalogTotals(BaseModel):
    """Tasks per profile over every benchmark, and over the available ones."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    smoke: int
    """Tasks in the smoke profile."""
    quick: int
    """Tasks in the quick profile."""
    standard: int
    """Tasks in the standard profile."""
    available: dict[str, int]
    """The same per profile, over the available benchmarks only."""
