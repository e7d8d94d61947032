"""The calls of multi-call cells on the run's calls pages (GET /runs/{id}/calls[/{cell}]).

A conversation cell's summary lists every call of the conversation, in order, with its role and
target: from the journal's `calls` rows (which also show calls still in flight or left ambiguous by
a restart), else — a run pulled from a team store carries no `calls` rows — from the stored
conversation record. Each call says what its stored record says (status, HTTP status, finish
reason, the four token buckets, timings, the model that answered, the router's choice, the number
of tool calls); a damaged or missing record marks that call only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from srbench.errors import DamagedObject, NotFound
from srbench.schemas.conversation import ConversationRecord
from srbench.schemas.target import Target
from srbench.service.api.faults import record_damage
from srbench.service.api.responses import ConversationCall
from srbench.service.journal.cell_rows import CallRow, calls_of
from srbench.targets import routers

if TYPE_CHECKING:
    from srbench.service.app import Service


def call_rows(service: Service, run_id: str, cell_ids: list[str]) -> dict[str, list[CallRow]]:
    """The `calls` rows of these cells (one query), by cell, in call order, as an unrecorded end of the run
    will record them (`Endings.call`)."""
    endings = service.runs.endings
    return {cell: [endings.call(r) for r in rows] for cell, rows in calls_of(service.journal, run_id, cell_ids).items()}


def _one(service: Service, run_id: str, cell_id: str, entry: ConversationCall, mom: Target | None = None
         ) -> ConversationCall:
    """One call with what its stored record says (the record is read as JSON: its fields as stored)."""
    if not entry.call:
        return entry
    try:
        c = service.objects.get_json(entry.call)
    except (DamagedObject, NotFound) as exc:
        if isinstance(exc, DamagedObject):
            record_damage(service, exc, run_id, f"call {entry.index} of cell {cell_id}")
        return entry.model_copy(update={"damaged": True, "damage": exc.message})
    timings = c.get("timings") or {}
    return ConversationCall.model_validate({
        **{k: getattr(entry, k) for k in entry.model_fields_set}, "status": c.get("status"),
        "http_status": c.get("http_status"), "finish_reason": c.get("finish_reason"), "usage": c.get("usage"),
        "latency_s": timings.get("latency_s"), "ttft_s": timings.get("ttft_s"), "response_model": c.get("response_model"),
        "selected_model": routers.selected_model(mom if entry.role == "subject" else None, c),
        "tool_calls": len(c.get("tool_calls") or [])})


def conversation_calls(service: Service, run_id: str, cell_id: str, rows: list[CallRow],
                       record: ConversationRecord | None, mom: Target | None = None) -> list[ConversationCall]:
    """Every call of one conversation cell, summarised (`mom`: the cell's MoM target, whose router adapter
    names the model that served each subject call)."""
    if rows:
        entries = [ConversationCall(index=r.idx, role=r.role, target_id=r.target_id, state=r.state, request=r.request,
                                    call=r.call, error_class=r.error_class, cost_usd=r.cost_usd, damaged=False)
                   for r in rows]
    else:
        entries = [ConversationCall(index=c.index, role=c.role, target_id=c.target_id, state=c.status,
                                    request=c.request, call=c.record, error_class=c.error_class,
                                    cost_usd=c.cost_usd, damaged=False)
                   for c in (record.calls if record is not None else [])]
    return [_one(service, run_id, cell_id, e, mom) for e in entries]
