"""The claims of one paired comparison: both intervals, labelled; the declared rule's claim and
non-inferiority verdict; and, for an inconclusive result, what the sample could detect.

- `hoeffding` (`paired.weighted_hoeffding`, REP-6's rule and the default): valid at the planned size;
  after an early stop it is shown for reference only (a fixed-size interval at a size chosen from
  the data is not valid).
- `betting` (`betting.betting_interval`): anytime-valid and tighter when pairs tie.
The plan's `statistics.claim_rule` names the rule that makes the claim (`claim`), the
non-inferiority verdict (lower bound > −margin, REP-7) and the planning; the other rule's interval
and claim are shown beside it (`intervals`, `claims_by_rule`). An inconclusive claim carries
`planning`: `power.power_plan` at the planned sizes, once at the observed tie rate and once at the
plan's assumed one; for a new plan each also holds the per-benchmark sizes that reach the power
(`sized_for_effect`, `sized_for_margin`: `stats.planning.sized_plan`, the fewest cases, capped at the
cases each pinned source holds), as `sr-bench plan` prints them, instead of one scale of every benchmark.

A plan that records `baseline_selection: adjusted` (every new plan) also gets `selection` (K and the
adjustment); when the baseline was chosen among K > 1 singles, `interval` is the selection-adjusted
interval of the claim rule (`stages/selection`), which makes the claim and the non-inferiority
verdict; the rule's plain interval against the chosen baseline stays in `intervals`, and Hoeffding is
labelled as the seed's conservative interval. Planning then plans that claim (running intersection, K).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from srbench.errors import InvalidInput
from srbench.schemas.comparison_claims import (
    AdjustedInterval,
    Claim,
    ClaimPlanning,
    ClaimsByRule,
    EarlyStopShortening,
    IntervalsByRule,
    LabelledBetting,
    LabelledHoeffding,
    NonInferiority,
    Rule,
    SelectionSummary,
)
from srbench.schemas.intervals import BettingInterval, PowerPlan, StatisticsBlock
from srbench.schemas.plan import Planning as PlanningAssumptions
from srbench.stages.compare.limitations import DEV
from srbench.stages.compare.selection import SEED_LABEL, PairDiffs, adjusted_interval, summary
from srbench.stages.stats.betting import ORDER, Design, betting_interval, make_design
from srbench.stages.stats.paired import claim, non_inferiority, weighted_hoeffding
from srbench.stages.stats.planning import available_cases, sized_plan
from srbench.stages.stats.power import power_plan

LABELS = {"hoeffding": "weighted Hoeffding (REP-6): fixed size, ignores ties",
          "betting": "stratified betting confidence sequence: anytime-valid, tighter when pairs tie"}
NOT_AFTER_STOP = ("not valid after an early stop (a fixed-size interval at a size the data chose): shown for "
                  "reference, never used for a claim")
MAX_TIE_RATE = 0.99

__all__ = ["assess", "declared_margin", "statistics_limitations", "LABELS"]


class Verdicts(BaseModel):
    """A candidate's claim fields as `assess` made them (schemas/comparison.py Candidate): the fields set here
    are the fields the comparison stores (`selection` and `primary_adjusted` only on plans that adjust for the
    baseline's selection)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    interval: LabelledHoeffding | LabelledBetting | AdjustedInterval
    """The interval that makes the claim."""
    intervals: IntervalsByRule
    """Both rules' intervals."""
    claim_rule: Rule
    """The rule that makes the claim."""
    claim_method: str
    """The method of the interval that makes the claim."""
    claim: Claim
    """improvement, regression or inconclusive."""
    claims_by_rule: ClaimsByRule
    """The claim each rule's interval would make."""
    non_inferiority: NonInferiority
    """The non-inferiority verdict and its margin."""
    planning: ClaimPlanning | None
    """Sample-size planning of an inconclusive claim."""
    primary_betting: BettingInterval | None
    """The betting interval over the declared primary benchmarks alone, if any."""
    selection: SelectionSummary | None = None
    """The baseline's selection among K singles (plans that adjust for it)."""
    primary_adjusted: AdjustedInterval | None = None
    """The selection-adjusted interval over the primary benchmarks, if any."""

    def fields(self) -> dict[str, object]:
        """The fields set, by name (what the candidate stores)."""
        return {name: getattr(self, name) for name in type(self).model_fields if name in self.model_fields_set}


def _counts(design: Design) -> dict[str, int]:
    return {b: int(n) for b, n in zip(design.names, design.counts, strict=True)}


def _planning(design: Design, weights: Mapping[str, float], rule: Rule, tie_rate: float,
              planning: PlanningAssumptions, margin: float | None, singles: int | None) -> PowerPlan:
    counts = _counts(design)
    tie = min(MAX_TIE_RATE, tie_rate)
    effect = min(float(planning.effect), 1 - tie)
    if singles is None:                 # a plan from before issue 28: its stored comparisons do not change
        return power_plan(counts, weights, rule=rule, tie_rate=tie, effect=effect, margin=margin,
                          power=float(planning.power), singles=None)
    return sized_plan(counts, weights, rule=rule, tie_rate=tie, effect=effect, margin=margin,
                      power=float(planning.power), singles=singles, available=available_cases(counts), cost=None)


def _intervals(diffs_by_benchmark: Mapping[str, Sequence[int]], ordered: Sequence[int], design: Design,
               weights: Mapping[str, float], rule: Rule, stopped: bool, seeded: bool, adjusted: bool
               ) -> IntervalsByRule:
    """Both rules' intervals, labelled; the declared one makes the claim unless a selection-adjusted one does."""
    hoeff = weighted_hoeffding(diffs_by_benchmark, weights)
    bet = betting_interval(ordered, design)
    return IntervalsByRule(
        hoeffding=LabelledHoeffding(**hoeff.model_dump(), rule="hoeffding",
                                    label=SEED_LABEL if seeded else LABELS["hoeffding"], valid=not stopped,
                                    note=NOT_AFTER_STOP if stopped else None,
                                    makes_claim=rule == "hoeffding" and not adjusted),
        betting=LabelledBetting(**bet.model_dump(), rule="betting", label=LABELS["betting"], valid=True,
                                makes_claim=rule == "betting" and not adjusted))


def _non_inferiority(rule: Rule, low: float, margin: float | None, formal: bool, label: str) -> NonInferiority:
    if margin is None:
        return NonInferiority(margin=None, non_inferior=None, label=None, rule=rule, reason="no pre-declared margin")
    if not formal:
        why = ("dev profile: no parity conclusion; a formal one needs the standard holdout (REP-7)" if label == DEV else
               "custom source: no parity conclusion; a formal one needs the pinned, checked sources on the standard "
               "holdout (REP-7)")
        return NonInferiority(margin=margin, non_inferior=None, label=label, rule=rule, reason=why)
    return NonInferiority(margin=margin, non_inferior=non_inferiority(low, margin), label=label, rule=rule,
                          reason=f"{rule} lower bound {low:.4f} vs −{margin}")


def assess(diffs_by_benchmark: Mapping[str, Sequence[int]], ordered: Sequence[int], design: Design,
           weights: Mapping[str, float], *, rule: Rule, margin: float | None, formal: bool, label: str,
           stopped: bool, planning: PlanningAssumptions, primary: Sequence[str] | None = None,
           singles: Mapping[str, PairDiffs] | None = None) -> Verdicts:
    """Both intervals and the declared rule's verdicts for one candidate. `singles` (plans that adjust
    for the baseline's selection): the differences against each of the K singles the baseline was
    chosen among; with K > 1 the selection-adjusted interval (`stages/selection`) makes the claim."""
    k = None if singles is None else len(singles)
    adjusted = adjusted_interval(rule, singles, design, weights) if singles is not None and len(singles) > 1 else None
    intervals = _intervals(diffs_by_benchmark, ordered, design, weights, rule, stopped, singles is not None,
                           singles is not None and len(singles) > 1)
    declared: LabelledHoeffding | LabelledBetting | AdjustedInterval = adjusted or getattr(intervals, rule)
    extra: dict[str, object] = {}
    if singles is not None:
        extra["selection"] = summary(len(singles), list(singles), rule)
        if len(singles) > 1 and primary:
            extra["primary_adjusted"] = adjusted_interval(rule, singles, design, weights, primary)
    verdict = claim(declared.ci)
    flat = [int(v) for v in ordered]
    observed_tie = flat.count(0) / len(flat)
    plan_info = None
    if verdict == "inconclusive":
        plan_info = ClaimPlanning(
            rule=rule, observed_tie_rate=observed_tie, planned_tie_rate=planning.tie_rate,
            at_observed_ties=_planning(design, weights, rule, observed_tie, planning, margin, k),
            at_planned_ties=_planning(design, weights, rule, float(planning.tie_rate), planning, margin, k))
    out = Verdicts(interval=declared, intervals=intervals, claim_rule=rule, claim_method=declared.method,
                   claim=verdict, claims_by_rule=ClaimsByRule(hoeffding=claim(intervals.hoeffding.ci),
                                                              betting=claim(intervals.betting.ci),
                                                              intervals=None if adjusted is None else "unadjusted"),
                   non_inferiority=_non_inferiority(rule, declared.ci[0], margin, formal, label),
                   planning=plan_info, primary_betting=_primary_betting(ordered, design, weights, primary))
    return out.model_copy(update=extra)


def _primary_betting(ordered: Sequence[int], design: Design, weights: Mapping[str, float],
                     primary: Sequence[str] | None) -> BettingInterval | None:
    """The betting interval over the declared primary benchmarks only: their planned cases in analysis
    order, their weights renormalised (`declared` uses it when betting is the claim rule)."""
    if not primary or not set(primary) <= set(design.names):
        return None
    names = [design.names[k] for k in design.strata]
    keep = [i for i, b in enumerate(names) if b in primary]
    sub = make_design([names[i] for i in keep], {b: weights[b] for b in primary}, design.alpha)
    seen = [ordered[i] for i in keep if i < len(ordered)]
    return betting_interval(seen, sub) if seen else None


def declared_margin(margin: float | None, stats: StatisticsBlock) -> float | None:
    """The non-inferiority margin: the one the candidate plan declared; one given later must equal it."""
    declared = stats.margin
    if margin is not None and not (isinstance(margin, int | float) and 0 <= margin <= 1):
        raise InvalidInput(f"the non-inferiority margin must be in [0, 1] (weighted-quality units), got {margin!r}",
                           code="invalid_margin")
    if margin is None:
        return declared
    if declared is not None and float(margin) != float(declared):
        raise InvalidInput(f"the candidate plan declared the non-inferiority margin {declared} in advance; "
                           f"compare cannot use {margin} (REP-7)", code="margin_conflict")
    return float(margin)


def statistics_limitations(stats: StatisticsBlock, bstats: StatisticsBlock,
                           stop: EarlyStopShortening | None) -> list[str]:
    """What the statistics block and an early stop mean for reading a comparison."""
    out = []
    if bstats.claim_rule != stats.claim_rule:
        out.append(f"The baseline plan declares claim rule {bstats.claim_rule}; the candidate plan's "
                   f"{stats.claim_rule} makes the claims here.")
    if stop is not None:
        out.append(f"A run stopped early by its plan's rule: compared on the first {stop.compared_cases} of "
                   f"{stop.planned_cases} cases of the plan order ({ORDER}). The betting interval is valid at "
                   "that data-chosen size; the Hoeffding interval is not and is shown for reference only.")
    return out
