"""HTTP handlers for a run's evidence pages: results, calls (and one call), events — upstream's cursors.

Results are a keyset over the report's results pages (the cursor is a row's seq + 1; 0 is the start).
A cell makes a subject call and, for judged benchmarks, a judge call — or, for a conversation (a
multi-call cell), the calls of the journal's `calls` table; each is one row of the calls page, named
by `wire.call_id` (the cell's seq and the call's slot), and the cursor is ``seq * 256 + slot + 1`` (a
keyset over the cells' sequence numbers).
`/calls/{id}` also takes a cell id (sr-bench's own name) for that cell's subject call. Events are ≤ 1000
a page after a sequence number.
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from srbench.errors import DamagedObject, NotFound
from srbench.service import api_requests as rq
from srbench.service import pages, wire
from srbench.service.faults import record_damage
from srbench.service.http import MAX_OFFSET, ok, query, svc
from srbench.stages.results import page as results_page

STRIDE = wire.CURSOR_STRIDE
WIRE_ROLE = {"user_simulator": "simulator"}        # a conversation's roles under upstream's names


async def run_results(request: web.Request) -> web.Response:
    """Keyset over the results pages (`stages.results`): the cursor is the last row's seq + 1."""
    service = svc(request)
    q = query(request, rq.After)
    digest = await asyncio.to_thread(service.runs.results_digest, request.match_info["run_id"])
    if q.after == 0 and q.offset is not None:
        rows, total = await asyncio.to_thread(results_page, service.objects, digest, offset=min(q.offset, MAX_OFFSET),
                                              limit=q.limit + 1)
    else:
        rows, total = await asyncio.to_thread(results_page, service.objects, digest,
                                              after=q.after - 1 if q.after else None, limit=q.limit + 1)
    more = len(rows) > q.limit
    rows = rows[:q.limit]
    return ok(wire.page("results", [wire.wire_result(r) for r in rows], total, q.limit,
                        rows[-1]["seq"] + 1 if more else None))


def _slots(row: Any, conversation: list[Any]) -> list[tuple[int, str, Any]]:
    """(slot, role, its calls-table row or None) of each call a cell made: a conversation's calls by
    index (mc's `calls` table), else the cell's subject call and, when judged, its judge call."""
    if conversation:
        return [(c["idx"], WIRE_ROLE.get(c["role"], c["role"]), c) for c in conversation]
    out = [(0, "subject", None)]
    if (row["judge_request"] or row["judge_call"] or row["state"] == "judge_dispatching"
            or row["error_class"] == "ambiguous_judge_dispatch"):
        out.append((1, "judge", None))
    return out


def _summary(service: Any, run_id: str, row: Any, slot: int, role: str, conv: Any) -> dict[str, Any]:
    if conv is not None:
        request_d, call_d, state, error_class = conv["request"], conv["call"], conv["state"], conv["error_class"]
    elif role == "subject":
        request_d, call_d, state, error_class = row["request"], row["call"], row["state"], row["error_class"]
    else:
        request_d, call_d, state, error_class = row["judge_request"], row["judge_call"], row["state"], row["error_class"]
    out: dict[str, Any] = {"id": wire.call_id(run_id, row["seq"], slot), "case_id": row["case_id"],
                           "target_id": conv["target_id"] if conv is not None else row["target_id"], "role": role,
                           "cell_id": row["cell_id"], "seq": row["seq"], "state": row["state"],
                           "error_class": error_class, "error": row["error"], "request": request_d, "call": call_d,
                           "damaged": False}
    record_status = None
    if call_d:
        try:
            c = service.objects.get_json(call_d)
        except (DamagedObject, NotFound) as exc:    # one bad object marks its row, never the whole page
            if isinstance(exc, DamagedObject):
                record_damage(service, exc, run_id, f"{role} call of cell {row['cell_id']}")
            out.update(damaged=True, damage=exc.message)
        else:
            record_status = c["status"]
            out.update(http_status=c.get("http_status"), finish_reason=c.get("finish_reason"), usage=c.get("usage"),
                       latency_s=c["timings"].get("latency_s"), ttft_s=c["timings"].get("ttft_s"),
                       response_model=c.get("response_model"),
                       selected_model=(c.get("headers") or {}).get("x-vsr-selected-model"))
    if conv is not None:
        out["status"] = ("sent" if state == "dispatching" else "sent_unknown" if state == "ambiguous"
                         else record_status or state)
    else:
        out["status"] = wire.call_status(state, error_class, record_status, role)
    return out


def _conversations(journal: Any, run_id: str, cells: list[Any]) -> dict[str, list[Any]]:
    if not cells:
        return {}
    ids = [r["cell_id"] for r in cells]
    out: dict[str, list[Any]] = {}
    for c in journal.query(f"SELECT * FROM calls WHERE run_id=? AND cell_id IN ({','.join('?' * len(ids))}) "
                           "ORDER BY cell_id, idx", (run_id, *ids)):
        out.setdefault(c["cell_id"], []).append(c)
    return out


def _cursor_at(journal: Any, run_id: str, offset: int) -> int:
    """The cursor after the first `offset` rows of the calls page (sr-bench's offset paging)."""
    if offset == 0:
        return 0
    seen, seq = 0, -1
    while True:
        cells = journal.query("SELECT * FROM cells WHERE run_id=? AND state!='pending' AND seq>? ORDER BY seq "
                              "LIMIT 500", (run_id, seq))
        if not cells:
            return 2**62
        conv = _conversations(journal, run_id, cells)
        for row in cells:
            for slot, _, _ in _slots(row, conv.get(row["cell_id"], [])):
                seen += 1
                if seen == offset:
                    return int(row["seq"]) * STRIDE + slot + 1
        seq = cells[-1]["seq"]


def _calls_total(service: Any, run_id: str) -> int:
    """Every call made: the cells that left pending (the journal's counters), plus each judge call,
    plus a conversation's calls beyond its first (one COUNT each: SQL, not a read of the rows)."""
    journal = service.journal
    started = sum(n for state, n in service.runs.counts(run_id).items() if state != "pending")
    judged = journal.one("SELECT COUNT(*) AS n FROM cells WHERE run_id=? AND (judge_request IS NOT NULL OR "
                         "judge_call IS NOT NULL OR state='judge_dispatching' OR "
                         "error_class='ambiguous_judge_dispatch')", (run_id,))["n"]
    extra = journal.one("SELECT COUNT(*) - COUNT(DISTINCT cell_id) AS n FROM calls WHERE run_id=?", (run_id,))["n"]
    return int(started + judged + (extra or 0))


def _calls_page(service: Any, run_id: str, after: int, limit: int, active: bool) -> dict[str, Any]:
    journal = service.journal
    seq = max(0, (after - 1) // STRIDE)
    picked: list[tuple[int, dict[str, Any]]] = []
    while len(picked) <= limit:
        rows = journal.query("SELECT * FROM cells WHERE run_id=? AND state!='pending' AND seq>=? ORDER BY seq "
                             "LIMIT ?", (run_id, seq, limit + 1))
        conv = _conversations(journal, run_id, rows)
        for row in rows:
            for slot, role, call_row in _slots(row, conv.get(row["cell_id"], [])):
                pos = row["seq"] * STRIDE + slot + 1
                if pos <= after:
                    continue
                item = _summary(service, run_id, row, slot, role, call_row)
                if not active or item["status"] == "sent":
                    picked.append((pos, item))
        if len(rows) <= limit:
            break
        seq = rows[-1]["seq"] + 1
    more = len(picked) > limit
    return wire.page("calls", [item for _, item in picked[:limit]], _calls_total(service, run_id), limit,
                     picked[limit - 1][0] if more else None)


async def run_calls(request: web.Request) -> web.Response:
    service = svc(request)
    run_id = request.match_info["run_id"]
    service.runs.get(run_id)
    q = query(request, rq.CallsAfter)
    after = q.after
    if after == 0 and q.offset:
        after = await asyncio.to_thread(_cursor_at, service.journal, run_id, min(q.offset, MAX_OFFSET))
    return ok(await asyncio.to_thread(_calls_page, service, run_id, after, q.limit, q.active == "true"))


async def run_call(request: web.Request) -> web.Response:
    service = svc(request)
    run_id, given = request.match_info["run_id"], request.match_info["call_id"]
    service.runs.get(run_id)
    parsed = wire.parse_call_id(run_id, given)
    if parsed is not None:
        row = service.journal.one("SELECT * FROM cells WHERE run_id=? AND seq=?", (run_id, parsed[0]))
        slot = parsed[1]
    else:           # sr-bench's own name: a cell id stands for the cell's first (subject) call
        row = service.journal.one("SELECT * FROM cells WHERE run_id=? AND cell_id=?", (run_id, given))
        slot = 0
    found = None
    if row is not None and row["state"] != "pending":
        conv = _conversations(service.journal, run_id, [row]).get(row["cell_id"], [])
        found = next((x for x in _slots(row, conv) if x[0] == slot), None)
    if row is None or found is None:
        raise NotFound(f"no call {given!r} in run {run_id!r}")
    out = _summary(service, run_id, row, *found)
    call_d, request_d = out["call"], out["request"]
    if call_d:              # the one full call: a damaged record is an error (503), never a row marked damaged
        out["record"] = service.objects.get_json(call_d)
    if request_d:
        out["request_object"] = service.objects.get_json(request_d)
    return ok(out)


async def run_events(request: web.Request) -> web.Response:
    service = svc(request)
    run_id = request.match_info["run_id"]
    service.runs.get(run_id)
    q = query(request, rq.EventsAfter)
    events, total = pages.events(service.journal, run_id, q.after, q.limit)     # total: the run's counter
    return ok({"events": [{"seq": e["seq"], "at": wire.iso(e["ts"]), "kind": e["type"], "data": e["data"]}
                          for e in events], "total": total,
               "next_cursor": events[-1]["seq"] if len(events) >= q.limit else None})
