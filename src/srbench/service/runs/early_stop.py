"""Early stopping of a live run (statistics.early_stop): watch cells settle, look at the claim, stop
new dispatches once it is settled or unreachable, and record what the stop saved.

The run dispatches its cases in `benchmark-interleave-v1` order (`stopping.dispatch_order`). Every
cell that reaches a terminal state is graded (the same memoised grade rule the report uses; failed,
cancelled and ambiguous cells count as incorrect). Every `stopping.look_step` cases of measured
prefix — the leading cases with an outcome for every target — the monitor pairs each candidate
with the baseline on that prefix and asks `stopping.decide`:
- without `baseline_run`: the candidates are the run's mom targets, the baseline is its strongest
  single target on the prefix (exact weighted quality, ties as in compare, REP-5);
- with `baseline_run`: every target of the run is a candidate against the strongest single target
  of that finished run on its full case set (REP-5), chosen once before the first dispatch.
A plan with `baseline_selection: adjusted` (new plans) decides on the claim compare will make: with
K > 1 singles to choose among, `selection.decide_selected` on the candidate's differences against
every one of them (the intersection–union lower bound, the Bonferroni α/K upper bound).
When every candidate is settled or unreachable, `RunControl.early_stop` is set: no new subject call
is sent (calls in flight finish, and their judges still run). The run ends `stopped_early`, and the
run's `extra.early_stop` records the decision, the cells never sent and an estimate of the money
not spent (each target's mean known cost per settled cell, subject and judge, times its cells not
sent; unknown when that target had an unknown cost).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from srbench.errors import InvalidInput
from srbench.schemas.cell import CellState, TerminalCellState
from srbench.schemas.comparison_inputs import ComparedReport, ComparedRow
from srbench.schemas.dataset import Case
from srbench.schemas.early_stop import EarlyStopRecord, StopSelection, TargetDecision
from srbench.schemas.event_data import EarlyStop, StopReason
from srbench.schemas.grade import read_grade
from srbench.schemas.plan import Plan
from srbench.service.journal.run_end import pending_by_target, record_early_stop
from srbench.service.journal.writer import add_event
from srbench.stages.compare.build import AUX_COST_FIELDS, choose_baseline
from srbench.stages.compare.checks import ByTarget, Cells, NotComparable, pair_checks, run_checks
from srbench.stages.compare.selection import ADJUSTMENT, decide_selected
from srbench.stages.dispatch.calls import Cell, RunControl
from srbench.stages.dispatch.common import RunJournal
from srbench.stages.grading.grade import grade_cell
from srbench.stages.report.results import all_rows
from srbench.stages.stats.betting import METHOD, ORDER, make_design
from srbench.stages.stats.stopping import decide, dispatch_order, look_step, statistics_of

if TYPE_CHECKING:
    from srbench.service.runs.manager import RunManager

__all__ = ["StopMonitor", "check_baseline_run"]


Baseline = tuple[str, Cells, ByTarget]
"""(strongest single target id, its rows by case id, every single's rows by target then case id)."""


def _baseline_rows(manager: RunManager, plan: Plan) -> Baseline:
    """(strongest single target id, its rows by case id, every single's rows by target then case id) of
    the declared baseline run; InvalidInput if unusable."""
    stop = statistics_of(plan).early_stop
    run_id = stop.baseline_run if stop is not None else None
    assert run_id is not None, "only a plan with a baseline run has baseline rows"
    try:
        run = manager.get(run_id)
    except Exception as exc:  # noqa: BLE001 - NotFound and friends become one plan problem
        raise InvalidInput(f"statistics.early_stop.baseline_run: {getattr(exc, 'message', exc)}",
                           code="invalid_baseline_run") from None
    if run.status not in ("completed", "failed"):
        raise InvalidInput(f"statistics.early_stop.baseline_run {run_id} is {run.status}: it must be a finished "
                           "run with an outcome for every cell", code="invalid_baseline_run")
    report = manager.store.get_json(manager.final_report(run_id))
    rows = [ComparedRow.model_validate(r) for r in all_rows(manager.store, report["results"])]
    bplan = manager.plans.get(run.plan)
    try:
        bcases, bby = run_checks("baseline", ComparedReport.model_validate(report), rows, bplan)
        pair_checks(bplan, plan, bcases, bcases)          # equal case_sha256 ⇒ the same cases
        best, _ = choose_baseline(bplan, bby, dict(bplan.benchmark_weights), set(AUX_COST_FIELDS))
    except NotComparable as exc:
        raise InvalidInput(f"statistics.early_stop.baseline_run {run_id}: {exc.message}",
                           code="invalid_baseline_run") from None
    singles = {pt.target.id for pt in bplan.targets if pt.target.kind == "single"}
    return best, bby[best], {t: bby[t] for t in sorted(singles)}


def check_baseline_run(manager: RunManager, plan: Plan) -> None:
    """Refuse a plan whose declared baseline run cannot serve as its early-stop baseline."""
    stop = statistics_of(plan).early_stop
    if stop is not None and stop.baseline_run:
        _baseline_rows(manager, plan)


class _Journal:
    """The run's journal adapter, telling the monitor when a cell reaches its terminal state."""

    def __init__(self, inner: RunJournal, monitor: StopMonitor) -> None:
        self._inner, self._monitor = inner, monitor

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def finished(self, cell: Cell, state: CellState, call: str | None, error_class: str | None, error: str | None,
                       objects: list[bytes], judge_request: str | None = None, cost_usd: float | None = None,
                       judge_reserve_usd: float | None = None) -> bool:
        ok = await self._inner.finished(cell, state, call, error_class, error, objects, judge_request, cost_usd,
                                        judge_reserve_usd)
        self._monitor.cost(cell, cost_usd)
        if state == "judge_dispatching" and ok:
            self._monitor.calls[cell.cell_id] = call
        else:
            await self._monitor.settled(cell, "failed" if state == "judge_dispatching" else state, call, None)
        return ok

    async def conversation_finished(self, cell: Cell, state: TerminalCellState, call: str, error_class: str | None,
                                    error: str | None, objects: list[bytes], cost_usd: float | None = None) -> None:
        await self._inner.conversation_finished(cell, state, call, error_class, error, objects, cost_usd=cost_usd)
        self._monitor.cost(cell, cost_usd)
        await self._monitor.settled(cell, state, call, None)

    async def judged(self, cell: Cell, state: TerminalCellState, judge_call: str | None, error_class: str | None,
                     error: str | None, objects: list[bytes], cost_usd: float | None = None) -> None:
        await self._inner.judged(cell, state, judge_call, error_class, error, objects, cost_usd)
        self._monitor.cost(cell, cost_usd)
        await self._monitor.settled(cell, state, self._monitor.calls.pop(cell.cell_id, None), judge_call)


class StopMonitor:
    """One live run's stopping rule (see the module docstring)."""

    def __init__(self, manager: RunManager, run_id: str, plan: Plan, cases: list[Case], control: RunControl,
                 baseline: Baseline | None) -> None:
        self.manager, self.run_id, self.plan, self.control = manager, run_id, plan, control
        self.stats = statistics_of(plan)
        ordered = dispatch_order(plan, cases)
        self.order = [(c.id, c.benchmark) for c in ordered]
        self.cases = {c.id: c for c in ordered}
        self.weights: dict[str, float] = dict(plan.benchmark_weights)
        self.design = make_design([b for _, b in self.order], self.weights)
        self.kinds = {pt.target.id: pt.target.kind for pt in plan.targets}
        self.baseline = baseline
        self.outcomes: ByTarget = {t: {} for t in self.kinds}
        self.calls: dict[str, str | None] = {}
        self.spend: dict[str, list[float]] = {t: [0.0, 0.0] for t in self.kinds}   # known USD, unknown count
        self.cell_cost: dict[str, float | None] = {}
        self.settled_cells: dict[str, int] = dict.fromkeys(self.kinds, 0)
        self.prefix, self.step = 0, look_step(len(self.order))
        self.next_look = self.step
        self.lock = asyncio.Lock()
        self.record: EarlyStopRecord | None = None

    @classmethod
    async def start(cls, manager: RunManager, run_id: str, plan: Plan, cases: list[Case],
                    control: RunControl) -> StopMonitor | None:
        """A monitor when the plan declares early stopping (never for a recovery child), else None."""
        stop = statistics_of(plan).early_stop
        if stop is None or plan.execution_cells is not None:
            return None
        baseline = None
        if stop.baseline_run:
            baseline = await asyncio.to_thread(_baseline_rows, manager, plan)
        return cls(manager, run_id, plan, cases, control, baseline)

    def journal(self, inner: RunJournal) -> RunJournal:
        return _Journal(inner, self)

    def cost(self, cell: Cell, usd: float | None) -> None:
        """A subject or judge call's cost (None: unknown) for the saving estimate and the cost tie-break."""
        if usd is None:
            self.spend[cell.target_id][1] += 1
        else:
            self.spend[cell.target_id][0] += usd
        before = self.cell_cost.get(cell.cell_id, 0.0)
        self.cell_cost[cell.cell_id] = None if usd is None or before is None else before + usd

    def _correct(self, cell: Cell, state: CellState, call: str | None, judge: str | None) -> bool:
        if state != "completed" or call is None:
            return False
        case = self.cases[cell.case_id]
        store = self.manager.store
        digest = store.put_json(case.model_dump(mode="json"), durable=False)
        g, _ = grade_cell(self.manager.engine, digest, call, case.benchmark, judge,
                          grader=self.plan.grader_versions.get(case.benchmark))
        grade = read_grade(store.get_json(g))
        return grade.correct and grade.status not in ("judge_error", "judge_failed")

    async def settled(self, cell: Cell, state: CellState, call: str | None, judge: str | None) -> None:
        correct = await asyncio.to_thread(self._correct, cell, state, call, judge)
        async with self.lock:
            self.settled_cells[cell.target_id] += 1
            self.outcomes[cell.target_id][cell.case_id] = ComparedRow(
                case_id=cell.case_id, target_id=cell.target_id, benchmark=self.cases[cell.case_id].benchmark,
                state=state, correct=correct, cost_usd=self.cell_cost.get(cell.cell_id))
            while self.prefix < len(self.order) and all(self.order[self.prefix][0] in o for o in self.outcomes.values()):
                self.prefix += 1
            if self.control.early_stop is None and (self.prefix >= self.next_look or self.prefix == len(self.order)):
                self.next_look = self.prefix + self.step
                await self._look()

    def _singles(self) -> list[Callable[[str], int]]:
        """The outcome of a case for every single the baseline is chosen among (REP-5's K)."""
        def stored(rows: Cells) -> Callable[[str], int]:
            return lambda c: rows[c].ok()

        def live(t: str) -> Callable[[str], int]:
            return lambda c: int(self.outcomes[t][c].correct is True)

        if self.baseline is not None:
            return [stored(rows) for rows in self.baseline[2].values()]
        return [live(t) for t, k in self.kinds.items() if k == "single"]

    def _pairs(self) -> list[tuple[str, str, Callable[[str], int]]]:
        """(candidate, baseline target, baseline outcome of a case) for the current prefix."""
        if self.baseline is not None:
            best, rows, _ = self.baseline

            def frozen(c: str) -> int:
                return rows[c].ok()

            return [(t, best, frozen) for t in self.kinds]
        keep = {c for c, _ in self.order[: self.prefix]}
        prefix = {t: {c: r for c, r in rows.items() if c in keep} for t, rows in self.outcomes.items()}
        chosen, _ = choose_baseline(self.plan, prefix, self.weights, set(AUX_COST_FIELDS))

        def live(c: str) -> int:
            return int(self.outcomes[chosen][c].correct is True)

        return [(t, chosen, live) for t, k in self.kinds.items() if k == "mom"]

    async def _look(self) -> None:
        margin = self.stats.margin
        cases = [c for c, _ in self.order[: self.prefix]]

        singles = self._singles() if self.stats.baseline_selection == "adjusted" else []

        def run() -> list[TargetDecision]:
            out = []
            for cand, best, base in self._pairs():
                mine = [int(self.outcomes[cand][c].correct is True) for c in cases]
                if len(singles) > 1:        # the claim compare will make: against every single (issue 28)
                    ds = [[m - f(c) for m, c in zip(mine, cases, strict=True)] for f in singles]
                    out.append(TargetDecision(target_id=cand, baseline_target_id=best, selection=StopSelection(
                        k=len(singles), adjustment=ADJUSTMENT), **decide_selected(ds, self.design, margin).model_dump()))
                    continue
                d = [m - base(c) for m, c in zip(mine, cases, strict=True)]
                out.append(TargetDecision(target_id=cand, baseline_target_id=best,
                                          **decide(d, self.design, margin).model_dump()))
            return out
        decisions = await asyncio.to_thread(run)
        states = {x.state for x in decisions}     # each decision's StopDecision state
        if not decisions or "continue" in states:
            return
        reason: StopReason = "settled" if states == {"settled"} else (
            "unreachable" if states == {"unreachable"} else "settled or unreachable")
        self.record = record = EarlyStopRecord(
            rule="betting", method=METHOD, order=ORDER, reason=reason,
            summary="; ".join(f"{x.target_id} vs {x.baseline_target_id}: {x.verdict}" for x in decisions),
            question=decisions[0].question, margin=margin, decided_at_cases=self.prefix,
            planned_cases=len(self.order), decided_at=time.time(), decisions=decisions,
            baseline=(self.stats.early_stop.baseline_run if self.stats.early_stop else None)
            or "strongest single target of this run")
        self.control.early_stop = record
        await self.manager.journal.submit(lambda c: add_event(c, self.run_id, "early_stop", EarlyStop(
            reason=reason, summary=record.summary, decided_at_cases=self.prefix, planned_cases=len(self.order))))

    async def close(self) -> None:
        """Record the stop in the run's extra: cells never sent, estimated money not spent."""
        if self.record is None:
            return
        pending = pending_by_target(self.manager.journal, self.run_id)
        saving: float | None = 0.0
        for t, n in pending.items():
            known, unknown = self.spend[t]
            if unknown or not self.settled_cells[t]:
                saving = None
                break
            saving = (saving or 0.0) + n * known / self.settled_cells[t]     # never None here: None breaks
        record = self.record.model_copy(update={
            "cells_not_sent": sum(pending.values()), "cells_not_sent_by_target": pending,
            "subject_calls_not_sent": sum(pending.values()), "estimated_saving_usd": saving,
            "saving_basis": "each target's mean known cost per settled cell (subject and judge calls) times "
                            "its cells not sent: an estimate, not a bill; unknown when a cost was unknown"})
        await self.manager.journal.submit(lambda c: record_early_stop(c, self.run_id, record, saving))
