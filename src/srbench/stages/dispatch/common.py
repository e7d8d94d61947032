"""What the single-call dispatcher (stages/dispatch/calls.py) and the conversation dispatcher
(stages/dispatch/conversations.py) share: a cell, the run journal they write through, the run's stop
flags, the stored request object and its headers, a target's config-hash check and the call record.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from pydantic import JsonValue

from srbench.errors import SrBenchError
from srbench.schemas.call import CallRecord, RequestObject, Timings
from srbench.schemas.cell import CallState, CellState, TerminalCellState
from srbench.schemas.dataset import Case
from srbench.schemas.early_stop import EarlyStopRecord
from srbench.schemas.event import EventType
from srbench.schemas.event_data import EventData
from srbench.schemas.plan import Plan, StopScope
from srbench.schemas.target import Target
from srbench.targets import routers
from srbench.targets.transport import CallOutcome, build_body


def stop_scope(plan: Plan) -> StopScope:
    """What a target's systematic failure stops: "target" (the default) or "run"."""
    return plan.stop_on_systematic or "target"


@dataclass(frozen=True, slots=True)
class Cell:
    """One planned cell as dispatch takes it (slots: a 100k-cell run holds them all while it dispatches)."""

    cell_id: str
    seq: int
    case_id: str
    target_id: str


class ConversationJournal(Protocol):
    """What a conversation needs from the journal (service/journal/cells.py RunJournalAdapter)."""

    async def call_dispatching(self, cell: Cell, index: int, role: str, target_id: str, request: str,
                               objects: list[bytes], reserve_usd: float | None = None) -> bool: ...

    async def call_finished(self, cell: Cell, index: int, state: CallState, call: str, error_class: str | None,
                            objects: list[bytes], cost_usd: float | None = None) -> None: ...

    async def conversation_finished(self, cell: Cell, state: TerminalCellState, call: str, error_class: str | None,
                                    error: str | None, objects: list[bytes], cost_usd: float | None = None
                                    ) -> None: ...


class RunJournal(ConversationJournal, Protocol):
    """What dispatch needs from the journal (implemented by the service), a conversation's calls included."""

    async def dispatching(self, cell: Cell, request: str, objects: list[bytes],
                          reserve_usd: float | None = None) -> bool:
        """Durably store `objects`, then commit the cell as dispatching with the request digest.

        With a budget, `reserve_usd` is held against the run's cap in the same transaction; False
        (nothing committed, nothing to send) when spent + reserved + reserve_usd would exceed it."""

    async def finished(self, cell: Cell, state: CellState, call: str | None, error_class: str | None,
                       error: str | None, objects: list[bytes], judge_request: str | None = None,
                       cost_usd: float | None = None, judge_reserve_usd: float | None = None) -> bool:
        """Durably store `objects` (SSE transcript, call record), then commit the state: terminal, or
        `judge_dispatching` with the judge's request digest (committed before the judge call is sent).
        The cell's reservation is settled with `cost_usd` (an unknown cost keeps it held). False when
        the judge's reservation does not fit the budget (the cell then fails with `budget_stop`)."""

    async def judged(self, cell: Cell, state: TerminalCellState, judge_call: str | None, error_class: str | None,
                     error: str | None, objects: list[bytes], cost_usd: float | None = None) -> None:
        """Durably store the judge's objects, then commit the cell's terminal state."""

    async def event(self, type_: EventType, data: EventData) -> None: ...


@dataclass
class RunControl:
    """Shared stop flags of one run."""

    cancel: asyncio.Event
    deadline: float                 # time.monotonic() deadline of the whole run
    stop_reason: str | None = None
    cancel_reason: str | None = None
    target_stops: dict[str, str] = field(default_factory=dict)    # target id → why its dispatch stopped
    early_stop: EarlyStopRecord | None = None    # the plan's stopping rule decided: no new subject call
    fault: SrBenchError | None = None      # the storage fault that stopped dispatch (StorageFull/StorageFailed)

    def stopped(self) -> bool:
        return self.cancel.is_set() or self.stop_reason is not None or time.monotonic() >= self.deadline

    def target_stopped(self, target_id: str) -> bool:
        return target_id in self.target_stops

    def stop_target(self, target_id: str, reason: str, scope: str) -> bool:
        """Stop dispatching to `target_id` (and everything when `scope` is "run"); True the first time."""
        if target_id in self.target_stops or self.stop_reason is not None:
            return False
        self.target_stops[target_id] = reason
        if scope == "run":
            self.stop_reason = reason
        return True

    @property
    def ended_reason(self) -> str | None:
        """Why the run did not carry out its whole plan: the run's stop, else every stopped target's."""
        if self.stop_reason is not None or not self.target_stops:
            return self.stop_reason
        return "; ".join(self.target_stops.values()) + " (the other targets went on)"

    def dispatch_closed(self) -> bool:
        """No new subject call: stopped, or stopped early (judges of answered calls still run)."""
        return self.stopped() or self.early_stop is not None


def request_object(target: Target, case: Case, params: Mapping[str, JsonValue], cell: Cell,
                   messages: Sequence[Mapping[str, JsonValue]] | None = None, role: str = "subject",
                   extras: Mapping[str, JsonValue] | None = None) -> RequestObject:
    """The stored request: endpoint, body and the *names* of headers (never their values); `role` one of
    CallRole (the conversation dispatcher checks a benchmark's role before it asks)."""
    msgs = messages if messages is not None else [m.model_dump() for m in case.messages]
    body = build_body(target.model, msgs, params, {}, extras)
    headers = ["authorization"] if target.api_key_env else []
    if target.kind == "mom":
        headers += list(routers.for_target(target).header_names)
    return RequestObject(url=target.base_url + "/chat/completions", body=body, header_names=headers,
                         target_id=target.id, case_id=case.id, cell_id=cell.cell_id, api_key_env=target.api_key_env,
                         role=role)


def preview_request(target: Target, case: Case, cell: Cell, body: dict[str, JsonValue]) -> RequestObject:
    """The stored request of a preview call (IT-3): the router's decision only (no api_key_env)."""
    assert target.preview_url is not None           # a preview plan names only targets with one (plan/freeze.py)
    return RequestObject(url=target.preview_url, body=body, role="preview", target_id=target.id, case_id=case.id,
                         cell_id=cell.cell_id, header_names=["authorization", "x-sr-bench-expected-config-hash"])


def request_headers(target: Target) -> dict[str, str]:
    headers: dict[str, str] = {}
    if target.api_key_env:
        key = os.environ.get(target.api_key_env)
        if key:
            headers["authorization"] = f"Bearer {key}"
    if target.kind == "mom":
        headers.update(routers.for_target(target).request_headers(target))
    return headers


def config_hash_problem(target: Target, outcome: CallOutcome) -> str | None:
    if target.kind != "mom" or not target.config_hash:
        return None
    seen = routers.for_target(target).attribute(target, outcome.headers, outcome.response_model,
                                                outcome.usage_raw).config_hash
    if seen is not None and seen != target.config_hash:
        return f"router answered with config_hash {seen}, the target pins {target.config_hash}"
    return None


def call_record(outcome: CallOutcome, request: str, sse: str | None, *, status: str | None = None,
                error_class: str | None = None, error: str | None = None) -> CallRecord:
    return CallRecord(
        request=request, status=status or outcome.status, error_class=error_class or outcome.error_class,
        error=error or outcome.error, http_status=outcome.http_status, headers=dict(outcome.headers), sse=sse,
        text=outcome.text, tool_calls=outcome.tool_calls or None, reasoning_chars=outcome.reasoning_chars,
        finish_reason=outcome.finish_reason,
        response_model=outcome.response_model, usage_raw=outcome.usage_raw, usage=outcome.usage,
        timings=Timings(started_at=outcome.started_at, ttft_s=outcome.ttft_s, latency_s=outcome.latency_s),
        bytes_received=outcome.bytes_received, sent=outcome.sent,
    )
