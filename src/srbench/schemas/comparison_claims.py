"""The claim blocks of a stored comparison (kind ``comparison``, schemas/comparison.py): each candidate's
intervals under both rules, the declared rule's claim and non-inferiority verdict, the primary-set claim,
planning and detectability of an inconclusive result, the baseline's selection among K singles, and how an
early stop shortened the compared cases. Written by stages/compare (claims.py, selection.py, declared.py,
notes.py); a comparison stores its dump with only the fields the writer set (`Comparison.dump`), so a block
validated from the writer's dict dumps to the same bytes (tests/stages/test_comparison_model.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from srbench.schemas.intervals import BettingInterval, HoeffdingInterval, PowerPlan
from srbench.schemas.wire import JSONObject

_FROZEN = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

Rule = Literal["hoeffding", "betting"]
Claim = Literal["improvement", "regression", "inconclusive", "blocked"]


class LabelledHoeffding(HoeffdingInterval):
    """The weighted Hoeffding interval as a comparison shows it."""

    rule: Literal["hoeffding"]
    """The rule."""
    label: str
    """What it is, in words (the seed's conservative interval when the baseline was selected)."""
    valid: bool
    """False after an early stop: a fixed-size interval at a size the data chose."""
    note: str | None
    """Why it is shown for reference only, if it is."""
    makes_claim: bool
    """This interval makes the claim."""


class LabelledBetting(BettingInterval):
    """The betting confidence sequence as a comparison shows it."""

    rule: Literal["betting"]
    """The rule."""
    label: str
    """What it is, in words."""
    valid: bool
    """Always true: anytime-valid."""
    makes_claim: bool
    """This interval makes the claim."""


class SingleBound(BaseModel):
    """The candidate's bounds against one of the K singles the baseline was chosen among."""

    model_config = _FROZEN
    target_id: str
    """The single target."""
    lower: float
    """The lower bound at α."""
    upper: float
    """The upper bound at α/K."""
    estimate: float
    """The point estimate."""


class AdjustedInterval(BaseModel):
    """The claim rule's interval adjusted for choosing the baseline as the strongest of K singles
    (stages/compare/selection.py)."""

    model_config = _FROZEN
    rule: Rule
    """The claim rule it adjusts."""
    method: str
    """The interval method."""
    selection_adjusted: Literal[True]
    """Marks the adjusted interval."""
    adjustment: str
    """How the selection is adjusted for."""
    k: int
    """K: the singles the baseline was chosen among."""
    alpha: float
    """The error level of the lower side."""
    upper_alpha_per_single: float
    """The error level of each single's upper side (α/K)."""
    estimand: str
    """What the interval covers."""
    estimate: float
    """The smallest point estimate over the singles."""
    ci: list[float]
    """[lower, upper]."""
    per_single: list[SingleBound]
    """Each single's bounds."""
    anytime_valid: bool
    """Valid at any data-chosen size (betting)."""
    valid: bool
    """Always true."""
    makes_claim: bool
    """Always true: it makes the claim."""
    label: str
    """What it is, in words."""
    note: str | None
    """A crossing of the two sides, if any."""


class IntervalsByRule(BaseModel):
    """Both rules' intervals, the declared one making the claim."""

    model_config = _FROZEN
    hoeffding: LabelledHoeffding
    """The weighted Hoeffding interval."""
    betting: LabelledBetting
    """The betting confidence sequence."""


class ClaimsByRule(BaseModel):
    """The claim each rule's interval would make."""

    model_config = _FROZEN
    hoeffding: Claim
    """Hoeffding's."""
    betting: Claim
    """Betting's."""
    intervals: Literal["unadjusted"] | None = Field(default=None, exclude_if=lambda v: v is None)
    """``unadjusted`` when the claim uses the selection-adjusted interval: these two are each rule's own interval
    against the chosen baseline alone, not adjusted for choosing it among K singles, and may differ from `claim`
    (absent: they are the intervals the claim rule uses)."""


class ClaimPlanning(BaseModel):
    """Sample-size planning of an inconclusive claim, at the observed and at the planned tie rate."""

    model_config = _FROZEN
    rule: Rule
    """The claim rule planned for."""
    observed_tie_rate: float
    """The share of tied pairs observed."""
    planned_tie_rate: float
    """The share the plan assumed."""
    at_observed_ties: PowerPlan
    """Planning at the observed tie rate."""
    at_planned_ties: PowerPlan
    """Planning at the planned tie rate."""


class NonInferiority(BaseModel):
    """The non-inferiority verdict (REP-7): lower bound > −margin, only on a declared margin and a formal run."""

    model_config = _FROZEN
    margin: float | None
    """The margin (None: none declared)."""
    non_inferior: bool | None
    """The verdict (None: not concluded)."""
    label: str | None
    """Formal, dev or post hoc."""
    rule: Rule
    """The rule whose lower bound decides."""
    reason: str
    """Why the verdict is what it is."""
    post_hoc_non_inferior: bool | None = None
    """What a margin given only at compare time would say (never a claim)."""
    interval_non_inferior: bool | None = None
    """What the interval alone says when the claim is blocked."""
    blocked: str | None = None
    """Why the verdict is blocked (an unconfirmed router configuration)."""


class PrimaryHoeffding(BaseModel):
    """The weighted Hoeffding interval over the primary benchmarks."""

    model_config = _FROZEN
    method: str
    """The interval method."""
    alpha: float
    """The error level."""
    radius: float
    """The half-width."""
    ci: list[float]
    """[lower, upper], clipped to [−1, 1]."""


PrimaryInterval = PrimaryHoeffding | BettingInterval | AdjustedInterval


class PrimaryClaim(BaseModel):
    """The claim on the plan's declared primary benchmarks (stages/compare/declared.py)."""

    model_config = _FROZEN
    benchmarks: list[str]
    """The declared primary benchmarks."""
    claim: Claim | None
    """The claim (None: a primary benchmark was not compared)."""
    reason: str | None = None
    """Why there is no claim."""
    delta: float | None = None
    """The renormalised weighted difference."""
    interval: PrimaryInterval | None = None
    """The interval that makes the claim."""
    non_inferior: bool | None = None
    """The non-inferiority verdict on the primary set (declared margin, formal run)."""
    claim_rule: Rule | None = None
    """The rule that makes the claim."""
    hoeffding_interval: PrimaryHoeffding | None = None
    """Hoeffding's interval, beside a betting claim."""
    unadjusted_interval: PrimaryHoeffding | BettingInterval | None = None
    """The interval before the selection adjustment."""
    interval_claim: Claim | None = None
    """What the interval alone says when the claim is blocked."""
    interval_non_inferior: bool | None = None
    """What the interval alone says about non-inferiority when it is blocked."""


class Detectability(BaseModel):
    """For an inconclusive Hoeffding claim: the cases that would make the observed difference detectable."""

    model_config = _FROZEN
    half_width: float
    """The interval's half-width now."""
    observed_delta: float
    """The observed difference."""
    alpha: float
    """The error level."""
    cases_now: dict[str, int]
    """Compared cases per benchmark."""
    rule: str
    """The rule and the assumption (equal n per benchmark)."""
    cases_per_benchmark: int | None
    """Cases per benchmark that would make it detectable (None: no difference observed)."""
    total_cases: int | None
    """Their total."""
    note: str
    """The figure in words."""


class SelectionSummary(BaseModel):
    """How the comparison treats the baseline's selection among K single targets."""

    model_config = _FROZEN
    k: int
    """K: the singles measured."""
    singles: list[str]
    """Their target ids."""
    rule: Rule
    """The claim rule."""
    adjusted: bool
    """The claim is adjusted (K > 1)."""
    adjustment: str
    """The adjustment, or why none is needed."""
    estimand: str | None
    """What the adjusted interval covers (None: K = 1)."""


class MissingEvidence(BaseModel):
    """A router in a report made before config-hash evidence was recorded: not a confirmation."""

    model_config = _FROZEN
    pinned: None
    """No pinned hash was recorded."""
    confirmed: Literal[False]
    """Never confirmed."""
    reason: str
    """Why."""


class EarlyStopShortening(BaseModel):
    """How an early stop shortened the compared cases."""

    model_config = _FROZEN
    baseline: JSONObject | None
    """The baseline run's early-stop record as its report stores it (any version), or None."""
    candidate: JSONObject | None
    """The candidate run's early-stop record as its report stores it (any version), or None."""
    compared_cases: int
    """Cases compared (the shorter run's prefix of the plan order)."""
    planned_cases: int
    """Cases planned."""
    order: str
    """The plan order the prefix is taken in."""
