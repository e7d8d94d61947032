"""Dispatch: the one impure stage. Calls the model for each planned cell, journaled before and after.

For each cell (case × target): (1) the request object is stored and the journal commits
`dispatching` with its digest before any byte is sent; (2) the call streams; (3) the raw SSE
transcript and the call record go to the object store; (4) the journal commits `completed` or
`failed` with the call-record digest. A cell left at `dispatching` after a crash is ambiguous and is
never resent by itself. A systematic failure (auth, unknown model or deployment, config-hash
mismatch: :mod:`srbench.targets.failures`) stops new dispatches to its target and the other targets go
on — or the whole run when the plan says ``stop_on_systematic: run``; a judge's stops the run. Other
failures are recorded and the run goes on. A MoM target's request headers come from its router adapter.
A cell of a multi-call benchmark is a conversation of journaled calls: stages/dispatch/conversations.py.
A storage fault (a full disk or quota, an I/O error, a read-only store) stops every dispatch and is
kept in `RunControl.fault`: a cell whose `dispatching` did not commit was never sent (it stays
pending: not dispatched), one whose outcome could not be recorded stays `dispatching` until the
run's end marks it ambiguous.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque

import aiohttp

from srbench.benchmarks import get as get_benchmark
from srbench.cas import ObjectStore, canonical_json, digest_bytes
from srbench.cas.digest import stored_number
from srbench.errors import storage_fault
from srbench.schemas.call import CallRecord, RequestObject, Timings
from srbench.schemas.cell import call_state
from srbench.schemas.dataset import Case
from srbench.schemas.event_data import DispatchStopped
from srbench.schemas.plan import Plan
from srbench.schemas.target import Target
from srbench.stages.dispatch.common import (
    Cell,
    RunControl,
    RunJournal,
    call_record,
    config_hash_problem,
    preview_request,
    request_headers,
    request_object,
    stop_scope,
)
from srbench.stages.dispatch.conversations import Conversations, multi_call_benchmarks
from srbench.stages.dispatch.pacing import pacer
from srbench.stages.dispatch.perturb import perturb_messages
from srbench.targets.accounting import call_cost
from srbench.targets.outcome import body_max_tokens
from srbench.targets.preview import preview_body, preview_call
from srbench.targets.pricing import reservation_usd
from srbench.targets.transport import CallOutcome, StreamLimits, stream_chat

FORWARDED_HEADER_PREFIXES = ("x-vsr-", "x-sr-bench-")
# the shared parts (stages/dispatch/common.py) stay importable from here
__all__ = ["Cell", "Dispatcher", "RunControl", "RunJournal", "call_record", "config_hash_problem",
           "request_headers", "request_object", "stop_scope"]


class Dispatcher:
    """Runs the cells of one live run with a concurrency limit per target."""

    def __init__(self, store: ObjectStore, journal: RunJournal, plan: Plan,
                 cases: dict[str, Case], control: RunControl, client: aiohttp.ClientSession) -> None:
        self.store = store
        self.journal = journal
        self.plan = plan
        self.cases = cases
        self.control = control
        self.client = client
        self.targets = {pt.target.id: (pt.target, pt.effective_params) for pt in plan.targets}
        self.aux = {tid: (pt.target, pt.effective_params) for tid, pt in plan.auxiliary_targets.items()}
        self.judge_for = {b: o.judge for b, o in plan.benchmark_options.items() if o.judge}
        # each target's parameters as request-body JSON, dumped once (build_body copies what it takes)
        self.params_body = {tid: params.body() for tid, (_, params) in self.targets.items()}
        self.aux_body = {tid: params.body() for tid, (_, params) in self.aux.items()}
        conc = plan.limits.concurrency
        self.sems = {tid: asyncio.Semaphore(conc) for tid in [*self.targets, *self.aux]}
        multi = multi_call_benchmarks(plan) if plan.mode == "live" else set()
        self.conversations = Conversations(self, multi) if multi else None

    def stream_limits(self) -> StreamLimits:
        lim = self.plan.limits
        remaining = max(0.05, self.control.deadline - time.monotonic())
        total = min(lim.total_timeout_s, lim.case_timeout_s, remaining)
        return StreamLimits(
            total_timeout_s=total, idle_timeout_s=min(lim.idle_timeout_s, total),
            max_output_chars=lim.max_output_chars, max_output_tokens=lim.max_output_tokens,
            repetition_window=lim.repetition_window, repetition_limit=lim.repetition_limit,
        )

    async def run(self, cells: list[Cell]) -> None:
        """Every cell settles before this returns; an internal error in one cell stops new dispatches
        (the others in flight still finish and are recorded) and is raised afterwards. `cells` is emptied:
        each cell is let go once it is dispatched (~180 bytes a cell: 18 MiB at 100k, issue 42 item 3)."""
        # a bounded pool per target (its concurrency limit), each worker taking the target's next cell
        # in plan order: memory stays flat in the run's size (not one task per planned cell)
        queues: dict[str, deque[Cell]] = {}
        for c in cells:
            queues.setdefault(c.target_id, deque()).append(c)
        cells.clear()
        errors: list[BaseException] = []

        paced = pacer()         # fewer cells at once while the loop lags (HTTP answers on it): pacing.py

        async def worker(todo: deque[Cell]) -> None:
            while todo:
                await paced.enter()
                if not todo:
                    paced.leave()
                    return
                cell = todo.popleft()
                try:
                    await self._safe(cell)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # noqa: BLE001 - raised after every cell settled
                    errors.append(exc)
                finally:
                    paced.leave()
        # twice the limit in workers: while one worker stores a finished call (its slot released), another
        # already holds that slot and sends the next request; the semaphores still bound what is in flight
        pool = 2 * self.plan.limits.concurrency
        workers = []
        for todo in queues.values():
            workers += [worker(todo) for _ in range(min(pool, len(todo)))]
        paced.attach()
        try:
            await asyncio.gather(*workers)
        finally:
            paced.detach()
        if errors:
            raise errors[0]

    async def _safe(self, cell: Cell) -> None:
        try:
            await self._guarded(cell)
        except Exception as exc:
            fault = storage_fault(exc)
            if fault is not None:
                # the store cannot take writes: no more dispatches, and no per-cell write that would fail
                # too; the run's end classifies what is left (RunManager)
                if self.control.fault is None:
                    self.control.fault = fault
                if self.control.stop_reason is None:
                    self.control.stop_reason = fault.message
                return
            msg = f"internal error on cell {cell.cell_id}: {type(exc).__name__}: {exc}"
            if self.control.stop_reason is None:
                self.control.stop_reason = msg
            # its call may have been sent and billed, and its outcome is lost: ambiguous, never retried
            try:
                await self.journal.finished(cell, "ambiguous", None, "internal_error", msg, [])
            except Exception:  # noqa: BLE001 - the journal itself failing: restart recovery decides
                pass
            raise

    async def _guarded(self, cell: Cell) -> None:
        # the per-target limit bounds requests in flight to the endpoint; storing a finished call
        # happens after the slot is released, but a systematic failure stops dispatch before that
        if self.plan.mode == "preview":
            async with self.sems[cell.target_id]:
                if not self.control.stopped() and not self.control.target_stopped(cell.target_id):
                    await self.preview_one(cell)
            return
        if self.conversations is not None and self.conversations.handles(cell):
            await self.conversations.run_cell(cell)         # a multi-call cell: conversation_dispatch.py
            return
        async with self.sems[cell.target_id]:
            if self.control.dispatch_closed() or self.control.target_stopped(cell.target_id):
                return
            called = await self.call(cell)
            if called is None:
                return
            target, req_digest, outcome = called
            problem = config_hash_problem(target, outcome)
            newly_stopped = False
            if (outcome.status == "failed" and outcome.systematic) or problem is not None:
                kind = "config_hash_mismatch" if problem else outcome.systematic_kind
                newly_stopped = self.control.stop_target(
                    target.id, f"systematic failure on target {target.id} ({kind}): {problem or outcome.error}",
                    stop_scope(self.plan))
        judge = await self.record(cell, target, req_digest, outcome, problem)
        if judge is not None:
            await self.run_judge(cell, *judge)
        if newly_stopped:
            await self.journal.event("dispatch_stopped", DispatchStopped(
                target_id=target.id, scope=stop_scope(self.plan), reason=self.control.target_stops[target.id],
                error_class="config_hash_mismatch" if problem else outcome.error_class))

    async def preview_one(self, cell: Cell) -> None:
        """IT-3: record the router's decision and model for one case; no inference, no score."""
        target, params = self.targets[cell.target_id]
        case = self.cases[cell.case_id]
        messages = perturb_messages([m.model_dump() for m in case.messages], self.plan.perturbation, self.plan.seed, case.id)
        body = preview_body(target, messages, 1 if params.max_tokens is None else params.max_tokens,
                            None if self.plan.preview_context is None
                            else self.plan.preview_context.model_dump(mode="json"))
        req_bytes = canonical_json(preview_request(target, case, cell, body).stored())
        req_digest = digest_bytes(req_bytes)
        await self.journal.dispatching(cell, req_digest, [req_bytes])
        out = await preview_call(self.client, target, body, self.stream_limits().total_timeout_s)
        if out.status == "failed" and out.systematic:
            self.control.stop_target(target.id, f"systematic failure on preview of {target.id}: {out.error}",
                                     stop_scope(self.plan))
        record = CallRecord(role="preview", request=req_digest, status=out.status, error_class=out.error_class,
                            error=out.error, http_status=out.http_status, headers=out.headers, routing=out.routing,
                            timings=Timings(started_at=out.started_at, latency_s=out.latency_s),
                            bytes_received=len(out.raw))
        data = canonical_json(record.model_dump(mode="json", by_alias=True))
        await self.journal.finished(cell, "completed" if out.status == "completed" else "failed", digest_bytes(data),
                                    out.error_class, out.error, [data])

    def reservation(self, target: Target, req: RequestObject, req_bytes: bytes) -> float | None:
        """RUN-8 upper estimate for one call (None without a cap or without prices)."""
        if self.plan.limits.max_cost_usd is None or not target.prices:
            return None
        messages = req.body["messages"]
        assert isinstance(messages, list)                   # build_body's list
        return reservation_usd(body_bytes=len(req_bytes), message_count=len(messages),
                               max_tokens=body_max_tokens(req.body, self.plan.limits.max_output_tokens),
                               max_output_chars=self.plan.limits.max_output_chars, prices=target.prices,
                               max_inference_calls=target.max_inference_calls or 1)

    def budget_stop(self, what: str) -> None:
        if self.control.stop_reason is None:
            self.control.stop_reason = (f"budget: reserving the next {what} would exceed limits.max_cost_usd "
                                        f"{stored_number(self.plan.limits.max_cost_usd or 0)} (a reservation, not a provider cap)")

    async def call(self, cell: Cell) -> tuple[Target, str, CallOutcome] | None:
        target = self.targets[cell.target_id][0]
        req = request_object(target, self.cases[cell.case_id], self.params_body[cell.target_id], cell)
        req_bytes = canonical_json(req.stored())
        req_digest = digest_bytes(req_bytes)
        if not await self.journal.dispatching(cell, req_digest, [req_bytes], self.reservation(target, req, req_bytes)):
            self.budget_stop("call")
            return None
        outcome = await stream_chat(self.client, url=req.url, headers=request_headers(target),
                                    body=req.body, limits=self.stream_limits(), cancel=self.control.cancel)
        return target, req_digest, outcome

    def judge_plan(self, cell: Cell, outcome: CallOutcome) -> tuple[Target, RequestObject, bytes, str] | None:
        """(judge target, its request, request bytes, digest) when this answer goes to a judge."""
        case = self.cases[cell.case_id]
        judge_id = self.judge_for.get(case.benchmark)
        if judge_id is None:
            return None

        bench, grader = get_benchmark(case.benchmark), self.plan.grader_versions.get(case.benchmark)
        messages = bench.judge_messages(case, outcome.text, grader)
        if not messages:            # no visible answer: graded not_attempted without a judge call
            return None
        judge = self.aux[judge_id][0]
        extras = bench.judge_extras(grader, self.plan.options_for(case.benchmark))
        req = request_object(judge, case, self.aux_body[judge_id], cell, messages=messages, role="judge", extras=extras or None)
        data = canonical_json(req.stored())
        return judge, req, data, digest_bytes(data)

    async def run_judge(self, cell: Cell, judge: Target, req: RequestObject, req_digest: str) -> None:
        async with self.sems[judge.id]:
            if self.control.stopped():
                why = ("cancelled" if self.control.cancel.is_set() else
                       "run_time_limit" if time.monotonic() >= self.control.deadline else "stopped")
                await self.journal.judged(cell, "cancelled" if why == "cancelled" else "failed", None, why,
                                          f"{why}: the judge was not called", [], cost_usd=0.0)
                return
            outcome = await stream_chat(self.client, url=req.url, headers=request_headers(judge),
                                        body=req.body, limits=self.stream_limits(), cancel=self.control.cancel)
            if outcome.status == "failed" and outcome.systematic and self.control.stop_reason is None:
                self.control.stop_reason = f"systematic failure on judge {judge.id}: {outcome.error}"
        objects, sse = [], None
        if outcome.sse_raw:
            objects.append(outcome.sse_raw)
            sse = digest_bytes(outcome.sse_raw)
        record = call_record(outcome, req_digest, sse)
        record.role = "judge"
        data = canonical_json(record.model_dump(mode="json", by_alias=True))
        objects.append(data)
        state = call_state(outcome.status)
        err_class = None if state == "completed" else f"judge_{outcome.error_class}"
        await self.journal.judged(cell, state, digest_bytes(data), err_class,
                                  None if state == "completed" else f"judge: {outcome.error}", objects,
                                  cost_usd=call_cost(judge, record).cost_usd)

    async def record(self, cell: Cell, target: Target, req_digest: str, outcome: CallOutcome,
                     problem: str | None) -> tuple[Target, RequestObject, str] | None:
        """Store the subject call; returns the judge step to run next, if any."""
        status, error_class, error = outcome.status, outcome.error_class, outcome.error
        if problem is not None:
            status, error_class, error = "failed", "config_hash_mismatch", problem
        objects = []
        sse = None
        if outcome.sse_raw:
            objects.append(outcome.sse_raw)
            sse = digest_bytes(outcome.sse_raw)
        record = call_record(outcome, req_digest, sse, status=status, error_class=error_class, error=error)
        record_bytes = canonical_json(record.model_dump(mode="json", by_alias=True))
        objects.append(record_bytes)
        state = call_state(status)
        cost = call_cost(target, record).cost_usd
        if not outcome.sent:
            cost = 0.0                              # nothing left this host: nothing can be billed
        judge = self.judge_plan(cell, outcome) if state == "completed" else None
        if judge is None:
            await self.journal.finished(cell, state, digest_bytes(record_bytes), error_class, error, objects,
                                        cost_usd=cost)
            return None
        jt, jreq, jbytes, jdigest = judge
        if not await self.journal.finished(cell, "judge_dispatching", digest_bytes(record_bytes), None, None,
                                           [*objects, jbytes], judge_request=jdigest, cost_usd=cost,
                                           judge_reserve_usd=self.reservation(jt, jreq, jbytes)):
            self.budget_stop("judge call")
            return None
        return jt, jreq, jdigest
