"""What a run that ended without an answer in every cell reports (issue 27): both denominators, and
the paired "does routing pay" figure on the cases both sides answered.

`partial_block`: the report's `partial` section — how many planned cells were answered, whether the
run will still finish, and what each accuracy is over: `accuracy` over every planned cell (a cell
without an answer counts as not correct) and `accuracy_answered` over the answered cells only.

`partial_paired`: a cancelled or interrupted run did not carry out its plan, and a failed one may have
left cells that were never answered; `compare` refuses the first two and would count the unanswered
cells of the third as not correct on both sides, so a missing answer would read as a measured loss. This section
takes only the cases where both sides answered: for each router (mom) target of the run, the cases
answered (a complete, graded answer) by it and by every single target. The baseline is the single
target with the highest exact weighted quality on those cases (ties: the lowest target id); Δ is the
weighted quality difference on them with the paired Hoeffding 95% interval (stages/stats/paired.py) as a
description, beside each side's principal cost and latency on those cases. It is labelled partial,
"n of N" planned cases, and it never makes a claim: which cases got an answer was decided by when
the run stopped, not by the plan, so no interval here is formal.
"""

from __future__ import annotations

from typing import Any

from srbench import TERMINAL_STATUSES
from srbench.schemas.cell import RunStatus
from srbench.schemas.plan import Plan
from srbench.schemas.report_sections import (
    DescriptiveInterval,
    PairedOperations,
    PairedSide,
    PartialBlock,
    PartialCandidate,
    PartialEvidence,
    PartialPaired,
)
from srbench.schemas.results import ResultRow
from srbench.stages.stats.basic import percentile
from srbench.stages.stats.paired import HOEFFDING, exact_weighted_quality, weighted_hoeffding

NEVER_FINISH = ("cancelled", "interrupted", "failed")
CLAIM_NOTE = ("Descriptive only: which cases were answered depends on when the run ended, not on its plan, "
              "so no improvement, regression or non-inferiority is claimed")

__all__ = ["NEVER_FINISH", "needs_partial", "partial_block", "partial_paired"]
PLANNED_SCOPE = "over every planned cell: a cell without an answer (never sent, cancelled, failed) counts as not correct"
ANSWERED_SCOPE = "over the answered cells only (a complete, graded answer): what the answers so far say, not the plan"


def partial_block(status: RunStatus, states: dict[str, int]) -> PartialBlock | None:
    """The report's `partial` section, or None for a run that answered every planned cell."""
    total, answered = sum(states.values()), states.get("completed", 0)
    if status == "completed" and answered == total:
        return None
    final = status in TERMINAL_STATUSES
    when = (f"run {status}: figures so far" if not final else "the run completed; the other cells failed"
            if status == "completed" else f"run {status}: it will not finish")
    return PartialBlock(answered_cells=answered, planned_cells=total, final=final,
                        label=f"partial: {answered} of {total} planned cells answered ({when})",
                        accuracy=PLANNED_SCOPE, accuracy_answered=ANSWERED_SCOPE)


def _answered(r: ResultRow) -> bool:
    return r.state == "completed" and isinstance(r.correct, bool)


def needs_partial(status: RunStatus, rows: list[ResultRow]) -> bool:
    """Whether the run's paired figure is the partial one: it ended (cancelled, interrupted or failed)
    and some cell has no answer."""
    return status in NEVER_FINISH and not all(_answered(r) for r in rows)


def _side(cells: dict[str, ResultRow], cases: list[str]) -> PairedSide:
    lat = [x for c in cases if (x := cells[c].latency_s) is not None]
    costs = [cells[c].cost_usd for c in cases]
    return PairedSide(correct=sum(bool(cells[c].correct) for c in cases),
                      cost_usd=None if any(x is None for x in costs) else float(sum(x for x in costs if x is not None)),
                      latency_p50_s=percentile(lat, 0.5), latency_p95_s=percentile(lat, 0.95))


def _quality(cells: dict[str, ResultRow], cases: list[str], weights: dict[str, float]) -> Any:
    counts: dict[str, list[int]] = {}
    for c in cases:
        kn = counts.setdefault(cells[c].benchmark, [0, 0])
        kn[0] += int(cells[c].correct is True)
        kn[1] += 1
    return exact_weighted_quality({b: (k, n) for b, (k, n) in counts.items()}, weights)


def _candidate(tid: str, by: dict[str, dict[str, ResultRow]], singles: list[str], planned: list[str],
               weights: dict[str, float]) -> PartialCandidate:
    cases = [c for c in planned if _answered(by[tid][c]) and all(_answered(by[s][c]) for s in singles)]
    n, total = len(cases), len(planned)
    label = f"partial: {n} of {total} planned cases answered by both sides"
    head = PartialCandidate(target_id=tid, n=n, planned_cases=total, label=label, claim=None, claim_note=CLAIM_NOTE,
                            formal=False, baseline_target_id=None)
    if not n:
        return head.model_copy(update={"reason": "no case was answered by both sides"})
    best = min(singles, key=lambda s: (-_quality(by[s], cases, weights), s))
    q_c, q_b = _quality(by[tid], cases, weights), _quality(by[best], cases, weights)
    diffs: dict[str, list[int]] = {}
    for c in cases:
        diffs.setdefault(by[tid][c].benchmark, []).append(int(bool(by[tid][c].correct)) - int(bool(by[best][c].correct)))
    flat = [d for g in diffs.values() for d in g]
    ci = weighted_hoeffding(diffs, weights).ci
    sides = PairedOperations(candidate=_side(by[tid], cases), baseline=_side(by[best], cases))
    cost_c, cost_b = sides.candidate.cost_usd, sides.baseline.cost_usd
    return head.model_copy(update={
        "baseline_target_id": best, "quality": float(q_c), "baseline_quality": float(q_b), "delta": float(q_c - q_b),
        "micro_delta": sum(flat) / n, "wins": flat.count(1), "losses": flat.count(-1), "ties": flat.count(0),
        "interval": DescriptiveInterval(method=HOEFFDING, ci=ci, scope=f"the {n} cases answered by both (descriptive)"),
        "operations": sides,       # principal cost and latency of each side on the same cases
        "saving_pct": None if cost_c is None or not cost_b else 100.0 * (1.0 - cost_c / cost_b),
    })


def partial_paired(plan: Plan, rows: list[ResultRow], status: RunStatus) -> PartialPaired:
    """The partial paired section of a run with at least one single and one mom target."""
    kinds = {pt.target.id: pt.target.kind for pt in plan.targets}
    by: dict[str, dict[str, ResultRow]] = {t: {} for t in kinds}
    for r in rows:
        by[r.target_id][r.case_id] = r
    planned = sorted({r.case_id for r in rows})
    singles = sorted(t for t, k in kinds.items() if k == "single")
    weights = {b: float(w) for b, w in plan.benchmark_weights.items()}
    label = "partial, dev (not a formal conclusion): the run ended (" + status + ") without an answer in every cell"
    return PartialPaired(status=status, planned_cases=len(planned),
                         evidence=PartialEvidence(profile=plan.profile, formal=False, label=label),
                         candidates=[_candidate(t, by, singles, planned, weights)
                                     for t in sorted(kinds) if kinds[t] == "mom"])
