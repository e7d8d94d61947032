"""Claims that hold across choosing the baseline (issue 28; REP-5's baseline with REP-6's intervals).

REP-5 makes the baseline the strongest of the K single targets measured on the same cases. An
interval against that pick alone ignores the pick: when K singles are equally strong, the one that
measured best is the luckiest, so a router as good as all of them looks worse than it (a "false
regression" rate that grows with K). With `statistics.baseline_selection: adjusted` — what every new
plan records — a claim is about θ = Q_candidate − max_k Q_k (true qualities: the candidate against
the truly strongest single) and its interval is built from the claim rule's paired interval of the
candidate against every single k = 1..K:

    lower = min_k lower_k(α)              upper = min_k upper_k(α/K)

lower_k(α) is the rule's lower bound against single k at the plan's level (one side α/2); upper_k(α/K)
its upper bound at level α/K (one side α/(2K)). Let k* be a single of highest true quality, so
θ = Δ_k* = min_k Δ_k (Δ_k the true difference against single k).
- Lower side, intersection–union (Berger 1982, "Multiparameter hypothesis testing and acceptance
  sampling", Technometrics 24:295–300; Berger & Hsu 1996, Statistical Science 11:283–319):
  lower > θ needs lower_k* > Δ_k*, probability ≤ α/2. No adjustment: an improvement (or
  non-inferiority) claim needs the candidate to clear *every* single, the chosen one included.
- Upper side, Bonferroni: upper < θ needs some upper_k < θ ≤ Δ_k, probability ≤ K·α/(2K) = α/2.
So P(θ ∉ [lower, upper]) ≤ α whichever single the data made strongest. With the betting rule each
bound is that process's running intersection over every prefix (anytime-valid), so the claim keeps
its level at a data-chosen stop too; `decide_selected` is the early-stopping rule on these bounds.
The estimate is min_k Δ̂_k, the difference against the single that measured strongest.

K = 1 (the baseline run, or this run, measured one single target: a baseline fixed in advance)
adjusts nothing. Plans without the field (made before it existed) keep their unadjusted claims.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np

from srbench.schemas.comparison_claims import AdjustedInterval, Rule, SelectionSummary, SingleBound
from srbench.schemas.comparison_inputs import ComparedRow
from srbench.schemas.intervals import BettingInterval, HoeffdingInterval, StopDecision
from srbench.stages.stats.betting import METHOD as BETTING
from srbench.stages.stats.betting import Design, betting_interval, make_design, reach_bounds
from srbench.stages.stats.paired import HOEFFDING, weighted_hoeffding
from srbench.stages.stats.stopping import decision

ADJUSTMENT = "intersection-union lower bound (α), Bonferroni upper bound (α/K)"
ESTIMAND = "candidate quality minus the highest true quality among the K single targets"
SEED_LABEL = ("weighted Hoeffding (REP-6): the seed's conservative interval, fixed size, ignores ties and the "
              "baseline's selection; shown beside the claim, carried by the upstream-compatible fields")
FIXED = "none: K = 1, the baseline is the only single target measured (not chosen from the data)"

PairDiffs = tuple[dict[str, list[int]], list[int]]     # (differences by benchmark, in analysis order)

__all__ = ["ADJUSTMENT", "SEED_LABEL", "paired_diffs", "adjusted_interval", "summary", "limitation",
           "decide_selected", "at_alpha"]


def paired_diffs(cells: Mapping[str, ComparedRow], other: Mapping[str, ComparedRow],
                 order: Sequence[tuple[str, str]]) -> PairDiffs:
    """1[candidate correct] − 1[other correct] per case of `order`, grouped and in order."""
    by: dict[str, list[int]] = {}
    ordered = []
    for case_id, bench in order:
        d = cells[case_id].ok() - other[case_id].ok()
        by.setdefault(bench, []).append(d)
        ordered.append(d)
    return by, ordered


def at_alpha(design: Design, alpha: float) -> Design:
    return dataclasses.replace(design, alpha=float(alpha))


def _restrict(design: Design, primary: Sequence[str] | None, weights: Mapping[str, float],
              ordered: Sequence[int]) -> tuple[Design, list[int]]:
    """The design over the primary benchmarks' planned cases (as `claims._primary_betting`)."""
    if not primary:
        return design, list(ordered)
    names = [design.names[k] for k in design.strata]
    keep = [i for i, b in enumerate(names) if b in primary]
    sub = make_design([names[i] for i in keep], {b: weights[b] for b in primary}, design.alpha)
    return sub, [ordered[i] for i in keep if i < len(ordered)]


def _bounds(rule: str, diffs: PairDiffs, design: Design, weights: Mapping[str, float], alpha: float,
            primary: Sequence[str] | None) -> tuple[float, float, float]:
    """(lower, upper, estimate) of one pair under `rule` at level `alpha`."""
    by, ordered = diffs
    if rule == "betting":
        sub, seen = _restrict(design, primary, weights, ordered)
        iv: BettingInterval | HoeffdingInterval = betting_interval(seen, at_alpha(sub, alpha))
    else:
        keep = {b: g for b, g in by.items() if not primary or b in primary}
        iv = weighted_hoeffding(keep, {b: weights[b] for b in keep}, alpha)
    return float(iv.ci[0]), float(iv.ci[1]), float(iv.estimate)


def adjusted_interval(rule: Rule, singles: Mapping[str, PairDiffs], design: Design, weights: Mapping[str, float],
                      primary: Sequence[str] | None = None) -> AdjustedInterval | None:
    """The selection-adjusted interval of `rule` (module docstring); None when a primary benchmark
    has no compared case."""
    if primary and not set(primary) <= set(design.names):
        return None
    k, alpha = len(singles), design.alpha
    per: list[SingleBound] = []
    for tid, diffs in sorted(singles.items()):
        lo, _, est = _bounds(rule, diffs, design, weights, alpha, primary)
        _, hi, _ = _bounds(rule, diffs, design, weights, alpha / k, primary)
        per.append(SingleBound(target_id=tid, lower=lo, upper=hi, estimate=est))
    lower, upper = min(s.lower for s in per), min(s.upper for s in per)
    note = None
    if lower >= upper:      # each side holds on its own; crossing sides are a miss (probability ≤ α)
        lower, upper = min(lower, upper), max(lower, upper)
        note = "the two sides crossed (a miss, probability ≤ α): shown in order"
    return AdjustedInterval(
        rule=rule, method=BETTING if rule == "betting" else HOEFFDING, selection_adjusted=True,
        adjustment=ADJUSTMENT, k=k, alpha=alpha, upper_alpha_per_single=alpha / k, estimand=ESTIMAND,
        estimate=min(s.estimate for s in per), ci=[lower, upper], per_single=per, anytime_valid=rule == "betting",
        valid=True, makes_claim=True,
        label=f"{rule}, adjusted for choosing the strongest of {k} single targets ({ADJUSTMENT})", note=note)


def summary(k: int, singles: Sequence[str], rule: Rule) -> SelectionSummary:
    """What a comparison says about the baseline's selection."""
    return SelectionSummary(k=k, singles=sorted(singles), rule=rule, adjusted=k > 1,
                            adjustment=ADJUSTMENT if k > 1 else FIXED, estimand=ESTIMAND if k > 1 else None)


def limitation(k: int) -> str:
    """The comparison's first limitation for a plan that adjusts for the baseline's selection."""
    cover = (f"choosing the baseline as the strongest of the K = {k} single targets on these same cases ({ADJUSTMENT}; "
             "the unadjusted and Hoeffding intervals shown beside it do not)" if k > 1 else
             "the baseline, which is the only single target measured (K = 1: nothing to adjust)")
    return (f"The claim's interval covers case sampling and {cover}; no interval covers the selection of a tuned "
            "router or of one candidate among many, nor contamination of public questions (REP-6).")


def decide_selected(ds: Sequence[Sequence[int]], design: Design, margin: float | None = None) -> StopDecision:
    """`stopping.decide` on the adjusted bounds: `ds` the candidate's paired differences against each
    of the K singles (analysis order). With one single it is `decide` exactly."""
    k = len(ds)
    arr = np.asarray([[int(v) for v in d] for d in ds], dtype=float)
    lo, hi, best_lo, worst_hi = reach_bounds(arr, design)
    if k > 1:                                   # the upper side at α/K (Bonferroni)
        _, hi, _, worst_hi = reach_bounds(arr, at_alpha(design, design.alpha / k))
    lo_run, hi_run = np.max(lo, axis=1), np.min(hi, axis=1)
    lower, upper = float(np.min(lo_run)), float(np.min(hi_run))
    best = float(np.min(np.maximum(lo_run, best_lo[:, -1])))
    worst = float(np.min(np.minimum(hi_run, worst_hi[:, -1])))
    return decision(int(arr.shape[1]), lower, upper, best, worst, margin)
