"""A running run's figures so far, maintained as its cells finish (`GET /runs/{run_id}/live`, issue 41).

The report of a run that is still going was rebuilt on every request (O(run): 7-13 s at 10k cells on a
loaded 2-core host), so the run page lagged and froze. Instead, every report row the row builder makes
(service/runs/report_rows.py, about once a second, as cells finish) is folded here into per-target
counters: answered, failed, correct, principal cost (known part, and whether every folded cell's is
known), judge cost. The answer reads those counters and the run's maintained cell counts: O(targets),
whatever the run's size. It is what the run page and `sr-bench report RUN` show while the run goes;
once it has ended, the end-of-run report is the answer (the counters are dropped).

`folded` says how many finished cells the figures hold; the run view's counts may be ahead by the cells
finished since the builder's last batch (about a second). A cell graded in a sandbox is folded when its
grading pool has graded it (service/runs/grading.py), one a sandbox fault left ungraded is not (its report
grades it again). Each target's planned cells are the plan's: its execution cells (a recovery child's
selection), else the dataset's cases. An ended run answers from its end-of-run report's summary.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import orjson

from srbench import TERMINAL_STATUSES
from srbench.schemas.plan import Plan
from srbench.schemas.report import TargetSummary
from srbench.service.api import workflow as wf
from srbench.service.runs.state import RunState

if TYPE_CHECKING:
    from srbench.service.app import Service


@dataclass
class _Target:
    answered: int = 0
    failed: int = 0
    correct: int = 0
    cost_usd: float = 0.0
    cost_unknown: int = 0
    judge_cost_usd: float = 0.0
    judge_unknown: int = 0


class LiveFigures:
    """Per run, per target counters of the rows built so far (thread-safe: the row builder folds, the
    service's handlers read)."""

    def __init__(self) -> None:
        self._runs: dict[str, dict[str, _Target]] = {}
        self._folded: dict[str, int] = {}
        self._lock = threading.Lock()

    def begin(self, run_id: str) -> None:
        with self._lock:
            self._runs.setdefault(run_id, {})
            self._folded.setdefault(run_id, 0)

    def fold(self, run_id: str, rows: Iterable[tuple[str, str]]) -> None:
        """Add built rows (target id, the row's canonical JSON) of cells that have just finished."""
        parsed = [(t, orjson.loads(row)) for t, row in rows]
        with self._lock:
            targets = self._runs.get(run_id)
            if targets is None:
                return
            for tid, r in parsed:
                t = targets.setdefault(tid, _Target())
                if r.get("state") == "completed":
                    t.answered += 1
                    t.correct += r.get("correct") is True
                else:
                    t.failed += 1
                cost, judge = r.get("cost_usd"), r.get("judge_cost_usd", 0.0)
                if cost is None:
                    t.cost_unknown += 1
                else:
                    t.cost_usd += cost
                if judge is None:
                    t.judge_unknown += 1
                else:
                    t.judge_cost_usd += judge
            self._folded[run_id] += len(parsed)

    def forget(self, run_id: str) -> None:
        with self._lock:
            self._runs.pop(run_id, None)
            self._folded.pop(run_id, None)

    def view(self, run: RunState, plan: Plan) -> wf.LiveFigures:
        """The run's figures so far (the counters as they are now; none yet when no row was built)."""
        with self._lock:
            targets = {t: _Target(**vars(a)) for t, a in (self._runs.get(run.id) or {}).items()}
            folded = self._folded.get(run.id, 0)
        judged = bool(plan.auxiliary_targets)
        planned = planned_cells(plan, run.progress.total)
        out = []
        for info in run.target_info:
            a = targets.get(info.id, _Target())
            done = a.answered + a.failed
            per = planned.get(info.id, 0)
            out.append(wf.LiveTarget(
                target_id=info.id, kind=info.kind, planned=per, finished=done, answered=a.answered, failed=a.failed,
                correct=a.correct, accuracy_answered=a.correct / a.answered if a.answered else None,
                accuracy_planned=a.correct / per if per else None, known_cost_usd=a.cost_usd,
                cost_usd=a.cost_usd if not a.cost_unknown else None,
                judge_cost_usd=(a.judge_cost_usd if not a.judge_unknown else None) if judged else None))
        return wf.LiveFigures(run_id=run.id, status=run.status, progress=run.progress, folded=folded,
                              judged=judged, targets=out, model_requests=0)


def planned_cells(plan: Plan, total: int) -> dict[str, int]:
    """Each target's planned cells: the plan's execution cells (a recovery child runs a selection, which
    differs per target), else one per case of its dataset (the run's total shared out when an old plan does
    not record its case count)."""
    if plan.execution_cells is not None:
        return dict(Counter(cell[1] for cell in plan.execution_cells))
    ids = [pt.target.id for pt in plan.targets]
    per = plan.dataset.case_count if plan.dataset.case_count is not None else total // max(1, len(ids))
    return dict.fromkeys(ids, per)


def from_report(run: RunState, judged: bool, targets: list[TargetSummary]) -> wf.LiveFigures:
    """An ended run's figures, read from its end-of-run report's summary (the same fields)."""
    out = [wf.LiveTarget(target_id=t.target_id, kind=t.kind, planned=t.total, finished=t.completed + t.failed,
                         answered=t.completed, failed=t.failed, correct=t.correct or 0,
                         accuracy_answered=t.accuracy_answered, accuracy_planned=t.accuracy, cost_usd=t.cost_usd,
                         known_cost_usd=t.known_cost_usd, judge_cost_usd=t.judge_cost_usd if judged else None)
           for t in targets]
    return wf.LiveFigures(run_id=run.id, status=run.status, progress=run.progress,
                          folded=sum(t.finished for t in out), judged=judged, targets=out, model_requests=0)


def live_figures(service: Service, run: RunState) -> wf.LiveFigures:
    """A run's live figures (`run`: its view, as just read): while it runs, those its cells have folded so
    far; once it ended, its report's."""
    plan = service.runs.plans.cached(run.plan)
    if run.status in TERMINAL_STATUSES:         # ended: the end-of-run report's figures (built once, then cached)
        report = service.objects.get_json(service.runs.report_digest(run.id)[0])
        return from_report(run, bool(plan.auxiliary_targets),
                           [TargetSummary.model_validate(t) for t in report["summary"]["targets"]])
    return service.runs.rows.live.view(run, plan)


__all__ = ["LiveFigures", "live_figures", "planned_cells"]
