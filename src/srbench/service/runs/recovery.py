"""Explicit recovery (REC-1..REC-4): a reviewed plan, then a child run over the selected cells only.

`recovery_plan` decides from the persisted dispatch and call records alone. Each parent cell is
excluded for the first reason that applies, in this order:

1. ``completed`` — it already has a complete answer;
2. ``claimed`` — another recovery child holds it;
3. ``ambiguous_dispatch`` — a call was in flight when the service stopped (it may have been billed);
4. ``already_dispatched`` — mode `undispatched`, but a call was made for it;
5. ``never_dispatched`` — mode `failed`, but no call was made (use mode `undispatched`);
6. ``unknown_usage_or_cost`` — mode `failed`, and a call it made has unknown usage or cost or no
   terminal finish (it may have been billed). An HTTP error answer (status >= 400, no stream) and
   a connection that never opened count as known: they produced no tokens.

A multi-call cell (a conversation) counts as one: dispatched when one of its calls was sent, of
unknown cost when one of its calls is, ambiguous when the service stopped during it. A child run
reruns a selected conversation whole, from its first call; nothing of it is resumed.

`plan_sha256` covers everything but `selected_cells`, which the user may narrow to a reviewed
subset. `recover` recomputes the plan, requires the same hash, `selected_cells` ⊆ eligible, and in
mode `failed` an explicit `acknowledge_new_attempt`; the idempotency key binds parent + mode + cells.
A selected cell is its id or upstream's ``{case_id, target_id}`` (so a recovery file round-trips
through either CLI). A plan gone stale (another recovery claimed cells, say) is upstream's
400 ``recovery_plan_required``: make a new plan.
Claims are inserted in the same transaction as the child, so two recoveries never share a cell.
"""

from __future__ import annotations

import hashlib
import sqlite3

from srbench.cas import canonical_json
from srbench.errors import Conflict, InvalidInput
from srbench.schemas.conversation import ConversationRecord
from srbench.schemas.dataset import Case
from srbench.schemas.plan import Plan, PlanRecovery
from srbench.schemas.recovery import (
    ExcludedCell,
    KnownCostReport,
    ParentSnapshot,
    RecoveryCell,
    RecoveryMode,
    RecoveryPlan,
)
from srbench.schemas.target import Target
from srbench.service.journal import runs as jruns
from srbench.service.journal.cell_rows import run_cells
from srbench.service.journal.cells import cell_id
from srbench.service.journal.recovery import claim_cells, claims_of
from srbench.service.runs.manager import TERMINAL, RunManager
from srbench.service.runs.state import OnCreate, RunState
from srbench.stages.datasets.build import decode_cases
from srbench.stages.plan.freeze import plan_sha256
from srbench.targets.accounting import call_cost

MODES = ("undispatched", "failed")
VERSION = "sr-bench-recovery-v1"


def _hash(plan: RecoveryPlan) -> str:
    """SHA-256 of the plan's canonical JSON without `plan_sha256` and `selected_cells`."""
    return hashlib.sha256(canonical_json(plan.model_dump(mode="json", exclude={"plan_sha256", "selected_cells"}))
                          ).hexdigest()


def _unknown(manager: RunManager, target: Target, digest: str) -> bool:
    """Could this failed call have been billed without us knowing what? An HTTP error answer
    (status >= 400, no stream) and a connection that never opened produced no tokens."""
    rec = manager.store.get_json(digest)
    if rec.get("sent") is False or (rec.get("http_status") or 0) >= 400 or rec.get("error_class") == "connect_error":
        return False
    return (rec.get("usage") is None or call_cost(target, rec).cost_usd is None
            or rec.get("finish_reason") not in ("stop", "length", "tool_calls", "function_call"))


def _conversation(manager: RunManager, digest: str | None) -> ConversationRecord | None:
    """The cell's conversation record (a multi-call cell), else None."""
    if digest is None:
        return None
    rec = manager.store.get_json(digest)
    return ConversationRecord.model_validate(rec) if rec.get("kind") == "conversation" else None


def _conversation_unknown(manager: RunManager, conv: ConversationRecord, subject: Target,
                          aux: dict[str, Target]) -> bool:
    """A conversation may have been billed unknowingly when one of its calls may have been."""
    return any(_unknown(manager, subject if c.role == "subject" else aux[c.target_id], c.record)
               for c in conv.calls)


def _cases(manager: RunManager, plan: Plan) -> list[Case]:
    return decode_cases(manager.store.get_bytes(plan.dataset.object))


def _child_plan(parent: Plan, run_id: str, mode: RecoveryMode, cells: list[str], pairs: list[list[str]],
                fresh: RecoveryPlan) -> Plan:
    """The recovery child's plan: the parent's, narrowed to the chosen cells and the targets they use."""
    used = {t for _, t in pairs}
    child = parent.model_copy(update={
        "experiment": None,          # the child joins the parent's experiment as recovery (on_create)
        "targets": [pt for pt in parent.targets if pt.target.id in used],
        "name": f"{parent.name} (recovery of {run_id}, {mode})", "execution_cells": pairs, "total": len(pairs),
        "recovery": PlanRecovery(parent=run_id, mode=mode, cells=sorted(cells),
                                 cells_sha256=hashlib.sha256(canonical_json(sorted(cells))).hexdigest(),
                                 snapshot=fresh.parent_snapshot, recovery_plan_sha256=fresh.plan_sha256),
        "notices": [*parent.notices, f"recovery child of {run_id}: covers {len(pairs)} of "
                    f"{fresh.parent_snapshot.total} cells; never a complete evaluation on its own"]})
    return child.model_copy(update={"plan_sha256": plan_sha256(child)})


def _recoverable(manager: RunManager, run_id: str, mode: str) -> RunState:
    """The run's view, when a recovery of it in `mode` may be planned (a known mode; a terminated live run)."""
    if mode not in MODES:
        raise InvalidInput(f"mode must be one of {', '.join(MODES)}")
    run = manager.get(run_id)
    if run.status not in TERMINAL:
        raise InvalidInput(f"run {run_id} is {run.status}; recover only a terminated run", code="run_not_finished")
    if run.mode != "live":
        raise InvalidInput("recovery applies to live runs only", code="not_live")
    return run


def recovery_plan(manager: RunManager, run_id: str, mode: str) -> RecoveryPlan:
    """The reviewed plan of a recovery of `run_id` in `mode` (the model; the route dumps it at the edge)."""
    run = _recoverable(manager, run_id, mode)
    frozen = manager.plans.get(run.plan)
    targets = {pt.target.id: pt.target for pt in frozen.targets}
    judges = {tid: pt.target for tid, pt in frozen.auxiliary_targets.items()}
    judge_of = {b: o.judge for b, o in frozen.benchmark_options.items() if o.judge}
    judged = set(judge_of) and {c.id: c.benchmark for c in _cases(manager, frozen)}
    claims = claims_of(manager.journal, run_id)
    eligible: list[RecoveryCell] = []
    excluded: list[ExcludedCell] = []
    for c in run_cells(manager.journal, run_id, ordered=True):
        conv = _conversation(manager, c.call)
        if conv is not None:        # a conversation was sent iff one of its calls was
            never_sent = not any(manager.store.get_json(x.record).get("sent") is not False for x in conv.calls)
        else:
            never_sent = c.call is not None and manager.store.get_json(c.call).get("sent") is False
        has_call = (c.call is not None and not never_sent) or c.judge_call is not None
        if c.state == "completed":
            reason = "completed"
        elif c.cell_id in claims:
            reason = "claimed"
        elif c.state in ("ambiguous", "dispatching", "judge_dispatching"):
            reason = "ambiguous_dispatch"
        elif mode == "undispatched" and (has_call or (c.state != "pending" and not never_sent)):
            reason = "already_dispatched"
        elif mode == "failed" and not has_call:
            reason = "never_dispatched"
        elif mode == "failed" and conv is not None and _conversation_unknown(manager, conv, targets[c.target_id],
                                                                             judges):
            reason = "unknown_usage_or_cost"
        elif mode == "failed" and conv is None and c.call and _unknown(manager, targets[c.target_id], c.call):
            reason = "unknown_usage_or_cost"
        elif mode == "failed" and c.judge_call and judged and _unknown(
                manager, judges[judge_of[judged[c.case_id]]], c.judge_call):
            reason = "unknown_usage_or_cost"
        else:
            reason = None
        entry = {"cell_id": c.cell_id, "case_id": c.case_id, "target_id": c.target_id, "state": c.state}
        if reason is None:
            eligible.append(RecoveryCell.model_validate(entry))
        else:
            excluded.append(ExcludedCell.model_validate({**entry, "reason": reason, **(
                {"claimed_by": claims[c.cell_id]} if reason == "claimed" else {})}))
    report, _, _ = manager.report_digest(run_id)
    known = KnownCostReport.model_validate(manager.store.get_json(report)).known_cost_usd()
    plan = RecoveryPlan(
        version=VERSION, parent=run_id, mode=mode,
        parent_snapshot=ParentSnapshot(status=run.status, plan_sha256=run.plan_sha256,
                                       total=run.progress.total, known_cost_usd=known),
        eligible=eligible, excluded=excluded,
        excluded_counts={r: sum(e.reason == r for e in excluded) for r in sorted({e.reason for e in excluded})},
        requires_acknowledgement=mode == "failed",
        note=("new attempts of known-failed cells cost extra; confirm with --acknowledge-new-attempt"
              if mode == "failed" else "continues only cells that never dispatched a model call"),
        plan_sha256="", selected_cells=[e.cell_id for e in eligible])
    return plan.model_copy(update={"plan_sha256": _hash(plan)})


def no_cells() -> InvalidInput:
    """The refusal of a recovery that selects no cell (sr-bench's plan or upstream's cells alike)."""
    return InvalidInput("recover needs at least one selected cell: a recovery runs only cells the reviewed plan "
                        "lists as eligible, and this selection is empty (the plan may have none in this mode; "
                        "try recover-plan with the other mode)",
                        code="recovery_cells_required", details={"dispatch_started": False})


def selected_ids(cells: object) -> list[str]:
    """The selected cells (as given) as cell ids: each given as its id or as upstream's {case_id, target_id}."""
    if cells == []:                     # what recover-plan writes when no cell is eligible
        raise no_cells()
    if not isinstance(cells, list):
        raise InvalidInput("selected_cells must be a non-empty list of cell ids or {case_id, target_id} objects")
    out = []
    for i, c in enumerate(cells):
        if isinstance(c, dict) and set(c) == {"case_id", "target_id"} and all(isinstance(v, str) for v in c.values()):
            out.append(cell_id(c["case_id"], c["target_id"]))
        elif isinstance(c, str) and c:
            out.append(c)
        else:
            raise InvalidInput(f"selected_cells[{i}]: a cell id or an object {{case_id, target_id}}")
    return out


def _binds(row: jruns.RunRow, parent: str, mode: object, cells: list[str]) -> bool:
    """The run row was created by this recovery submission: its extra's recovery_binding has this parent,
    mode (as submitted, not yet checked) and sorted cells."""
    bound = row.extras().recovery_binding
    return bound is not None and (bound.parent, bound.mode, bound.cells) == (parent, mode, cells)


def recover(manager: RunManager, run_id: str, submitted: object, key: str | None, acknowledge: bool,
            on_create: OnCreate | None = None) -> tuple[RunState, bool]:
    """`on_create(conn, child_id)` runs in the child's insert transaction (its owner, its experiment link)."""
    if not key:
        raise InvalidInput("recover needs --idempotency-key (repeat an uncertain submission with the same key)",
                           code="recovery_plan_required")
    if not isinstance(submitted, dict) or submitted.get("kind") != "recovery-plan":
        raise InvalidInput("not a recovery plan: run `sr-bench recover-plan RUN_ID --mode M --output F` first",
                           code="recovery_plan_required")
    parent_id = submitted.get("parent_run_id", submitted.get("parent"))
    if parent_id != run_id:
        raise InvalidInput(f"the recovery plan is for {parent_id}, not {run_id}")
    mode = submitted.get("mode")
    cells = selected_ids(submitted.get("selected_cells"))
    if len(set(cells)) != len(cells):
        raise InvalidInput("selected_cells has duplicates")
    bound = jruns.run_by_idem_key(manager.journal, key)
    binding = (run_id, mode, sorted(cells))
    if bound is not None:
        if _binds(bound, *binding):
            return manager.get(bound.id), False
        raise Conflict(f"idempotency key {key!r} is bound to another recovery (parent, mode or cells differ)",
                       code="idempotency_conflict")
    if mode == "failed" and not acknowledge:
        raise InvalidInput("mode failed makes new, paid attempts: pass --acknowledge-new-attempt",
                           code="acknowledgement_required")
    fresh = recovery_plan(manager, run_id, str(mode))
    if fresh.plan_sha256 != submitted.get("plan_sha256"):
        again = jruns.run_by_idem_key(manager.journal, key)
        if again is not None and _binds(again, *binding):
            return manager.get(again.id), False      # the same submission raced itself: bind it
        raise InvalidInput("the parent's cells changed since this recovery plan was made (e.g. another recovery "
                           "claimed some); make a new plan", code="recovery_plan_required",
                           details={"dispatch_started": False})
    eligible = {e.cell_id: e for e in fresh.eligible}
    outside = [c for c in cells if c not in eligible]
    if outside:
        raise InvalidInput(f"{len(outside)} selected cell(s) are not eligible (first: {outside[0]}); make a new plan",
                           code="recovery_plan_required", details={"dispatch_started": False})
    parent = manager.plans.get(manager.get(run_id).plan)
    plan = _child_plan(parent, run_id, fresh.mode, cells, [[eligible[c].case_id, eligible[c].target_id]
                                                           for c in cells], fresh)

    bind = jruns.RecoveryBinding(parent=run_id, mode=fresh.mode, cells=sorted(cells))

    def claim(c: sqlite3.Connection, child: str) -> None:
        claim_cells(c, run_id, cells, child, bind)
        if on_create is not None:
            on_create(c, child)
    return manager.create_run(plan, key, parent=run_id, claim=claim)
