"""The stored robustness measurement (kind ``robustness``, stages/derived/robustness.py, issue 43 item 4): how often
a router's choice flips when each prompt is perturbed, from an unperturbed preview run and perturbed preview runs of
the same plan (each asked the router's preview endpoint only: no inference). Definitions: docs/statistics.md."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from srbench.schemas.plan import Perturbation

_FROZEN = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, use_attribute_docstrings=True)


class FlipRate(BaseModel):
    """Flips of the selected model over the (case, perturbation) pairs both previews answered."""

    model_config = _FROZEN
    scope: str
    """A benchmark, a perturbation kind, or ``(all)``."""
    cases: int
    """Cases with at least one answered pair."""
    pairs: int
    """(case, perturbation) pairs where both previews named a model."""
    flips: int
    """Pairs whose selected model differs from the unperturbed preview's."""
    decision_flips: int
    """Pairs whose decision name differs."""
    unanswered: int
    """Pairs left out: a preview failed or named no model."""
    flip_rate: float | None
    """flips / pairs."""
    ci95: list[float] | None
    """Per benchmark and overall: Hoeffding on the per-case flip fractions (pairs of one case are not independent);
    per perturbation: Wilson (one pair per case)."""


class Flip(BaseModel):
    """One case whose selected model changed under one perturbation."""

    model_config = _FROZEN
    case_id: str
    """The case."""
    benchmark: str
    """Its benchmark."""
    perturbation: Perturbation
    """The perturbation."""
    original_model: str
    """The model chosen for the prompt as it is."""
    model: str
    """The model chosen for the perturbed prompt."""
    original_decision: str | None
    """The decision for the prompt as it is."""
    decision: str | None
    """The decision for the perturbed prompt."""


class TargetRobustness(BaseModel):
    """One router's robustness."""

    model_config = _FROZEN
    target_id: str
    """The router target."""
    overall: FlipRate
    """Over every pair."""
    benchmarks: list[FlipRate]
    """Per benchmark."""
    perturbations: list[FlipRate]
    """Per perturbation kind."""
    flips: list[Flip]
    """Every flip."""


class Robustness(BaseModel):
    """A router's decision flip rate under deterministic prompt perturbations (issue 43, item 4)."""

    model_config = _FROZEN
    kind: Literal["robustness"] = "robustness"
    """Always ``robustness``."""
    schema_: Literal[1] = Field(default=1, alias="schema")
    """Its schema version."""
    version: str
    """The sr-bench that made it."""
    robustness_version: str
    """The rule's version."""
    original_run: str | None
    """The unperturbed preview run."""
    perturbed_runs: dict[str, str | None]
    """Each perturbation kind's preview run."""
    cases: int
    """Cases of the plan."""
    seed: int
    """The plan's seed (it seeds the perturbations)."""
    targets: list[TargetRobustness]
    """Each router measured."""
    statistics: list[str]
    """Which rule gives each interval."""

    def dump(self) -> dict[str, JsonValue]:
        """The stored JSON."""
        return self.model_dump(mode="json", by_alias=True)
