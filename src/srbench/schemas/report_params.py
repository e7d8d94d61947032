"""The report rule's parameter objects (stages/report/rule.py): `ReportRequest`, what one report build
takes besides the run's cells, and `ReportParams`, what the rule's key and action-cache entry hold
beside its input digests. `ReportParams` dumps to the params as they were when they travelled as a
tuple and a dict, so no action-cache key changed when they became a model (issue 26, item 6)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, JsonValue, field_serializer

from srbench.schemas.cell import RunStatus
from srbench.schemas.early_stop import EarlyStopRecord
from srbench.schemas.recipe import RecipeSummary

_FROZEN = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class ProbeEvidence(BaseModel):
    """What one probe of a MoM target's pinned config_hash showed (the run's latest ``config_hash_checked``
    event of that phase, service/runs/run_checks.py)."""

    model_config = _FROZEN
    evidence: Literal["confirmed", "mismatch", "missing", "unavailable"]
    """What the probe shows (an event from before it was recorded: confirmed when the hashes match)."""
    seen: str | None
    """The hash the router reported (null: none)."""
    probe: str | None
    """How the probe went (answered, an error class, or no preview_url)."""


ConfigProbes = dict[str, dict[str, ProbeEvidence]]
"""Per MoM target, per phase (before / after the run): the probe's evidence."""


class GradingCode(BaseModel):
    """The installed grading code a report depends on (stages/report/rule.py `installed_code`): part of the
    report rule's params, so a change rebuilds the report and its rows."""

    model_config = _FROZEN
    grader_versions: dict[str, str]
    """The installed grader version per benchmark."""
    judge_templates: dict[str, dict[str, str]]
    """The installed judge prompt templates' sha256 per judged benchmark and grader."""
    published_rules: dict[str, str | None]
    """The installed published rule per benchmark (benchmarks/published.py)."""


class ReportDigests(BaseModel):
    """The report rule's input digests besides the run's cells (which travel beside them as they are: a big
    run's map of cells is not validated field by field)."""

    model_config = _FROZEN
    plan: str
    """Digest of the run's frozen plan."""
    correction: str | None = None
    """Digest of the usage correction the report reads (absent: none)."""
    prices: str | None = None
    """Digest of the price correction the report reads (absent: none)."""

    @classmethod
    def of(cls, inputs: Mapping[str, object]) -> ReportDigests:
        """The digests of the rule's inputs (every input but the cells)."""
        return cls.model_validate({k: v for k, v in inputs.items() if k != "cells"})


class ReportRequest(BaseModel):
    """Everything a report build reads besides the run's cells (which are passed beside it: a big run's
    map of cells is not validated field by field)."""

    model_config = _FROZEN
    run_id: str
    """The run the report is of."""
    plan: str
    """Digest of the run's frozen plan."""
    status: RunStatus
    """The run's status when the report is built (a running run's report says "figures so far")."""
    wall_time_s: float | None = None
    """Seconds from the run's start to its end (or to now, while it runs); None before it started."""
    correction: str | None = None
    """Digest of the latest usage correction appended to the run, or None."""
    correction_at: float | None = None
    """When that correction was appended (the journal's ref), or None."""
    price_correction: str | None = None
    """Digest of the latest price correction of the run, or None."""
    config_probes: ConfigProbes | None = None
    """The run's config-hash probe evidence per router target and phase (stages/compare/evidence.py)."""
    early_stop: EarlyStopRecord | None = None
    """The run's early-stop record (the run's `extra.early_stop`), or None."""
    recipes: dict[str, RecipeSummary] | None = None
    """The run's router recipe captures per router target (service/runs/recipes.py `summary`, UI-7)."""


class ReportParams(BaseModel):
    """The report rule's params: the request's scalar parts and the installed grading code."""

    model_config = _FROZEN
    run_id: str
    """The run the report is of."""
    status: RunStatus
    """The run's status when the report is built."""
    wall_time_s: float | None
    """Seconds the run took so far, or None."""
    early_stop: EarlyStopRecord | None
    """The run's early-stop record, or None (dumped with the fields it has, as stored)."""
    config_probes: ConfigProbes
    """Config-hash probe evidence per router target ({} without any)."""
    recipes: dict[str, RecipeSummary]
    """Router recipe captures per router target ({} without any)."""
    correction_at: float | None
    """When the usage correction the report reads was appended, or None."""
    grader_versions: dict[str, str]
    """The installed grader version per benchmark."""
    judge_templates: dict[str, dict[str, str]]
    """The installed judge prompt templates' sha256 per judged benchmark and grader."""
    published_rules: dict[str, str | None]
    """The installed published rule per benchmark (benchmarks/published.py)."""

    @field_serializer("early_stop")
    def _stop(self, stop: EarlyStopRecord | None) -> dict[str, JsonValue] | None:
        """The record's fields as stored (the params dumped before it was a model held that dict)."""
        return None if stop is None else stop.dump()
