"""What the statistics stages compute (stages/stats): paired intervals (Hoeffding, betting, the diagnostic
bootstrap), an early-stop decision, and sample-size planning. A comparison stores them inside its claim
blocks (stages/compare/claims.py dumps them there); the planning answer carries `Planning`."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from srbench.schemas.plan import EarlyStop
from srbench.schemas.plan import Planning as PlanningAssumptions

_FROZEN = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class HoeffdingStratum(BaseModel):
    """One benchmark's part of a weighted Hoeffding interval."""

    model_config = _FROZEN
    benchmark: str
    """The benchmark."""
    n: int
    """Its paired differences."""
    weight: float
    """Its weight, renormalised over the benchmarks present."""
    mean_diff: float
    """The mean of its paired differences."""


class HoeffdingInterval(BaseModel):
    """The primary paired interval (stages/stats/paired.py `weighted_hoeffding`)."""

    model_config = _FROZEN
    method: str
    """``weighted-paired-hoeffding``."""
    alpha: float
    """The error level."""
    confidence: float
    """1 − alpha."""
    estimate: float
    """Δ = Σ_b w_b·mean(G_b)."""
    radius: float
    """r = √(2·ln(2/α)·Σ_b w_b²/n_b)."""
    ci: list[float]
    """[max(−1, Δ−r), min(1, Δ+r)]."""
    n: int
    """Paired differences in all."""
    strata: list[HoeffdingStratum]
    """Each benchmark's part."""


class BootstrapInterval(BaseModel):
    """The diagnostic stratified percentile bootstrap (stages/stats/paired.py `stratified_bootstrap`)."""

    model_config = _FROZEN
    method: str
    """``stratified-bootstrap``."""
    label: Literal["diagnostic"]
    """Always diagnostic."""
    diagnostic: Literal[True]
    """It never makes a claim."""
    alpha: float
    """The error level."""
    seed: int
    """The generator's seed (a seed fixes the result)."""
    draws: int
    """Resamples drawn."""
    quantile_method: str
    """numpy's quantile method."""
    estimate: float
    """The weighted mean difference."""
    ci: list[float] | None
    """[low, high]; None when every resample gave the same value."""
    degenerate: bool
    """Whether every resample gave the same value."""
    degenerate_at: float | None
    """That value."""
    note: str | None
    """Why there is no interval."""


class BettingInterval(BaseModel):
    """The anytime-valid betting interval (stages/stats/betting.py `betting_interval`)."""

    model_config = _FROZEN
    method: str
    """The betting method's name."""
    anytime_valid: Literal[True]
    """Valid at every look."""
    alpha: float
    """The error level."""
    confidence: float
    """1 − alpha."""
    order: str
    """The analysis order the cases are read in."""
    theta_max: float
    """The largest bet fraction."""
    estimate: float
    """The weighted mean difference over the benchmarks seen."""
    ci: list[float]
    """The running intersection over every prefix (the last interval should it be empty)."""
    ci_last: list[float]
    """The interval at the last prefix."""
    n: int
    """Paired differences read."""
    planned: int
    """Planned cases of the design."""
    discordant: int
    """Differences that are not 0."""
    mean_bet: float
    """The mean bet."""
    note: str | None
    """Why `ci` is the last interval, if it is."""


class StopDecision(BaseModel):
    """The early-stop decision at one look (stages/stats/stopping.py `decide`)."""

    model_config = _FROZEN
    state: Literal["settled", "unreachable", "continue"]
    """Settled, unreachable (no outcome can settle it), or go on."""
    verdict: Literal["improvement", "regression", "non_inferior", "inferior", "inconclusive"] | None
    """What is settled; None while it goes on."""
    question: Literal["sign", "non_inferiority"]
    """The sign of Δ, or non-inferiority at the margin."""
    threshold: float
    """0, or −margin."""
    n: int
    """Paired differences read."""
    lower: float
    """The running lower bound."""
    upper: float
    """The running upper bound."""
    best_lower: float
    """The highest lower bound the remaining cases could reach."""
    worst_upper: float
    """The lowest upper bound the remaining cases could reach."""


class CasesNeeded(BaseModel):
    """The smallest common scale of the planned sizes with enough power (stages/stats/power.py `cases_needed`)."""

    model_config = _FROZEN
    scale: float
    """k: every benchmark's size multiplied by it (rounded up)."""
    per_benchmark: dict[str, int]
    """The sizes at that scale."""
    total: int
    """Their sum."""
    power: float
    """The power at those sizes."""


class SizesNeeded(BaseModel):
    """Per-benchmark sizes that reach the wanted power (stages/stats/sizing.py `sizes_needed`): each
    benchmark sized by its weight (and, with per-case costs, the square root of its cost), none above the
    cases its source holds, instead of one common scale of the planned sizes."""

    model_config = _FROZEN
    basis: Literal["fewest cases", "least upper cost"]
    """What the sizes minimise: the number of cases, or the plan's upper cost estimate (every benchmark's
    upper cost per case known)."""
    reached: bool
    """The sizes reach the wanted power; false: no sizes within the available cases (10⁴ times the planned
    total where unknown) do, and `per_benchmark` is that largest size with the power it gives."""
    per_benchmark: dict[str, int]
    """The cases each benchmark needs."""
    total: int
    """Their sum."""
    power: float
    """The power at those sizes."""
    upper_cost_usd: float | None
    """The upper cost estimate of those sizes (basis least upper cost), else None."""
    available: dict[str, int]
    """The cases each benchmark's pinned source holds at most (benchmarks with a known count)."""
    at_available: list[str]
    """Benchmarks sized at all their available cases (more would help; the others make up for it)."""


class PowerPlan(BaseModel):
    """Planning for one claim rule at the planned sizes (stages/stats/power.py `power_plan`). `singles` and
    `model` are set only for a plan whose claim adjusts for the baseline's selection (`dump`)."""

    model_config = _FROZEN
    rule: str
    """The claim rule."""
    method: str
    """Its interval's method."""
    tie_rate: float
    """The assumed tie rate."""
    power: float
    """The power asked for."""
    alpha: float
    """The error level."""
    radius_at_zero: float
    """The interval's radius at Δ = 0."""
    detectable_effect: float | None
    """The smallest Δ detected with that power."""
    effect: float
    """The effect the plan assumes."""
    power_at_effect: float | None
    """The power at that effect."""
    needed_for_effect: CasesNeeded | None
    """The sizes needed to detect it."""
    margin: float | None
    """The non-inferiority margin."""
    power_non_inferiority: float | None
    """The power to show non-inferiority at Δ = 0."""
    needed_for_margin: CasesNeeded | None
    """The sizes needed for that."""
    sized_for_effect: SizesNeeded | None = Field(default=None, exclude_if=lambda v: v is None)
    """Per-benchmark sizes that detect the effect (the planning of a live plan; absent in a comparison's)."""
    sized_for_margin: SizesNeeded | None = Field(default=None, exclude_if=lambda v: v is None)
    """Per-benchmark sizes that show non-inferiority (planning of a live plan with a margin only)."""
    singles: int | None = None
    """K: the single targets the baseline is chosen among."""
    model: str | None = None
    """How K enters the planning."""

    def dump(self) -> dict[str, JsonValue]:
        """The JSON form: `singles` and `model` only where set."""
        return self.model_dump(mode="json", exclude_unset=True)


class Planning(BaseModel):
    """What `sr-bench plan` prints and the Dashboard's review shows for a live plan (stages/stats/power.py
    `planning_for`): the declared claim rule's planning first, the other beside it. `singles` is set only
    for a plan whose claim adjusts for the baseline's selection (`dump`)."""

    model_config = _FROZEN
    claim_rule: Literal["hoeffding", "betting"]
    """The plan's declared claim rule."""
    assumptions: dict[str, float | str]
    """The plan's planning assumptions (effect, tie rate, power) and the model they assume."""
    counts: dict[str, int]
    """Planned cases per benchmark."""
    margin: float | None
    """The declared non-inferiority margin."""
    declared: PowerPlan
    """Planning for the declared rule."""
    other: PowerPlan
    """Planning for the other rule."""
    detectable_by_tie_rate: list[dict[str, float | None]]
    """The detectable effect of each rule (keyed by its name) at a few tie rates (`tie_rate`)."""
    early_stop: EarlyStop | None
    """The plan's early-stop block (schemas/plan.py `EarlyStop`, every default filled in), or None."""
    singles: int | None = None
    """K: the single targets the baseline is chosen among (a plan that adjusts for it)."""

    def dump(self) -> dict[str, JsonValue]:
        """The JSON form: each rule's planning as `PowerPlan.dump`, `singles` only where set."""
        out = self.model_dump(mode="json")
        out["declared"], out["other"] = self.declared.dump(), self.other.dump()
        if "singles" not in self.model_fields_set:
            del out["singles"]
        return out


class StatisticsBlock(BaseModel):
    """A plan's statistics block with every default filled in (stages/stats/stopping.py `statistics_of`); a
    comparison stores its `dump` as its ``statistics``."""

    model_config = _FROZEN
    claim_rule: Literal["hoeffding", "betting"]
    """The rule whose interval makes the claims."""
    margin: float | None
    """The declared non-inferiority margin."""
    primary_benchmarks: list[str] | None
    """The declared primary benchmarks, if any."""
    planning: PlanningAssumptions
    """The planning assumptions (effect, tie rate, power)."""
    early_stop: EarlyStop | None
    """Early stopping, when declared."""
    baseline_selection: Literal["ignored", "adjusted"] = "ignored"
    """Whether the claim adjusts for the baseline being chosen among the singles."""

    def dump(self) -> dict[str, JsonValue]:
        """The JSON form: `baseline_selection` only when adjusted, so a plan from before the field reads (and
        compares) as it did."""
        primary: list[JsonValue] | None = None if self.primary_benchmarks is None else [*self.primary_benchmarks]
        return {"claim_rule": self.claim_rule, "margin": self.margin, "primary_benchmarks": primary,
                "planning": self.planning.model_dump(mode="json"),
                "early_stop": None if self.early_stop is None else self.early_stop.model_dump(mode="json"),
                **({"baseline_selection": "adjusted"} if self.baseline_selection == "adjusted" else {})}
