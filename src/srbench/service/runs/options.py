"""Which saved runs can be replayed or compared (upstream's `/replay-options`, `/comparison-options`).

Without a baseline: the baselines (completed live runs with a single target) that have at least one
partner. With one: its partners — for replay, completed previews on the same questions; for
comparison, other completed or failed live runs on the same questions, sampling, per-call limits,
graders, weights and adapter versions (what `compare` refuses to pair otherwise; prices are checked by
`compare` itself). Only runs the caller may see are listed, newest first; `after` is the `next_cursor`
of the previous page (a position in that order). A run whose frozen plan is damaged is left out and
named in `damaged_runs` (the damage recorded once), never failing the list for every run. Nothing
here calls a model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from srbench.errors import DamagedObject
from srbench.schemas.plan import Plan
from srbench.service.api import workflow as wf
from srbench.service.api.actors import Actor, check_visible
from srbench.service.api.faults import record_damage
from srbench.service.runs.state import RunState

if TYPE_CHECKING:
    from srbench.service.app import Service

SCAN = 500
PAIRED = ("case_sha256", "sampling", "grader_versions", "benchmark_weights", "adapter_versions")
CALL_LIMITS = ("total_timeout_s", "idle_timeout_s", "case_timeout_s", "max_output_tokens", "max_output_chars",
               "repetition_window", "repetition_limit")


def _choice(run: RunState, plan: Plan) -> wf.RunChoice:
    return wf.RunChoice(run_id=run.id, name=run.name, profile=run.profile, case_count=plan.dataset.case_count or 0)


def _is_baseline(run: RunState, plan: Plan) -> bool:
    return (run.status == "completed" and plan.mode == "live" and not plan.recovery
            and any(pt.target.kind == "single" for pt in plan.targets))


def _fits(kind: str, base: Plan, other_run: RunState, other: Plan) -> bool:
    if kind == "replay":
        return other_run.status == "completed" and other.mode == "preview" and other.case_sha256 == base.case_sha256
    if other_run.status not in ("completed", "failed", "stopped_early") or other.mode != "live":
        return False
    if other.recovery or any(getattr(other, k) != getattr(base, k) for k in PAIRED):
        return False
    return all(getattr(other.limits, k) == getattr(base.limits, k) for k in CALL_LIMITS)


def readable_plans(service: Service, views: list[RunState], kind: str
           ) -> tuple[list[RunState], dict[str, Plan], list[wf.DamagedRun]]:
    """(the runs whose plan reads back, their plans, the runs skipped with their damage named)."""
    plans: dict[str, Plan] = {}
    damaged: list[wf.DamagedRun] = []
    for v in views:
        try:
            plans[v.id] = service.runs.plans.get(v.plan)
        except DamagedObject as exc:
            record_damage(service, exc, v.id, f"GET /{kind}-options")
            damaged.append(wf.DamagedRun(run_id=v.id, error=exc.message))
    return [v for v in views if v.id in plans], plans, damaged


def _answer_of(baseline: wf.RunChoice | None, key: str, found: list[wf.RunChoice], after: int, limit: int, *,
               scanned: int, scan_limited: bool, damaged: list[wf.DamagedRun], empty: str | None = None
               ) -> wf.RunOptions:
    """One page of `found` (under `key`: options or baselines); `empty_reason` only when there is one."""
    part = found[after:after + limit]
    more = after + len(part) < len(found)
    reason = {} if empty is None else {"empty_reason": empty}
    return wf.RunOptions(baseline=baseline, baselines=part if key == "baselines" else [],
                         options=part if key == "options" else [], next_cursor=str(after + len(part)) if more else None,
                         has_more=more, scanned_pairs=scanned, scan_limited=scan_limited, unverified_pairs=0,
                         unverified_baselines=0, model_requests=0, damaged_runs=damaged, **reason)


def run_options(service: Service, kind: str, actor: Actor, baseline_id: str | None, after: int, limit: int
                ) -> wf.RunOptions:
    runs = service.runs
    listed = runs.list(SCAN) if actor.scope is None else runs.list_owned(actor.scope, SCAN)
    views, plans, damaged = readable_plans(service, listed, kind)
    limited = len(listed) >= SCAN
    found: list[wf.RunChoice] = []
    scanned = 0
    if baseline_id is None:
        for v in views:
            if not _is_baseline(v, plans[v.id]):
                continue
            partners = [w for w in views if w.id != v.id and _fits(kind, plans[v.id], w, plans[w.id])]
            scanned += len(views) - 1
            if partners:
                found.append(_choice(v, plans[v.id]))
        return _answer_of(None, "baselines", found, after, limit, scanned=scanned, scan_limited=limited,
                          damaged=damaged)
    check_visible(service.journal, actor, baseline_id)
    run = runs.get(baseline_id)
    plan = service.runs.plans.get(run.plan)
    if not _is_baseline(run, plan):
        return _answer_of(None, "options", [], after, limit, scanned=0, scan_limited=limited, damaged=damaged,
                          empty="baseline_not_completed_live_single")
    for v in views:
        if v.id != baseline_id:
            scanned += 1
            if _fits(kind, plan, v, plans[v.id]):
                found.append(_choice(v, plans[v.id]))
    if not found:
        return _answer_of(None, "options", [], after, limit, scanned=scanned, scan_limited=limited,
                          damaged=damaged, empty="no_compatible_saved_runs")
    return _answer_of(_choice(run, plan), "options", found, after, limit, scanned=scanned, scan_limited=limited,
                      damaged=damaged)
