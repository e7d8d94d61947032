"""Dispatch of multi-call cells: a benchmark's conversation driven through a journaled CellSession.

For a case whose benchmark is multi-call under the plan's frozen options, dispatch calls
``benchmark.converse(case, session)`` (benchmarks/conversation.py). Every ``session.call``:

1. builds the request (the role's target: "subject" is the cell's target, any other role the
   auxiliary target the plan pins in ``benchmark_options[<benchmark>][<role>]``), stores it and
   commits its `calls` row `dispatching` with its budget reservation (RUN-8) — the cell becomes
   `dispatching` with its first call and stays so for the whole conversation — before any byte is sent;
2. streams it under the target's per-target limit (held for this call only) and the run's limits,
   cut to what is left of the case's `case_timeout_s` and the run's `max_run_seconds`;
3. stores the SSE transcript and the call record, then marks the row done and settles its cost.

At the end the conversation record (``kind: conversation``: every call with its index, role,
target, request, record and cost, the final text, outputs, trajectory, error) is stored durably and
the cell commits `completed`, or `failed`/`cancelled` with the outcome's or the stop's error class,
``call`` naming the record. No call is ever resent: a restart makes an unfinished conversation
ambiguous (service/runs/manager.py) and recovery reruns a whole cell in a child run.

``CellStopped`` ends the conversation when no further call may be sent: the run cancelled
(``cancelled``), stopped (``run_stopped``; ``budget_stop`` when a reservation did not fit),
``run_time_limit``, ``case_timeout``, ``call_limit`` (``limits.max_calls_per_case`` calls made), or its
target stopped after a systematic failure (``target_stopped``). The call that fails systematically (auth, unknown model, a router's config-hash
mismatch) stops its target (or the run, ``stop_on_systematic: run``; an auxiliary target's always
stops the run, as a judge's does) and ends its own cell with its error class. A conversation that
was stopped before any call was journaled stays `pending` (nothing was sent). An exception from
the benchmark's code fails the cell (``conversation_error``), its calls kept. The number of open
conversations per subject target is bounded by ``limits.concurrency``. A MoM target is called once
per turn with its router headers; each turn's selected model is kept in the record.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import TYPE_CHECKING

from pydantic import JsonValue

from srbench.benchmarks import get as get_benchmark
from srbench.benchmarks import multi_call_benchmarks as multi_call_benchmarks
from srbench.benchmarks.conversation import ROLES, CellStopped, ConversationOutcome, Reply, Role
from srbench.cas import canonical_json, digest_bytes
from srbench.cas.digest import stored_number
from srbench.errors import InvalidInput, storage_fault
from srbench.schemas.cell import TerminalCellState
from srbench.schemas.conversation import ConversationCall, ConversationRecord
from srbench.schemas.dataset import Case
from srbench.schemas.event_data import DispatchStopped
from srbench.schemas.generation import GenerationParams
from srbench.schemas.target import Target
from srbench.stages.dispatch.common import (
    Cell,
    call_record,
    config_hash_problem,
    request_headers,
    request_object,
    stop_scope,
)
from srbench.targets.accounting import call_cost
from srbench.targets.sse import one_line
from srbench.targets.transport import CallOutcome, stream_chat

if TYPE_CHECKING:
    from srbench.stages.dispatch.calls import Dispatcher

# stops that leave a cell whose conversation never journaled a call `pending` (nothing was sent)
UNSENT_STOPS = frozenset({"cancelled", "run_stopped", "budget_stop", "run_time_limit", "target_stopped",
                          "storage_fault"})


class Session:
    """One cell's CellSession (benchmarks/conversation.py)."""

    def __init__(self, runner: Conversations, cell: Cell, case: Case, seed: int, deadline: float) -> None:
        self.runner = runner
        self.cell = cell
        self.cell_id = cell.cell_id
        self.case = case
        self.target_id = cell.target_id
        self.seed = seed
        # the plan's frozen benchmark_options[<benchmark>] entry (a benchmark's own settings)
        self.options = runner.d.plan.benchmark_options.get(case.benchmark)
        self.deadline = deadline                    # time.monotonic() of the case's own timeout
        self.calls: list[ConversationCall] = []     # the conversation record's calls, in order
        self.stored: list[str] = []
        self.next_index = 0
        self.stop: CellStopped | None = None        # the stop raised to the benchmark, if any

    async def call(self, messages: list[dict[str, JsonValue]], *, role: Role = "subject",
                   tools: list[dict[str, JsonValue]] | None = None,
                   tool_choice: str | dict[str, JsonValue] | None = None,
                   max_tokens: int | None = None) -> Reply:
        try:
            return await self.runner.call(self, messages, role, tools, tool_choice, max_tokens)
        except CellStopped as stop:
            self.stop = self.stop or stop
            raise

    def store(self, value: bytes | dict[str, JsonValue]) -> str:
        data = value if isinstance(value, bytes) else canonical_json(value)
        digest = self.runner.d.store.put_bytes(data, durable=False)    # made durable by the cell's end
        if digest not in self.stored:
            self.stored.append(digest)
        return digest

    def remaining_s(self) -> float:
        return max(0.0, min(self.deadline, self.runner.d.control.deadline) - time.monotonic())


class Conversations:
    """The multi-call cells of one run, driven with the Dispatcher's targets, limits and journal."""

    def __init__(self, dispatcher: Dispatcher, benchmarks: set[str]) -> None:
        self.d = dispatcher
        self.benchmarks = benchmarks
        conc = dispatcher.plan.limits.concurrency
        self.open = {tid: asyncio.Semaphore(conc) for tid in dispatcher.targets}
        self.roles = {b: {r: getattr(o, r) for r in ROLES if r != "subject" and getattr(o, r, None)}
                      for b, o in dispatcher.plan.benchmark_options.items()}

    def handles(self, cell: Cell) -> bool:
        return self.d.cases[cell.case_id].benchmark in self.benchmarks

    # -- one cell ------------------------------------------------------------------------------
    async def run_cell(self, cell: Cell) -> None:
        d = self.d
        async with self.open[cell.target_id]:
            if d.control.dispatch_closed() or d.control.target_stopped(cell.target_id):
                return
            case = d.cases[cell.case_id]
            session = Session(self, cell, case, d.plan.seed, time.monotonic() + d.plan.limits.case_timeout_s)
            bench = get_benchmark(case.benchmark)
            try:
                outcome = await bench.converse(case, session)
                if not isinstance(outcome, ConversationOutcome):
                    raise TypeError(f"{case.benchmark}.converse returned {type(outcome).__name__}")
            except CellStopped as stopped:
                session.stop = session.stop or stopped
                outcome = ConversationOutcome(final_text=None)
            except Exception as exc:
                if storage_fault(exc) is not None:
                    raise
                outcome = ConversationOutcome(final_text=None, error_class="conversation_error",
                                              error=one_line(f"{type(exc).__name__}: {exc}"))
        stop = session.stop
        state: TerminalCellState = "completed"
        error_class, error = outcome.error_class, outcome.error
        if error_class is None and stop is not None:       # cut short: never a complete answer
            error_class, error = stop.error_class, stop.reason
        if error_class is not None:
            state = "cancelled" if error_class == "cancelled" else "failed"
        if not session.calls and stop is not None and error_class in UNSENT_STOPS:
            return                                  # nothing was journaled, nothing sent: stays pending
        record = ConversationRecord(
            benchmark=case.benchmark, case_id=case.id, cell_id=cell.cell_id, target_id=cell.target_id,
            calls=session.calls, final_text=outcome.final_text, outputs=outcome.outputs,
            trajectory=outcome.trajectory, stored=session.stored, error_class=error_class, error=error)
        data = canonical_json(record.model_dump(mode="json", by_alias=True))
        costs = [c.cost_usd for c in session.calls]
        known = [c for c in costs if c is not None]
        total = float(sum(known)) if len(known) == len(costs) else None
        await d.journal.conversation_finished(cell, state, digest_bytes(data), error_class,
                                              error, [data], cost_usd=total)

    # -- one call ------------------------------------------------------------------------------
    def resolve(self, s: Session, role: Role) -> tuple[Target, GenerationParams]:
        if role == "subject":
            return self.d.targets[s.target_id]
        tid = self.roles.get(s.case.benchmark, {}).get(role)
        if role not in ROLES or tid is None or tid not in self.d.aux:
            raise InvalidInput(f"{s.case.benchmark}: role {role!r} has no pinned target in the plan")
        return self.d.aux[tid]

    def check_open(self, s: Session, target: Target) -> None:
        """Raise CellStopped when no further call of this cell may be sent."""
        c = self.d.control
        if c.cancel.is_set():
            raise CellStopped("cancelled", c.cancel_reason or "the run was cancelled")
        if c.fault is not None:
            raise CellStopped("storage_fault", c.fault.message)
        if time.monotonic() >= c.deadline:
            raise CellStopped("run_time_limit", "run time limit (max_run_seconds) reached")
        if c.stop_reason is not None:
            raise CellStopped("budget_stop" if c.stop_reason.startswith("budget") else "run_stopped", c.stop_reason)
        if c.target_stopped(target.id):
            raise CellStopped("target_stopped", c.target_stops[target.id])
        if time.monotonic() >= s.deadline:
            raise CellStopped("case_timeout", f"the case's time limit (case_timeout_s "
                                              f"{stored_number(self.d.plan.limits.case_timeout_s)}) was reached")

    async def call(self, s: Session, messages: list[dict[str, JsonValue]], role: Role,
                   tools: list[dict[str, JsonValue]] | None, tool_choice: str | dict[str, JsonValue] | None,
                   max_tokens: int | None) -> Reply:
        d = self.d
        target, params = self.resolve(s, role)
        if max_tokens is not None:
            params = params.model_copy(update={"max_tokens": max(1, min(int(max_tokens), d.plan.limits.max_output_tokens))})
        extras: dict[str, JsonValue] = {}
        if tools is not None:
            extras["tools"] = [*tools]
        if tool_choice is not None:
            extras["tool_choice"] = tool_choice
        cap = d.plan.limits.max_calls_per_case
        if cap is not None and s.next_index >= cap:
            raise CellStopped("call_limit", f"limits.max_calls_per_case {cap} reached: no further call of this case")
        index = s.next_index
        s.next_index += 1
        req = request_object(target, s.case, params.body(), s.cell, messages=messages, role=role, extras=extras)
        req = req.model_copy(update={"call_index": index})
        req_bytes = canonical_json(req.stored())
        req_digest = digest_bytes(req_bytes)
        self.check_open(s, target)
        async with d.sems[target.id]:
            self.check_open(s, target)
            if not await d.journal.call_dispatching(s.cell, index, role, target.id, req_digest,
                                                    [req_bytes], d.reservation(target, req, req_bytes)):
                d.budget_stop(f"call of cell {s.cell_id}")
                raise CellStopped("budget_stop", d.control.stop_reason or "budget")
            limits = d.stream_limits()
            left = max(0.05, s.remaining_s())
            if left < limits.total_timeout_s:
                limits = dataclasses.replace(limits, total_timeout_s=left,
                                             idle_timeout_s=min(limits.idle_timeout_s, left))
            outcome = await stream_chat(d.client, url=req.url, headers=request_headers(target), body=req.body,
                                        limits=limits, cancel=d.control.cancel)
            problem = config_hash_problem(target, outcome) if role == "subject" else None
        return await self._record(s, index, role, target, req_digest, outcome, problem)

    async def _record(self, s: Session, index: int, role: Role, target: Target, req_digest: str,
                      outcome: CallOutcome, problem: str | None) -> Reply:
        d = self.d
        status, error_class, error = outcome.status, outcome.error_class, outcome.error
        if problem is not None:
            status, error_class, error = "failed", "config_hash_mismatch", problem
        objects, sse = [], None
        if outcome.sse_raw:
            objects.append(outcome.sse_raw)
            sse = digest_bytes(outcome.sse_raw)
        record = call_record(outcome, req_digest, sse, status=status, error_class=error_class, error=error)
        record.role = role
        rec = record.model_dump(mode="json", by_alias=True)
        data = canonical_json(rec)
        objects.append(data)
        digest = digest_bytes(data)
        cc = call_cost(target, record)
        cost = cc.cost_usd if outcome.sent else 0.0          # nothing left this host: nothing billed
        selected = cc.attribution.selected_model if cc.attribution is not None else None
        await d.journal.call_finished(s.cell, index, status, digest, error_class, objects, cost)
        s.calls.append(ConversationCall(index=index, role=role, target_id=target.id, request=req_digest, record=digest,
                                        cost_usd=cost, status=status, error_class=error_class,
                                        selected_model=selected))
        if status == "cancelled":
            raise CellStopped("cancelled", d.control.cancel_reason or "the run was cancelled")
        if (status == "failed" and outcome.systematic) or problem is not None:
            kind = "config_hash_mismatch" if problem else outcome.systematic_kind
            why = f"systematic failure on {role} target {target.id} ({kind}): {problem or error}"
            scope = "run" if role != "subject" else stop_scope(d.plan)
            if d.control.stop_target(target.id, why, scope):
                await d.journal.event("dispatch_stopped", DispatchStopped(target_id=target.id, scope=scope, reason=why,
                                                                          error_class=error_class, role=role))
            raise CellStopped(error_class or "systematic_failure", why)
        return Reply(index=index, role=role, target_id=target.id, status=status, text=outcome.text,
                     tool_calls=list(outcome.tool_calls), finish_reason=outcome.finish_reason,
                     error_class=error_class, error=error, record=digest,
                     selected_model=selected or (outcome.headers or {}).get("x-vsr-selected-model"))


