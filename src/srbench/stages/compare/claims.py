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
plan's assumed one.

A plan that records `baseline_selection: adjusted` (every new plan) also gets `selection` (K and the
adjustment); when the baseline was chosen among K > 1 singles, `interval` is the selection-adjusted
interval of the claim rule (`stages/selection`), which makes the claim and the non-inferiority
verdict; the rule's plain interval against the chosen baseline stays in `intervals`, and Hoeffding is
labelled as the seed's conservative interval. Planning then plans that claim (running intersection, K).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from srbench.errors import InvalidInput
from srbench.schemas.intervals import StatisticsBlock
from srbench.stages.compare.selection import SEED_LABEL, PairDiffs, adjusted_interval, summary
from srbench.stages.stats.betting import ORDER, Design, betting_interval, make_design
from srbench.stages.stats.paired import claim, non_inferiority, weighted_hoeffding
from srbench.stages.stats.power import power_plan

LABELS = {"hoeffding": "weighted Hoeffding (REP-6): fixed size, ignores ties",
          "betting": "stratified betting confidence sequence: anytime-valid, tighter when pairs tie"}
NOT_AFTER_STOP = ("not valid after an early stop (a fixed-size interval at a size the data chose): shown for "
                  "reference, never used for a claim")
MAX_TIE_RATE = 0.99

__all__ = ["assess", "declared_margin", "statistics_limitations", "LABELS"]


def _counts(design: Design) -> dict[str, int]:
    return {b: int(n) for b, n in zip(design.names, design.counts, strict=True)}


def _planning(design: Design, weights: Mapping[str, float], rule: str, tie_rate: float,
              planning: Mapping[str, Any], margin: float | None, singles: int | None) -> dict[str, Any]:
    counts = _counts(design)
    tie = min(MAX_TIE_RATE, tie_rate)
    return power_plan(counts, weights, rule=rule, tie_rate=tie, effect=min(float(planning["effect"]), 1 - tie),
                      margin=margin, power=float(planning["power"]), singles=singles).dump()


def assess(diffs_by_benchmark: Mapping[str, Sequence[int]], ordered: Sequence[int], design: Design,
           weights: Mapping[str, float], *, rule: str, margin: float | None, formal: bool, label: str,
           stopped: bool, planning: Mapping[str, Any], primary: Sequence[str] | None = None,
           singles: Mapping[str, PairDiffs] | None = None) -> dict[str, Any]:
    """Both intervals and the declared rule's verdicts for one candidate. `singles` (plans that adjust
    for the baseline's selection): the differences against each of the K singles the baseline was
    chosen among; with K > 1 the selection-adjusted interval (`stages/selection`) makes the claim."""
    hoeff = weighted_hoeffding(diffs_by_benchmark, weights)
    bet = betting_interval(ordered, design)
    intervals = {"hoeffding": {**hoeff.model_dump(), "rule": "hoeffding", "label": LABELS["hoeffding"],
                               "valid": not stopped, "note": NOT_AFTER_STOP if stopped else None},
                 "betting": {**bet.model_dump(), "rule": "betting", "label": LABELS["betting"], "valid": True}}
    for name, iv in intervals.items():
        iv["makes_claim"] = name == rule
    declared = intervals[rule]
    extra: dict[str, Any] = {}
    k = None if singles is None else len(singles)
    if singles is not None:
        intervals["hoeffding"]["label"] = SEED_LABEL
        extra["selection"] = summary(len(singles), list(singles), rule)
        if len(singles) > 1:
            declared = adjusted_interval(rule, singles, design, weights) or declared
            intervals[rule]["makes_claim"] = False
            if primary:
                extra["primary_adjusted"] = adjusted_interval(rule, singles, design, weights, primary)
    verdict = claim(declared["ci"])
    low = declared["ci"][0]
    if margin is None:
        ni: dict[str, Any] = {"margin": None, "non_inferior": None, "label": None, "rule": rule,
                              "reason": "no pre-declared margin"}
    elif not formal:
        ni = {"margin": margin, "non_inferior": None, "label": label, "rule": rule,
              "reason": "dev profile: no parity conclusion; a formal one needs the standard holdout (REP-7)"}
    else:
        ni = {"margin": margin, "non_inferior": non_inferiority(low, margin), "label": label, "rule": rule,
              "reason": f"{rule} lower bound {low:.4f} vs −{margin}"}
    flat = [int(v) for v in ordered]
    observed_tie = flat.count(0) / len(flat)
    plan_info = None
    if verdict == "inconclusive":
        plan_info = {"rule": rule, "observed_tie_rate": observed_tie, "planned_tie_rate": planning["tie_rate"],
                     "at_observed_ties": _planning(design, weights, rule, observed_tie, planning, margin, k),
                     "at_planned_ties": _planning(design, weights, rule, float(planning["tie_rate"]), planning,
                                                  margin, k)}
    return {"interval": declared, "intervals": intervals, "claim_rule": rule, "claim_method": declared["method"],
            "claim": verdict, "claims_by_rule": {name: claim(v["ci"]) for name, v in intervals.items()},
            "non_inferiority": ni, "planning": plan_info,
            "primary_betting": _primary_betting(ordered, design, weights, primary), **extra}


def _primary_betting(ordered: Sequence[int], design: Design, weights: Mapping[str, float],
                     primary: Sequence[str] | None) -> dict[str, Any] | None:
    """The betting interval over the declared primary benchmarks only: their planned cases in analysis
    order, their weights renormalised (`declared` uses it when betting is the claim rule)."""
    if not primary or not set(primary) <= set(design.names):
        return None
    names = [design.names[k] for k in design.strata]
    keep = [i for i, b in enumerate(names) if b in primary]
    sub = make_design([names[i] for i in keep], {b: weights[b] for b in primary}, design.alpha)
    seen = [ordered[i] for i in keep if i < len(ordered)]
    return betting_interval(seen, sub).model_dump() if seen else None


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


def statistics_limitations(stats: StatisticsBlock, bstats: StatisticsBlock, stop: dict[str, Any] | None) -> list[str]:
    """What the statistics block and an early stop mean for reading a comparison."""
    out = []
    if bstats.claim_rule != stats.claim_rule:
        out.append(f"The baseline plan declares claim rule {bstats.claim_rule}; the candidate plan's "
                   f"{stats.claim_rule} makes the claims here.")
    if stop is not None:
        out.append(f"A run stopped early by its plan's rule: compared on the first {stop['compared_cases']} of "
                   f"{stop['planned_cases']} cases of the plan order ({ORDER}). The betting interval is valid at "
                   "that data-chosen size; the Hoeffding interval is not and is shown for reference only.")
    return out
