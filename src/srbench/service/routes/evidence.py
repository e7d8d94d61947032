"""HTTP handlers for a run's evidence pages: results, calls (and one call), events — upstream's cursors.

Results follow the report's rows (the cursor is a row's 1-based position), read from the results'
fixed-size pages (stages/report/results.py); totals come from the journal's counters: every page is O(page). A cell makes a subject
call and, for judged benchmarks, a judge call; each is one row of the calls page, named by
`wire.call_id`, and the cursor is ``seq * 8 + role + 1`` (a keyset over the cells' sequence numbers).
`/calls/{id}` also takes a cell id (sr-bench's own name) for that cell's subject call. A multi-call cell
(a conversation) is one row whose ``calls`` lists every call of it, in order, with its role
(service/runs/call_pages.py); its ``call`` is the conversation record. Events are ≤ 1000 a page after a
sequence number. The journal reads are typed functions in service/journal/evidence.py.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

from aiohttp import web
from pydantic import JsonValue

from srbench.errors import DamagedObject, NotFound
from srbench.schemas.conversation import ConversationRecord
from srbench.schemas.target import Target
from srbench.schemas.target_checks import FailureClass, TargetFailures
from srbench.service.api import requests as rq
from srbench.service.api import responses as rs
from srbench.service.api.bindings import route
from srbench.service.api.faults import record_damage
from srbench.service.api.http import MAX_OFFSET, query, svc
from srbench.service.journal import evidence as jev
from srbench.service.journal.cell_rows import CellRow
from srbench.service.runs.call_pages import call_rows, conversation_calls
from srbench.service.wire import calls as wire_calls
from srbench.service.wire import projections as wire
from srbench.stages.report.results import page as results_page
from srbench.targets import routers
from srbench.targets.accounting import call_cost
from srbench.targets.failures import failure_hint

if TYPE_CHECKING:
    from srbench.service.app import Service
    from srbench.service.journal.writer import Journal

STRIDE = wire.CURSOR_STRIDE


@route("GET", "/runs/{run_id}/results", "Per-cell results, by cursor", query=rq.After, answer=rs.Results)
async def run_results(request: web.Request, q: rq.After) -> rs.Results:
    """O(page): the run's current results object (its report head's when nothing changed) is an index
    of fixed-size pages, so the rows at a position are read from at most two pages."""
    service = svc(request)
    digest = await asyncio.to_thread(service.runs.results_digest, request.match_info["run_id"])
    start = min(q.offset, MAX_OFFSET) if q.after == 0 and q.offset is not None else q.after
    chunk, total = await asyncio.to_thread(results_page, service.objects, digest, offset=start, limit=q.limit)
    grades = await asyncio.to_thread(_grades, service, chunk)
    end = start + len(chunk)
    return rs.Results(results=[{**wire.wire_result(r), **wire_calls.result_fields(r, grades.get(str(r.get("grade"))))}
                               for r in chunk], total=total, limit=q.limit, next_cursor=end if end < total else None)


def _grades(service: Service, rows: list[dict[str, JsonValue]]) -> dict[str, dict[str, JsonValue]]:
    """The stored grades of a page's graded rows (upstream's answer and details); a damaged one is left out."""
    digests = [d for d in (r.get("grade") for r in rows) if isinstance(d, str)]
    service.objects.prefetch(digests)
    packed = service.objects.get_packed(digests)
    out = {}
    for d in digests:
        try:
            out[d] = json.loads(packed[d]) if d in packed else service.objects.get_json(d)
        except (DamagedObject, NotFound):
            continue
    return out


def _roles(row: CellRow) -> list[str]:
    roles = ["subject"]
    if (row.judge_request or row.judge_call or row.state == "judge_dispatching"
            or row.error_class == "ambiguous_judge_dispatch"):
        roles.append("judge")
    return roles


def _run_targets(service: Service, run_id: str) -> dict[str, Target]:
    """The run's subject targets by id (a MoM's router adapter names the model that served a call), and its
    judge under the key ``judge`` when every benchmark that has one names the same (it prices judge calls)."""
    plan = service.runs.plans.get(service.runs.get(run_id).plan)
    out = {pt.target.id: pt.target for pt in plan.targets}
    judges = {o.judge for o in plan.benchmark_options.values() if o.judge}
    if len(judges) == 1 and (judge := plan.auxiliary_targets.get(judges.pop())) is not None:
        out[JUDGE] = judge.target
    return out


JUDGE = "\x00judge"           # not a target id (ids are printable)


def _summary(service: Service, run_id: str, row: CellRow, role: str, targets: dict[str, Target] | None = None,
             packed: Mapping[str, bytes] | None = None) -> rs.CallSummary:
    """One row of the calls page: its fields gathered, then validated once (a page validates 100 of them);
    `packed`: the page's call records already read (`ObjectStore.get_packed`), the others read here."""
    request_d, call_d = (row.request, row.call) if role == "subject" else (row.judge_request, row.judge_call)
    priced = (targets or {}).get(row.target_id if role == "subject" else JUDGE)
    mom = priced if priced is not None and priced.kind == "mom" and role == "subject" else None
    fields: dict[str, object] = {
        "id": wire.call_id(run_id, row.seq, role), "case_id": row.case_id, "target_id": row.target_id, "role": role,
        "cell_id": row.cell_id, "seq": row.seq, "state": row.state, "error_class": row.error_class,
        "error": row.error, "request": request_d, "call": call_d, "damaged": False, "status": ""}
    record_status = None
    if role == "subject" and not call_d and row.state in ("dispatching", "ambiguous"):
        rows = call_rows(service, run_id, [row.cell_id]).get(row.cell_id)
        if rows:                    # a conversation in flight, or left ambiguous by a restart
            fields["calls"] = conversation_calls(service, run_id, row.cell_id, rows, None, mom)
    if call_d:
        try:
            raw = (packed or {}).get(call_d)         # the stored call record, read as JSON
            c = json.loads(raw) if raw is not None else service.objects.get_json(call_d)
        except (DamagedObject, NotFound) as exc:    # one bad object marks its row, never the whole page
            if isinstance(exc, DamagedObject):
                record_damage(service, exc, run_id, f"{role} call of cell {row.cell_id}")
            fields.update(damaged=True, damage=exc.message)
        else:
            if c.get("kind") == "conversation":     # a multi-call cell: each of its calls, with its role
                fields["calls"] = conversation_calls(service, run_id, row.cell_id,
                                                     call_rows(service, run_id, [row.cell_id]).get(row.cell_id, []),
                                                     ConversationRecord.model_validate(c), mom)
                fields["status"] = wire.call_status(row.state, row.error_class, row.state, role)
                return rs.CallSummary.model_validate(fields)
            record_status = c["status"]
            cost = None if priced is None else call_cost(priced, c)
            fields.update(http_status=c.get("http_status"), finish_reason=c.get("finish_reason"),
                          usage=c.get("usage"), latency_s=c["timings"].get("latency_s"),
                          ttft_s=c["timings"].get("ttft_s"), response_model=c.get("response_model"),
                          selected_model=routers.selected_model(mom, c) or (      # a single target: its reply's model
                              c.get("response_model") if role == "subject" and mom is None else None),
                          **wire_calls.call_fields(c, cost, priced is not None and priced.kind == "mom"))
    fields["status"] = wire.call_status(row.state, row.error_class, record_status, role)
    return rs.CallSummary.model_validate(fields)


def _cursor_at(journal: Journal, run_id: str, offset: int) -> int:
    """The cursor after the first `offset` rows of the calls page (sr-bench's offset paging): the position
    of row `offset` - 1, found by one indexed query (`jev.call_row_at`)."""
    if offset == 0:
        return 0
    at = jev.call_row_at(journal, run_id, offset - 1)
    return 2**62 if at is None else at[0] * STRIDE + at[1] + 1


def _calls_page(service: Service, run_id: str, after: int, limit: int, active: bool) -> rs.Calls:
    """The `limit` rows after cursor `after` (with `active`, only calls in flight); each row's record is read
    once, and no further row is summarised than the one that says another page follows."""
    journal = service.journal
    seq = max(0, (after - 1) // STRIDE)
    picked: list[tuple[int, rs.CallSummary]] = []
    more = False
    targets = _run_targets(service, run_id)
    while not more:
        # the cursor's own cell (a judge row may follow it), the page's and the next one's: one read in most pages
        rows = [service.runs.endings.cell(r) for r in jev.sent_cells_from(journal, run_id, seq, limit + 2)]
        records = [d for r in rows[:limit + 1] for d in (r.call, r.judge_call) if d]
        service.objects.prefetch(records)
        packed = service.objects.get_packed(records)
        for row, role in ((r, role) for r in rows for role in _roles(r)):
            pos = row.seq * STRIDE + wire.ROLES.index(role) + 1
            if pos <= after:
                continue
            if len(picked) == limit and not active:     # a row beyond the page: another page follows
                more = True
                break
            item = _summary(service, run_id, row, role, targets, packed)
            if not active or item.status == "sent":
                if len(picked) == limit:
                    more = True
                    break
                picked.append((pos, item))
        if len(rows) <= limit + 1:
            break
        seq = rows[-1].seq + 1
    total = jev.call_total(journal, run_id)
    return rs.Calls(calls=[item for _, item in picked], total=total, limit=limit,
                    next_cursor=picked[-1][0] if more else None)


@route("GET", "/runs/{run_id}/calls", "Call summaries, by cursor (a damaged call marks its row)",
       query=rq.CallsAfter, answer=rs.Calls)
async def run_calls(request: web.Request) -> rs.Calls:
    service = svc(request)
    run_id = request.match_info["run_id"]
    service.runs.get(run_id)
    q = query(request, rq.CallsAfter)
    after = q.after
    if after == 0 and q.offset:
        after = await asyncio.to_thread(_cursor_at, service.journal, run_id, min(q.offset, MAX_OFFSET))
    return await asyncio.to_thread(_calls_page, service, run_id, after, q.limit, q.active == "true")


@route("GET", "/runs/{run_id}/calls/{call_id}", "One full call record", answer=rs.CallDetail)
async def run_call(request: web.Request) -> rs.CallDetail:
    service = svc(request)
    run_id, given = request.match_info["run_id"], request.match_info["call_id"]
    service.runs.get(run_id)
    parsed = wire.parse_call_id(run_id, given)
    if parsed is not None:
        row = jev.cell_by_seq(service.journal, run_id, parsed[0])
        role = parsed[1]
    else:           # sr-bench's own name: a cell id stands for the cell's subject call
        row = jev.cell_by_id(service.journal, run_id, given)
        role = "subject"
    if row is None or role not in _roles(row) or row.state == "pending":
        raise NotFound(f"no call {given!r} in run {run_id!r}")
    row = service.runs.endings.cell(row)            # as the run view counts it (an unrecorded end)
    summary = _summary(service, run_id, row, role, _run_targets(service, run_id))
    more: dict[str, JsonValue] = {}          # the stored objects the answer carries whole, as JSON
    if summary.call:        # the one full call: a damaged record is an error (503), never a row marked damaged
        record = more["record"] = service.objects.get_json(summary.call)
        if record.get("kind") == "call":
            more.update(wire_calls.call_detail_fields(record))
        trajectory = record.get("trajectory") if record.get("kind") == "conversation" else None
        if isinstance(trajectory, str) and trajectory.startswith("b3:"):     # an agent's stored trajectory
            more["trajectory_object"] = service.objects.get_json(trajectory)
    if summary.request:
        more["request_object"] = service.objects.get_json(summary.request)
    return rs.extend(summary, rs.CallDetail, **more)


@route("GET", "/runs/{run_id}/events", "Events after a sequence number, 1000 a page", query=rq.EventsAfter,
       answer=rs.Events)
async def run_events(request: web.Request) -> rs.Events:
    service = svc(request)
    run_id = request.match_info["run_id"]
    service.runs.get(run_id)
    q = query(request, rq.EventsAfter)
    rows = jev.events_after(service.journal, run_id, q.after, q.limit)
    total = jev.event_count(service.journal, run_id)
    return rs.Events(events=[wire.wire_event(r, json.loads(r.data)) for r in rows], total=total)


def _failures(service: Service, run_id: str) -> rs.RunFailures:
    """The run's failures per planned target (plan order), each class with the first message and a hint."""
    plan = service.runs.plans.get(service.runs.get(run_id).plan)
    targets = {pt.target.id: pt.target for pt in plan.targets}
    groups: dict[str, list[FailureClass]] = {}
    for g in jev.failure_groups(service.journal, run_id):
        t = targets.get(g.target_id)
        hint = None if t is None else failure_hint(g.error_class, g.first_error, t.base_url, t.model, t.api_key_env)
        groups.setdefault(g.target_id, []).append(
            FailureClass(error_class=g.error_class, cells=g.cells, first_error=g.first_error, hint=hint))
    order = [*targets, *(tid for tid in groups if tid not in targets)]
    return rs.RunFailures(run_id=run_id, targets=[
        TargetFailures(target_id=tid, base_url=targets[tid].base_url if tid in targets else None,
                       classes=groups[tid]) for tid in order if tid in groups])


@route("GET", "/runs/{run_id}/failures", "Why cells failed: per target, each failure class with its count, first "
       "message and a hint", answer=rs.RunFailures)
async def run_failures(request: web.Request) -> rs.RunFailures:
    return await asyncio.to_thread(_failures, svc(request), request.match_info["run_id"])
