"""The catalog answer's parts (GET /catalog, CAT-1): each benchmark's entry as `benchmarks.catalog` lists it
(`Benchmark.catalog_entry`, a schemas/catalog.py `CatalogEntry` with its pinned `CatalogSource`), and the
per-profile task totals; and the setup check's (GET /setup: `service.store.setup_checks.checks`), one per benchmark."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from srbench.schemas.catalog import CatalogEntry, CatalogSource


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


class SetupSource(BaseModel):
    """A benchmark's pinned source on this host."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    url: str
    """The upstream source."""
    revision: str
    """The pinned revision."""
    cached: bool
    """That revision is in this host's source cache."""
    gated: bool
    """Reading it needs an accepted licence (a token)."""


class SetupSandbox(BaseModel):
    """The code-grading sandbox this host has (DEP-4/DEP-6)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    backend: str
    """docker or bwrap."""
    rootfs_digest: str
    """sha256 of the grading rootfs manifest."""
    image_id: str | None
    """The Docker image's id (null: bwrap)."""
    python_packages: dict[str, str]
    """The PyPI wheels installed in it, with their versions."""


class SetupCheck(BaseModel):
    """What one benchmark needs on the service host, and what is missing (check only)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    benchmark: str
    """The benchmark."""
    available: bool
    """This release implements it."""
    source: SetupSource
    """Its pinned source."""
    offline_mirror: bool | None = None
    """Its offline mirror package is installed (absent: it has none)."""
    judge: str | None = None
    """The judge target pinned in benchmark-options.json (absent: not a judged benchmark)."""
    sandbox: SetupSandbox | None = None
    """The grading sandbox (null: none here; absent: it needs none)."""
    missing: list[str]
    """What is missing, each a line a person can act on."""
    ready: bool
    """Nothing is missing."""


class SetupChecks(BaseModel):
    """What every benchmark needs on the service host, and what is missing (check only: nothing installed)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    version: str
    """The suite version."""
    home: str
    """This host's sr-bench cache directory (sources, sandbox)."""
    benchmarks: list[SetupCheck]
    """One check per benchmark."""
    note: str
    """What the check did not do."""


__all__ = ["CatalogEntry", "CatalogSource", "CatalogTotals", "SetupCheck", "SetupChecks", "SetupSandbox", "SetupSource"]
