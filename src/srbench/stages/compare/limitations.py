"""What a comparison does not show, in words (its `limitations`; stages/compare/build.py adds the operational
and statistical ones of stages/compare/checks.py and claims.py)."""

from __future__ import annotations

from srbench.benchmarks import all_benchmarks
from srbench.schemas.comparison import Candidate, Evidence, TiedBaseline
from srbench.schemas.plan import Plan
from srbench.stages.datasets.exclusions import evaluation_notices
from srbench.stages.datasets.source_labels import notices as source_notices

AUX_COST_FIELDS = ("judge_cost_usd", "simulator_cost_usd")
DEV = "dev (not a formal conclusion)"
FORMAL = "formal (standard holdout)"
CUSTOM = "custom source (not a formal conclusion)"

__all__ = ["AUX_COST_FIELDS", "CUSTOM", "DEV", "FORMAL", "comparison_limitations", "evidence_of"]


def _unpinned(plan: Plan) -> list[str]:
    """What keeps a plan's cases from being the pinned, checked sources (empty: every benchmark is)."""
    sources = plan.dataset.sources
    if sources is None:
        return ["the plan records no source labels (frozen before sources were labelled)"]
    out = []
    for b, label in sorted(sources.items()):
        if not label.pinned:
            out.append(f"{b} is not the pinned source (revision {label.revision or 'mixed'})")
        elif label.check is None:
            out.append(f"{b} is at the pinned revision but its bytes were never checked against the pin table")
    return out


def evidence_of(baseline: Plan, candidate: Plan) -> Evidence:
    """The one rule for a comparison's standing, which the service's answer carries and every page shows:
    formal only when both runs ran the standard holdout on the pinned, checked sources; a dev profile is
    dev; the standard holdout on another source is a custom source. The reason says which."""
    dev = [p.profile for p in (baseline, candidate) if p.profile != "standard"]
    if dev:
        return Evidence(profile=baseline.profile, split=baseline.dataset.split, formal=False, label=DEV,
                        standing="dev", reason=f"{dev[0]} profile: a dev split; a formal conclusion needs the "
                                               "standard holdout not used for tuning (IT-5, REP-7)")
    unpinned = list(dict.fromkeys(_unpinned(baseline) + _unpinned(candidate)))
    if unpinned:
        return Evidence(profile=baseline.profile, split=baseline.dataset.split, formal=False, label=CUSTOM,
                        standing="custom source", reason="standard holdout, but " + "; ".join(unpinned) +
                        ": not an sr-bench 1.0 result")
    return Evidence(profile=baseline.profile, split=baseline.dataset.split, formal=True, label=FORMAL,
                    standing="formal", reason="the standard holdout, every benchmark at its pinned, checked source")


def comparison_limitations(baseline_status: str, candidate_status: str, plan: Plan, evidence: Evidence,
                           tied: list[TiedBaseline], candidates: list[Candidate],
                           aux_absent: set[str]) -> list[str]:
    """The comparison's own limitations: what its intervals cover, its profile, the claim rule, a subset of
    benchmarks, an unfinished run, a tie, the auxiliary costs, cost estimates, the margin and the dataset's notes."""
    out = ["The intervals cover case sampling only: not the choice of the baseline as the best of the single "
           "targets on these same cases, not the selection of a tuned router or of one candidate among many "
           "(no multiplicity correction), and not contamination of public questions (REP-6)."]
    if evidence.standing == "dev":
        out.append(f"{plan.profile} profile: {DEV}; formal conclusions need the standard holdout not used "
                   "for tuning (IT-5, REP-7).")
    elif not evidence.formal:
        out.append(f"{evidence.label}: {evidence.reason}.")
    rule = candidates[0].claim_rule if candidates else "hoeffding"
    out.append(f"Claims and non-inferiority use the {rule} interval (the plan's claim rule); the other rule's "
               "interval is shown beside it. The bootstrap interval is a diagnostic only.")
    if {b.id for b in all_benchmarks()} - set(plan.benchmark_weights):
        out.append("Not all nine benchmarks: the quality difference is a subset result with renormalised weights.")
    for side, status in (("baseline", baseline_status), ("candidate", candidate_status)):
        if status != "completed":
            out.append(f"The {side} run {status}: it is not a complete evaluation; its failed, cancelled "
                       "and ambiguous cells count as incorrect.")
    if len(tied) > 1:
        out.append(f"{len(tied)} single targets tie as strongest: {', '.join(t.target_id for t in tied)}.")
    out += _aux_limitation(aux_absent, tied, candidates)
    out.append("Costs are token-equivalent estimates at the frozen prices, not a bill; a self-hosted "
               "token-equivalent price is not a GPU bill saving. The cache-neutral cost exposes cache warm-up "
               "between runs (REP-3).")
    if any(c.non_inferiority.margin is None for c in candidates):
        out.append("No non-inferiority margin was declared in advance: no parity is concluded (REP-7).")
    out += [n for n in evaluation_notices(plan.dataset.evaluation) if n not in out]
    out += [n for n in source_notices(plan.dataset.sources) if n not in out]
    return out


def _aux_limitation(aux_absent: set[str], tied: list[TiedBaseline], candidates: list[Candidate]) -> list[str]:
    """What the total-cost scope holds, true to the rows: the absent auxiliary fields count as 0, and
    total equals principal only when no metered auxiliary cost adds to it."""
    if not aux_absent:
        return []
    metered = sorted(set(AUX_COST_FIELDS) - aux_absent)
    pairs = [(t.costs.total, t.costs.principal) for t in tied]
    pairs += [(c.savings.total.candidate_usd, c.savings.principal.candidate_usd) for c in candidates]
    adds = any(total != principal for total, principal in pairs)
    head = f"No row carries {', '.join(sorted(aux_absent))}: those calls are not metered in these reports (counted 0)"
    if adds:
        return [f"{head}; the total cost adds the metered {', '.join(metered)}, so total and principal costs (and "
                "their savings) differ."]
    what = f"the metered {', '.join(metered)} add nothing" if metered else "nothing else is metered"
    return [f"{head}, and {what}: total cost equals principal cost."]
