"""Which runs can serve as the baseline of a run that holds only routers (`GET /runs/{run_id}/baselines`):
the Dashboard's "Does routing pay?" menu offers exactly these and says why each other run is left out.

A run can answer "does this router pay against the strongest single model?" when `compare` would take
the pair and its savings can be known: a live run with a single model, completed (or failed / stopped
early with an outcome in every cell it sent: partial, and the reason is shown), planned on the same cases
and protocol as the candidate (`stages.compare.checks.pair_checks`, read from the frozen plans), priced
when the candidate is priced, and not a recovery child (it covers only the cells it continued). The
default is the newest complete one, else the newest partial one. Only runs the caller may see are
considered; no report or result row is read and nothing calls a model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from srbench.schemas.plan import Plan
from srbench.service.api import workflow as wf
from srbench.service.runs.options import SCAN, readable_plans
from srbench.service.runs.state import RunState
from srbench.stages.compare.checks import NotComparable, pair_checks
from srbench.stages.stats.stopping import statistics_of

if TYPE_CHECKING:
    from srbench.service.app import Service


def _left_out(run: RunState, plan: Plan, cand: Plan) -> str | None:
    """Why `run` cannot be the candidate's baseline (None: it can)."""
    p = run.progress
    if plan.mode != "live":
        return f"a {plan.mode} run: only a live run's answers can be paired"
    if run.status in ("queued", "running"):
        return f"still {run.status} ({p.completed} of {p.total} cells answered)"
    if run.status not in ("completed", "failed", "stopped_early"):
        return f"{run.status}: it did not carry out its plan"
    if plan.recovery:
        return "a recovery run: it covers only the cells it continued"
    if not any(pt.target.kind == "single" for pt in plan.targets):
        return "holds no single model to weigh the router against"
    if plan.case_sha256 != cand.case_sha256:
        return "planned on other cases (another dataset, profile or seed)"
    try:
        pair_checks(plan, cand, set(), set())
    except NotComparable as exc:
        return exc.message.split(": ", 1)[-1]
    if cand.cost_policy == "require_priced" and plan.cost_policy != "require_priced":
        return f"unpriced (cost policy {plan.cost_policy}): every saving would be unknown"
    if run.status == "failed" and p.pending + p.running:
        return f"failed with {p.pending + p.running} cells that have no outcome"
    if p.completed == 0:
        return f"{run.status} before answering any cell"
    if run.status == "stopped_early" and statistics_of(cand).claim_rule != "betting":
        return "stopped early: only the betting rule compares a measured prefix, and this run's plan declares hoeffding"
    return None


def _partial(run: RunState) -> str | None:
    """Why a usable baseline's figures are partial (None: it answered every planned cell)."""
    p = run.progress
    if run.status == "failed":
        return (f"partial: failed with {p.completed} of {p.total} cells answered; the unanswered count as "
                "incorrect")
    if run.status == "stopped_early":
        return f"partial: stopped early by its plan's rule after {p.completed} of {p.total} cells; compared on its prefix"
    return None


def baseline_options(service: Service, run_id: str, scope: str | None) -> wf.BaselineOptions:
    runs = service.runs
    run = runs.get(run_id)
    cand = runs.plans.get(run.plan)
    listed = runs.list(SCAN) if scope is None else runs.list_owned(scope, SCAN)
    views, plans, damaged = readable_plans(service, [v for v in listed if v.id != run_id], "baselines")
    usable: list[wf.BaselineOption] = []
    others: list[wf.BaselineOption] = []
    for v in views:                                    # newest first
        why = _left_out(v, plans[v.id], cand)
        option = wf.BaselineOption(run_id=v.id, name=v.name, status=v.status, created_at=v.created_at,
                                   usable=why is None, partial=None if why else _partial(v), left_out=why)
        (usable if why is None else others).append(option)
    usable.sort(key=lambda o: o.partial is not None)    # complete first, each part newest first (a stable sort)
    own = any(pt.target.kind == "single" for pt in cand.targets)
    chosen = run_id if own else usable[0].run_id if usable else None
    return wf.BaselineOptions(run_id=run_id, own_single=own, chosen=chosen, options=usable + others,
                              scan_limited=len(listed) >= SCAN, damaged_runs=damaged, model_requests=0)
