"""Run lifecycle in the service: submit (idempotent), execute, cancel, restart, and read back.

Statuses — run: queued, running, completed, failed, cancelled, interrupted (the last four are
terminal); cell: pending, dispatching, completed, failed, cancelled, ambiguous. On start-up every
cell left `dispatching` becomes `ambiguous` (it may have been billed) — a conversation that did not
finish too, with every one of its calls still in flight — and every unfinished run becomes
`interrupted`; nothing is resent or resumed by itself (RUN-5, REC-1).
"""

from __future__ import annotations

import asyncio
import builtins
import json
import logging
import os
import sqlite3
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from srbench import TERMINAL_STATUSES as TERMINAL
from srbench.cas import ObjectStore
from srbench.errors import Conflict, InvalidInput, NotFound, storage_fault
from srbench.rules import Engine
from srbench.rules.engine import VOLATILE_REASON
from srbench.schemas.cell import TerminalRunStatus
from srbench.schemas.dataset import Case
from srbench.schemas.event_data import Created, ReportFailed
from srbench.schemas.plan import Plan
from srbench.schemas.report_params import ReportRequest
from srbench.service.api import priority
from srbench.service.journal import refs
from srbench.service.journal import runs as jruns
from srbench.service.journal.cells import RunJournalAdapter, cell_id
from srbench.service.journal.run_end import terminal
from srbench.service.journal.runs import IdemBinding, ReportHead, RunRow
from srbench.service.journal.writer import Journal, add_event
from srbench.service.runs.early_stop import StopMonitor, check_baseline_run
from srbench.service.runs.end import Endings
from srbench.service.runs.heap import frozen_heap
from srbench.service.runs.plans import Plans
from srbench.service.runs.recipes import capture_before, check_after
from srbench.service.runs.recipes import summary as recipe_summary
from srbench.service.runs.report_rows import RowBuilder
from srbench.service.runs.run_checks import config_check, config_probes, exc_line, release_memory, run_view
from srbench.service.runs.state import OnCreate, RunBudget, RunLineage, RunState
from srbench.service.store.env_file import load_env_file, missing_key
from srbench.service.store.task_resources import benchmark_preflight
from srbench.service.wire.figures import ReportFigures
from srbench.stages.datasets.build import decode_cases, read_dataset_object
from srbench.stages.datasets.decoded import cases_by_id
from srbench.stages.dispatch.calls import Dispatcher, RunControl
from srbench.stages.report.rule import build_report, report_signature
from srbench.stages.report.stream import write_run_cells
from srbench.stages.stats.stopping import dispatch_order
from srbench.targets.transport import new_session

log = logging.getLogger("srbench.service")


class RunManager:
    store_dir: Path | None = None           # the store directory (set by the service): its env file's place

    def __init__(self, store: ObjectStore, journal: Journal, engine: Engine) -> None:
        self.store = store
        self.journal = journal
        self.engine = engine
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.controls: dict[str, RunControl] = {}
        self.plans = Plans(store)                       # each run's frozen plan, validated once
        self.endings = Endings()
        self.rows = RowBuilder(journal, store, engine)     # report rows as cells finish (issue 11)
        self.figures = ReportFigures(store)     # upstream's figures per report, made as a report is built here
        self._ending: dict[str, threading.Event] = {}      # runs whose end-of-run report is being built

    # -- start-up ------------------------------------------------------------------------------
    def recover_after_restart(self) -> dict[str, int]:
        return self.journal.submit_sync(jruns.recover_after_restart)

    # -- submit --------------------------------------------------------------------------------
    def preflight(self, plan: Plan) -> None:
        """Refuse a run whose keys the service lacks: one line per missing variable (the env file read anew)."""
        if self.store_dir is not None:
            load_env_file(self.store_dir)
        missing: dict[str, list[str]] = {}
        # subjects, and the judges / user simulators a run calls beside them (auxiliary targets)
        for pt in [*plan.targets, *plan.auxiliary_targets.values()]:
            env = pt.target.api_key_env
            if env and not os.environ.get(env) and pt.target.id not in missing.get(env, []):
                missing.setdefault(env, []).append(pt.target.id)
        if missing:
            raise InvalidInput("preflight: " + "; ".join(missing_key(ids, env, self.store_dir)
                                                         for env, ids in missing.items()), code="preflight_failed")

    def submit(self, plan: Plan, idempotency_key: str | None, on_create: OnCreate | None = None
               ) -> tuple[RunState, bool]:
        """Create a run (or return the one bound to the key) of a checked plan (`stages.plan.freeze`: built
        or `check_frozen`). Returns (run, created). `on_create(conn, run_id)` runs in the run's insert
        transaction (its owner, its experiment link)."""
        check_baseline_run(self, plan)
        if idempotency_key is not None and not (1 <= len(idempotency_key) <= 200):
            raise InvalidInput("idempotency key must be 1-200 characters")
        if idempotency_key:
            bound = jruns.idem_binding(self.journal, idempotency_key)
            if bound is not None:
                if bound.plan_sha256 != plan.plan_sha256:
                    raise Conflict(f"idempotency key {idempotency_key!r} is bound to run {bound.run_id} with another "
                                   "plan; use a new key", code="idempotency_conflict")
                return self.get(bound.run_id), False
        return self.create_run(plan, idempotency_key, claim=on_create)

    def create_run(self, plan: Plan, idempotency_key: str | None, *, parent: str | None = None,
                   claim: OnCreate | None = None) -> tuple[RunState, bool]:
        """Insert a queued run and its cells in one transaction. `plan.execution_cells` (recovery)
        narrows the cells to the listed (case, target) pairs; `claim(conn, run_id)` runs in the same
        transaction (recovery claims) and may raise to abort it."""
        data = read_dataset_object(self.store, plan.dataset.object, plan.dataset.sha256)
        self.preflight(plan)
        cases = dispatch_order(plan, decode_cases(data))
        if plan.mode == "live":                 # hosts of agent tasks: engine, base images (task_resources)
            problems = benchmark_preflight(cases)
            if problems:
                raise InvalidInput("preflight: " + "; ".join(problems), code="preflight_failed")
        plan_digest = self.store.put_json(plan.as_json())
        run_id = "run-" + uuid.uuid4().hex[:20]
        now = time.time()
        target_ids = [pt.target.id for pt in plan.targets]
        pairs = ([(p[0], p[1]) for p in plan.execution_cells] if plan.execution_cells is not None
                 else [(case.id, tid) for case in cases for tid in target_ids])
        rows = [(run_id, cell_id(cid, tid), seq, cid, tid, "pending", now) for seq, (cid, tid) in enumerate(pairs)]

        def w(c: sqlite3.Connection) -> str:
            if idempotency_key:
                bound: IdemBinding | None = jruns.bound_run(c, idempotency_key)
                if bound is not None:
                    if bound.plan_sha256 != plan.plan_sha256:
                        raise Conflict(f"idempotency key {idempotency_key!r} is bound to another plan",
                                       code="idempotency_conflict")
                    return bound.run_id
            jruns.insert_run(c, RunRow(
                id=run_id, name=plan.name, mode=plan.mode, profile=plan.profile, plan=plan_digest,
                plan_sha256=plan.plan_sha256, status="queued", idem_key=idempotency_key, parent=parent,
                total=len(rows), targets=json.dumps(target_ids), created_at=now, started_at=None, finished_at=None,
                updated_at=now, error=None, cancel_requested=0, extra="{}"))
            if claim is not None:
                claim(c, run_id)
            jruns.insert_cells(c, rows)
            if plan.limits.max_cost_usd is not None:
                jruns.insert_budget(c, run_id, plan.limits.max_cost_usd)
            add_event(c, run_id, "created", Created(plan_sha256=plan.plan_sha256, total=len(rows)))
            return run_id
        got = self.journal.submit_sync(w)
        return self.get(got), got == run_id

    def start(self, run_id: str) -> None:
        if run_id in self.tasks:
            return
        # not served first (service/api/priority.py): a run's dispatch waits behind the requests on its loop
        self.tasks[run_id] = asyncio.get_running_loop().create_task(self._execute(run_id), context=priority.background())

    # -- execute -------------------------------------------------------------------------------
    async def _execute(self, run_id: str) -> None:
        """Run one run to a terminal state, whatever fails (a missing object, a decode error)."""
        try:
            await self._execute_run(run_id)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            fault = storage_fault(exc)
            msg = fault.message if fault else f"internal error before dispatch: {exc_line(exc)}"
            try:
                await self.endings.record(self.journal, run_id, "failed", msg, fault)
            except Exception:   # noqa: BLE001 - the journal itself is broken: the restart recovery ends it
                log.exception("run %s: its end could not be recorded", run_id)
        finally:
            self.tasks.pop(run_id, None)
            self.controls.pop(run_id, None)

    async def _execute_run(self, run_id: str) -> None:
        run = jruns.run_row(self.journal, run_id)
        if run is None or run.status != "queued":
            return
        plan = Plan.model_validate(self.store.get_json(run.plan))
        cases: dict[str, Case] = cases_by_id(self.store, plan.dataset.object)    # shared with its report's
        control = RunControl(cancel=asyncio.Event(), deadline=time.monotonic() + plan.limits.max_run_seconds)
        self.controls[run_id] = control
        self.rows.begin(run_id, run.plan)
        jr = RunJournalAdapter(self.journal, run_id, self.store,
                               on_done=lambda cell_id: self.rows.cell_done(run_id, cell_id))
        now = time.time()
        monitor = await StopMonitor.start(self, run_id, plan, list(cases.values()), control)
        try:
            if not await self.journal.submit(lambda c: jruns.mark_running(c, run_id, now)):
                return
            if jruns.cancel_requested(self.journal, run_id):
                control.cancel.set()
            cells = await asyncio.to_thread(jruns.pending_cells, self.journal, run_id)   # 0.1-0.3 s at 100k: off the loop
            conc = plan.limits.concurrency * len(plan.targets)
            async with new_session(conc + 4) as client:
                captures = await capture_before(client, plan, self.store, jr.event)     # UI-7 recipes
                if await config_check(client, plan, jr, control, "before"):
                    with frozen_heap():     # the heap as it is now: out of the collector's passes (runs/heap.py)
                        await Dispatcher(self.store, monitor.journal(jr) if monitor else jr, plan, cases, control,
                                         client).run(cells)
                    del cells              # not held while the end-of-run report is built (a big run's cells)
                    if not control.cancel.is_set() and control.fault is None:
                        await config_check(client, plan, jr, control, "after")
                        await check_after(client, plan, captures, jr.event)
            await self._finish(run_id, control, monitor)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # an internal error must still leave a terminal, explained run
            fault = storage_fault(exc)
            msg = fault.message if fault else f"internal error: {exc_line(exc)}"
            await self.endings.record(self.journal, run_id, "failed", msg, fault)

    async def _finish(self, run_id: str, control: RunControl, monitor: StopMonitor | None = None) -> None:
        counts = self.counts(run_id)
        total = sum(counts.values())
        status: TerminalRunStatus
        if control.cancel.is_set() and control.cancel_reason == "service stopped":
            status, error = "interrupted", "service stopped during the run"
        elif control.cancel.is_set():
            status, error = "cancelled", control.cancel_reason or "cancelled by the user"
        elif control.fault is not None:
            status, error = "failed", f"dispatch stopped: {control.fault.message}"
        elif control.ended_reason:
            status, error = "failed", control.ended_reason
        elif control.early_stop is not None and counts.get("pending", 0):
            status, error = "stopped_early", None
        elif counts.get("completed", 0) == total:
            status, error = "completed", None
        elif counts.get("pending", 0):
            status, error = "failed", "run time limit (max_run_seconds) reached"
        else:
            status, error = "failed", f"{total - counts.get('completed', 0)} of {total} cells failed"
        if monitor is not None:
            await monitor.close()
        self._ending[run_id] = threading.Event()   # a report asked meanwhile waits for this one
        try:
            if not await self.endings.record(self.journal, run_id, status, error, control.fault):
                return
            await self._end_report(run_id)
        finally:
            self._ended(run_id)

    def _ended(self, run_id: str) -> None:
        """The run's end-of-run report is built (or failed): a report asked now reads it."""
        ending = self._ending.pop(run_id, None)
        if ending is not None:
            ending.set()

    async def _end_report(self, run_id: str) -> None:
        """The report as the run ended: what regrade compares against."""
        try:
            t0 = time.perf_counter()
            await asyncio.to_thread(self.rows.drain, run_id)      # the rows of the cells that finished
            self.rows.ended(run_id)         # its worker process stops before the report (unless a run goes on)
            t1 = time.perf_counter()
            await asyncio.to_thread(self.final_report, run_id, True)
            log.info("run %s: report rows caught up in %.2f s, end-of-run report built in %.2f s", run_id, t1 - t0,
                     time.perf_counter() - t1)
        except Exception as exc:  # noqa: BLE001 - a report problem must not change the run's outcome
            detail = exc_line(exc)
            try:
                await self.journal.submit(lambda c: add_event(c, run_id, "report_failed", ReportFailed(error=detail)))
            except Exception:  # noqa: BLE001 - the journal is closing
                pass
        finally:
            self._ended(run_id)     # before the clean-up below: a report asked meanwhile need not wait for it
            await asyncio.to_thread(self.rows.forget, run_id)
            await asyncio.to_thread(release_memory)

    # -- control -------------------------------------------------------------------------------
    async def cancel(self, run_id: str, reason: str = "cancelled by the user") -> RunState:
        """Record the request (durably, off the event loop), then stop the run's work."""
        run = self.get(run_id)
        if run.status in TERMINAL:
            return run
        await self.journal.submit(lambda c: jruns.request_cancel(c, run_id, reason))
        control = self.controls.get(run_id)
        if control is not None:
            control.cancel_reason = reason
            control.cancel.set()
        elif run.status == "queued" and run_id not in self.tasks:
            await self.journal.submit(lambda c: terminal(c, run_id, "cancelled", reason))
        return self.get(run_id)

    async def shutdown(self) -> None:
        """Stop every active run: in-flight calls are cancelled and recorded; runs end interrupted."""
        self.endings.closing = True
        for control in self.controls.values():
            control.cancel_reason = "service stopped"
            control.cancel.set()
        tasks = list(self.tasks.values())
        if tasks:
            await asyncio.wait(tasks, timeout=15)
        await asyncio.to_thread(self.rows.close)

    def final_report(self, run_id: str, ending: bool = False) -> str:
        """The report recorded when the run ended (built now for runs that ended before that existed).
        `ending`: asked by the run's own end (anyone else waits for that build, not a second one)."""
        if not ending:
            self._await_end(run_id)
        row = jruns.run_row(self.journal, run_id)
        if row is None:
            raise NotFound(f"no run {run_id!r}")
        digest = row.extras().final_report
        if digest and self.store.has(digest):
            return digest
        built, _, _ = self.report_digest(run_id, ending)
        if row.status in TERMINAL:
            self.journal.submit_sync(lambda c: jruns.set_extra(c, run_id, "final_report", built))
        return built

    # -- read ----------------------------------------------------------------------------------
    def get(self, run_id: str) -> RunState:
        """One run, with its lineage, budget and early-stop decision."""
        row = jruns.run_row(self.journal, run_id)
        if row is None:
            raise NotFound(f"no run {run_id!r}")
        lineage = RunLineage(parent=row.parent, children=jruns.child_runs(self.journal, run_id))
        if row.parent:
            snap = (self.store.get_json(row.plan).get("recovery") or {}).get("snapshot", {})
            lineage = RunLineage(parent=row.parent, children=lineage.children,
                                 parent_known_cost_usd=snap.get("known_cost_usd"))
        b = jruns.budget(self.journal, run_id)
        budget = None if b is None else RunBudget(
            cap_usd=b.cap_usd, spent_usd=b.spent_usd, reserved_usd=b.reserved_usd, unknown_cost_calls=b.unknown_calls,
            note="a reservation and actual-cost stop kept in the journal; not a provider-enforced cap")
        return self._views([row])[0].model_copy(update={"lineage": lineage, "early_stop": row.extras().early_stop,
                                                                 "budget": budget})

    def list(self, limit: int = 200, before: tuple[float, str] | None = None) -> list[RunState]:
        """Newest runs first (keyset: strictly older than `before` = (created_at, id)), with progress
        from the maintained counters: O(page), whatever the store holds."""
        return self._views(jruns.runs_page(self.journal, limit, before))

    def list_owned(self, owner: str, limit: int = 200, before: tuple[float, str] | None = None
                   ) -> builtins.list[RunState]:
        """An actor's own runs, newest first, keyset like `list` (`service.actors`: run_owners)."""
        return self._views(jruns.owned_runs_page(self.journal, owner, limit, before))

    def _views(self, rows: builtins.list[RunRow]) -> builtins.list[RunState]:
        """Run views with progress from the journal's maintained counters (cell_counts, run_stats:
        service/journal/schema.py); the cells carry the latest persisted change (a cell update
        does not touch the run row)."""
        ids = [r.id for r in rows]
        counts, last = jruns.cell_counts(self.journal, ids), jruns.last_changes(self.journal, ids)
        return [self.endings.overlay(run_view(row, counts[row.id], self.plans.targets(row.plan), last[row.id]))
                for row in rows]

    def counts(self, run_id: str) -> dict[str, int]:
        """The run's cells by state, from the maintained counters (no scan of its cells)."""
        return jruns.state_counts(self.journal, run_id)

    def _report_request(self, run_id: str) -> ReportRequest:
        """What the run's report is built from, except the cells (all O(1) reads)."""
        run = self.get(run_id)
        end = run.finished_at or time.time()
        wall = (end - run.started_at) if run.started_at else None
        if run.status not in TERMINAL and wall is not None:
            wall = round(wall, 3)
        corrections = refs.history(self.journal, "correction", run_id)
        prices = refs.history(self.journal, "price-correction", run_id)
        return ReportRequest(run_id=run_id, plan=run.plan, status=run.status, wall_time_s=wall,
                             correction=corrections[-1].digest if corrections else None,
                             correction_at=corrections[-1].at if corrections else None,
                             price_correction=prices[-1].digest if prices else None,
                             config_probes=config_probes(self.journal, run_id), early_stop=run.early_stop,
                             recipes=recipe_summary(self.journal, run_id))

    def _cells_version(self, run_id: str) -> int:
        return jruns.cell_writes(self.journal, run_id)

    def _await_end(self, run_id: str, timeout_s: float = 600.0) -> None:
        """Wait for the run's end-of-run report if it is being built (a report asked as the run ends is
        that one, built once: a second build beside it would take the same CPU again)."""
        ending = self._ending.get(run_id)
        if ending is None:
            return
        try:
            asyncio.get_running_loop()
            return              # on the event loop: never block it (the build it finishes runs on it too)
        except RuntimeError:
            ending.wait(timeout_s)

    def report_digest(self, run_id: str, ending: bool = False) -> tuple[str, bool, str]:
        """(report digest, cache hit, explanation). The run's report head (the last report built,
        with its signature: service/journal/schema.py) answers without reading a cell when
        nothing the report depends on changed; otherwise the report rule is built (O(run)).
        `ending`: the build of the run's own end (see `_await_end`)."""
        if not ending:
            self._await_end(run_id)
        request = self._report_request(run_id)
        version = self._cells_version(run_id)
        sig, rsig = report_signature(request, version)
        head = jruns.report_head(self.journal, run_id)
        if head is not None and head.sig == sig and self.store.has(head.report):
            return head.report, True, "up to date"
        if request.status in TERMINAL:
            self.rows.drain(run_id)         # the grading pool's cells of a run just ended: graded once, there
            # a finished run's cells as objects (one per target, and their index): the rule key, the action
            # cache entry and its explain hold a digest, not a copy of every cell (tens of MB for a big run);
            # written as the journal streams them, read by the report one target at a time
            cells_in: str | dict[str, list[Any]] = write_run_cells(self.store, jruns.report_cells(self.journal, run_id, by_target=True))
        else:
            cells_in = {r[0]: list(r[1:]) for r in jruns.report_cells(self.journal, run_id)}
        plan = self.plans.cached(request.plan)
        collect = self.figures.collector({pt.target.id: pt.target.kind for pt in plan.targets}, plan.mode)
        with frozen_heap():     # O(run) rows alive at once: the collector's passes over them cost ~40 % of a build
            digest, hit, why = build_report(self.engine, request, cells_in, memo=self.rows.memo, observe=collect)
        if not hit and collect.complete():      # upstream's figures of these rows, made in the same pass: the
            self.figures.put(digest, collect.figures())     # report's first answer reads no row back (issue 42)
        del cells_in
        if self._cells_version(run_id) != version or VOLATILE_REASON in why:
            return digest, hit, why     # a cell changed while they were read, or a passing fault: no head
        results = self.store.get_json(digest)["results"]
        head = ReportHead(sig, rsig, digest, results)
        self.journal.submit_sync(lambda c: jruns.put_report_head(c, run_id, head))
        return digest, hit, why

    def results_digest(self, run_id: str) -> str:
        """The current results object: the head's when only the summary changed since (a running
        run's wall time), else the report is rebuilt."""
        _, rsig = report_signature(self._report_request(run_id), self._cells_version(run_id))
        head = jruns.report_head(self.journal, run_id)
        if head is not None and head.results_sig == rsig and self.store.has(head.results):
            return head.results
        return self.store.get_json(self.report_digest(run_id)[0])["results"]
