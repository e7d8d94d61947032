"""Upstream's report figures (vLLM Semantic Router's `report.metric`), filled from sr-bench's own result rows.

Upstream's report gives each target, and each target on each benchmark, one block of figures; sr-bench's
report carries most of them under the same names. This module computes the rest from the report's
result rows (and each graded row's `strict_format`), with upstream's meaning, so that the wire report is a
superset of upstream's:

- ``scored`` (completed cells with a verdict), ``complete`` (every planned cell completed and scored);
- ``evaluation_cost_usd``: the judge, simulator and scaffolding calls' cost (0 without such calls, null
  when one is unknown); ``total_spend_usd``: principal plus evaluation cost, null unless every planned
  cell has a subject call and every cost is known;
- ``output_diagnostics``: planned and started cells, cells graded ``output_limit``, strict-format checks
  and subject calls by finish reason (a conversation's subject calls other than its last have no
  recorded finish reason: counted unknown);
- ``continuity``: model switches within multi-request cells (a router's conversation turns);
- per benchmark row also tokens, costs, latencies and call counts as the target summary has them;
- ``queue_wait_p50_s``, ``queue_wait_p95_s``, ``case_wall_time_p50_s``: null (sr-bench records no
  cell queue wait or whole-case wall time), never a made-up 0.

Reports are immutable objects, so the figures of each report digest are computed once and kept (bounded).
A report the service builds has them made in the same pass, from the rows the build holds (`collector`,
`FigureCollector`: the report rule's `observe`), so its first answer reads no row back; any other report's
are computed from its stored rows on its first answer. Both give the same figures.
"""

from __future__ import annotations

from array import array
from collections import Counter, OrderedDict
from collections.abc import Iterable
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from srbench.cas import ObjectStore
from srbench.errors import DamagedObject, NotFound
from srbench.schemas.cell import UNSUCCESSFUL_CELL_STATES
from srbench.schemas.results import ResultRow
from srbench.schemas.wire import WireJSON
from srbench.stages.report.cells import CellRow
from srbench.stages.report.conversations import RoleTally
from srbench.stages.report.results import iter_rows
from srbench.stages.stats.basic import percentile

MAX_CACHED = 256
MAX_GRADES = 200_000          # strict-format flags kept by grade digest (~100 bytes each)
ACCURACY_DENOMINATOR = "every planned cell; a failed, cancelled or unanswered cell counts as incorrect"
CACHE_NEUTRAL_BASIS = ("subject cost with every cached or cache-written input token priced as fresh input, "
                       "plus output; a counterfactual, not billed spend")
AUX_COSTS = ("judge_cost_usd", "simulator_cost_usd", "scaffolding_cost_usd")
PREVIEW_NONE = ("tokens", "cost_usd", "cache_neutral_cost_usd", "ttft_p50_s", "total_spend_usd",
                "evaluation_cost_usd")
ESTIMATED = ("cost_usd", "cache_neutral_cost_usd", "latency_p50_s", "latency_p95_s", "ttft_p50_s")
_OUT = ConfigDict(extra="forbid", frozen=True)
TOKEN_KEYS = ("input", "cached_input", "cache_write", "output")


class StrictFormat(BaseModel):
    model_config = _OUT
    checked_cases: int = Field(description="graded cells whose grade recorded a strict-format check")
    failed_cases: int = Field(description="those whose answer was not in the strict format")
    unassessed_cases: int = Field(description="planned cells without such a check")


class SubjectCalls(BaseModel):
    model_config = _OUT
    total: int = Field(description="subject calls recorded")
    finish_reasons: dict[str, int] = Field(description="recorded finish reasons")
    unknown_finish_reason: int = Field(description="subject calls without a recorded finish reason")


class OutputDiagnostics(BaseModel):
    model_config = _OUT
    planned_cases: int = Field(description="planned cells")
    result_cases: int = Field(description="cells that started")
    output_limit_cases: int = Field(description="cells graded output_limit (the reply hit the output cap)")
    strict_format: StrictFormat
    subject_calls: SubjectCalls


class Continuity(BaseModel):
    model_config = _OUT
    multi_request_tasks: int = Field(description="cells with two or more subject requests of one model sequence")
    switched_tasks: int = Field(description="those whose served model changed between requests")
    switched_accuracy: float | None = Field(description="accuracy of the switched cells")
    unswitched_tasks: int = Field(description="those whose served model never changed")
    unswitched_accuracy: float | None = Field(description="accuracy of the unswitched cells")
    model_switches: int = Field(description="model changes over all of them")
    mean_switches_per_task: float | None = Field(description="model changes per multi-request cell")
    max_switches_per_task: int | None = Field(description="the most model changes in one cell")
    decision_changed_tasks: int = Field(description="cells whose recorded decision changed (sr-bench records "
                                                    "one decision per cell: 0)")
    unknown_model_requests: int = Field(description="subject requests of those cells naming no served model")
    multi_inference_tasks: int = Field(description="cells with a request of several inference calls")


class Metric(BaseModel):
    """Upstream's figures of one target, or one target on one benchmark, from sr-bench's rows."""

    model_config = _OUT
    failed: int
    pending: int
    scored: int
    complete: bool
    accuracy_denominator: str
    output_diagnostics: OutputDiagnostics
    cost_usd: float | None
    cache_neutral_cost_usd: float | None
    cache_neutral_cost_basis: str
    known_cost_usd: float
    cost_complete: bool
    evaluation_cost_usd: float | None
    total_spend_usd: float | None
    tokens: dict[str, int] | None
    call_count: int
    request_count: int
    selected_models: dict[str, int]
    pending_selection_count: int
    decisions: dict[str, int]
    continuity: Continuity
    queue_wait_p50_s: float | None = None
    queue_wait_p95_s: float | None = None
    evaluation_call_count: int
    case_wall_time_p50_s: float | None = None
    latency_p50_s: float | None
    latency_p95_s: float | None
    ttft_p50_s: float | None
    request_time_sum_s: float | None


def _sum(values: Iterable[float | None]) -> float | None:
    vals = list(values)
    return None if any(v is None for v in vals) else float(sum(v for v in vals if v is not None))


def _eval_cost(r: ResultRow) -> float | None:
    return _sum(getattr(r, f) if f in r.model_fields_set or f == "judge_cost_usd" else 0.0 for f in AUX_COSTS)


class _Group:
    """Upstream's figures of rows given one at a time, in plan order (`metric` over a list gives the same):
    counters, the floats each sum or percentile reads (8 bytes a row) and the multi-request cells' switches —
    never the rows themselves (a 100k-cell report's rows as models were ~500 MiB in the service)."""

    def __init__(self, mom: bool) -> None:
        self.mom = mom
        self.total = self.completed = self.failed = self.scored = self.started = self.output_limit = 0
        self.roles = RoleTally()
        self.called = self.pending_selection = 0
        self.costs, self.cache_neutral, self.evaluation = array("d"), array("d"), array("d")
        self.unknown: set[str] = set()          # the sums above that met a None
        self.usage_unknown = False
        self.tokens = dict.fromkeys(TOKEN_KEYS, 0)
        self.lat, self.ok_lat, self.ttft = array("d"), array("d"), array("d")
        self.served: Counter[str] = Counter()
        self.decisions: Counter[str] = Counter()
        self.finishes: Counter[str] = Counter()
        self.checked = self.strict_failed = 0
        self.switches: dict[str, int] = {}
        self.switch_correct: dict[str, bool] = {}
        self.unknown_models = self.multi_inference = 0

    def _sum_into(self, name: str, values: array[float], value: float | None) -> None:
        if value is None:
            self.unknown.add(name)
        else:
            values.append(value)

    def add(self, r: ResultRow, strict: bool | None) -> None:
        """One row; `strict` its grade's strict-format flag (None: unchecked, or no grade)."""
        self.total += 1
        self.completed += r.state == "completed"
        self.failed += r.state in UNSUCCESSFUL_CELL_STATES
        self.scored += r.state == "completed" and r.correct is not None
        self.started += r.state != "pending"
        self.output_limit += r.grade_status == "output_limit"
        self.roles.add(r)
        self._sum_into("cost", self.costs, r.cost_usd)
        self._sum_into("evaluation", self.evaluation, _eval_cost(r))
        self._sum_into("cache_neutral", self.cache_neutral, r.cache_neutral_cost_usd)
        if r.usage is None:
            self.usage_unknown = True
        else:
            for k in TOKEN_KEYS:
                self.tokens[k] += getattr(r.usage, k)
        if r.grade and isinstance(strict, bool):
            self.checked += 1
            self.strict_failed += strict is False
        if r.state == "completed":
            if r.latency_s is not None:
                self.ok_lat.append(r.latency_s)
            if r.ttft_s is not None:
                self.ttft.append(r.ttft_s)
        self.pending_selection += r.state == "dispatching" and not r.selected_model
        if r.has_call:
            self._called(r)
        else:
            self.unknown.add("covered")
        self._continuity(r)

    def _called(self, r: ResultRow) -> None:
        self.called += 1
        if r.finish_reason:
            self.finishes[r.finish_reason] += 1
        if r.latency_s is not None:
            self.lat.append(r.latency_s)
        if self.mom:
            self.served.update(m for m in (r.turn_models or [r.selected_model]) if m)
        elif r.response_model:
            self.served[r.response_model] += 1
        if r.decision:
            self.decisions[r.decision] += 1

    def _continuity(self, r: ResultRow) -> None:
        """Model switches within cells of several subject requests (a router's turns name their models)."""
        requests = (r.calls_by_role or {}).get("subject", 0) if r.conversation else int(r.has_call)
        if requests < 2:
            return
        if any((t.inference_calls or 0) > 1 for t in r.turn_routing or []):
            self.multi_inference += 1
            return
        models = [m for m in (r.turn_models or []) if m]
        self.unknown_models += requests - len(models)
        self.switches[r.cell_id] = sum(a != b for a, b in zip(models, models[1:], strict=False))
        self.switch_correct[r.cell_id] = r.state == "completed" and r.correct is True

    def continuity(self) -> Continuity:
        switches, correct = self.switches, self.switch_correct
        moved = [c for c, n in switches.items() if n]
        still = [c for c, n in switches.items() if not n]

        def acc(ids: list[str]) -> float | None:
            return sum(correct[c] for c in ids) / len(ids) if ids else None
        return Continuity(multi_request_tasks=len(switches), switched_tasks=len(moved), switched_accuracy=acc(moved),
                          unswitched_tasks=len(still), unswitched_accuracy=acc(still),
                          model_switches=sum(switches.values()),
                          mean_switches_per_task=sum(switches.values()) / len(switches) if switches else None,
                          max_switches_per_task=max(switches.values(), default=None), decision_changed_tasks=0,
                          unknown_model_requests=self.unknown_models, multi_inference_tasks=self.multi_inference)

    def _total(self, name: str, values: array[float]) -> float | None:
        return None if name in self.unknown else float(sum(values))

    def metric(self) -> Metric:
        roles = self.roles.totals()
        subject_calls = roles.calls_by_role.get("subject", 0)
        covered = self.total > 0 and "covered" not in self.unknown
        principal, evaluation = self._total("cost", self.costs), self._total("evaluation", self.evaluation)
        diagnostics = OutputDiagnostics(
            planned_cases=self.total, result_cases=self.started, output_limit_cases=self.output_limit,
            strict_format=StrictFormat(checked_cases=self.checked, failed_cases=self.strict_failed,
                                       unassessed_cases=self.total - self.checked),
            subject_calls=SubjectCalls(total=subject_calls, finish_reasons=dict(sorted(self.finishes.items())),
                                       unknown_finish_reason=subject_calls - sum(self.finishes.values())))
        return Metric(
            failed=self.failed, pending=self.total - self.completed - self.failed, scored=self.scored,
            complete=self.completed == self.total and self.scored == self.total,
            accuracy_denominator=ACCURACY_DENOMINATOR, output_diagnostics=diagnostics, cost_usd=principal,
            cache_neutral_cost_usd=self._total("cache_neutral", self.cache_neutral),
            cache_neutral_cost_basis=CACHE_NEUTRAL_BASIS, known_cost_usd=float(sum(self.costs)),
            cost_complete=covered and principal is not None, evaluation_cost_usd=evaluation,
            total_spend_usd=principal + evaluation if covered and principal is not None and evaluation is not None
            else None,
            tokens=dict(self.tokens) if covered and not self.usage_unknown else None, call_count=roles.call_count,
            request_count=self.called, selected_models=dict(sorted(self.served.items())),
            pending_selection_count=self.pending_selection, decisions=dict(sorted(self.decisions.items())),
            continuity=self.continuity(), evaluation_call_count=roles.call_count - subject_calls,
            latency_p50_s=percentile(self.ok_lat, 0.5), latency_p95_s=percentile(self.ok_lat, 0.95),
            ttft_p50_s=percentile(self.ttft, 0.5), request_time_sum_s=float(sum(self.lat)) if self.lat else None)


def metric(rows: list[ResultRow], strict: dict[str, bool | None], mom: bool) -> Metric:
    """Upstream's figures of `rows` (one target's planned cells, or those of one benchmark)."""
    group = _Group(mom)
    for r in rows:
        group.add(r, strict.get(r.cell_id) if r.grade else None)
    return group.metric()


def for_mode(mode: str, figures: WireJSON) -> WireJSON:
    """Upstream's mode rules: a preview measures no cost; a replay's figures are offline estimates."""
    out = dict(figures)
    if mode == "preview":
        out.update(dict.fromkeys(PREVIEW_NONE))
    elif mode == "replay":
        out.update({"estimated_" + k: out[k] for k in ESTIMATED} | dict.fromkeys(ESTIMATED))
        out.update(total_spend_usd=0.0, evaluation_cost_usd=0.0, cost_complete=False, known_cost_usd=0.0)
    return out


class Figures(NamedTuple):
    """Upstream's figures of one report."""

    targets: dict[str, WireJSON]
    """Per target id."""
    benchmarks: dict[tuple[str, str], WireJSON]
    """Per (target id, benchmark)."""
    failure: WireJSON | None
    """Upstream's `failure`: the first failed cell in plan order (inferred from the saved rows), or None."""


NO_FIGURES = Figures({}, {}, None)


def _failure(failed: ResultRow) -> WireJSON:
    return {"case_id": failed.case_id, "target_id": failed.target_id,
            "reason": failed.error or failed.error_class or "failed", "inferred_from_saved_results": True}


class ReportFigures:
    """Upstream's figures per target and per (target, benchmark) of stored reports, by report digest."""

    def __init__(self, objects: ObjectStore) -> None:
        self.objects = objects
        self._cache: OrderedDict[str, Figures] = OrderedDict()
        # grades are immutable objects: a running run's next report reads the flags of its earlier grades here
        self._strict_of: OrderedDict[str, bool | None] = OrderedDict()

    def of(self, digest: str, report: WireJSON) -> Figures:
        """Upstream's figures of the report stored at `digest`."""
        hit = self._cache.get(digest)
        if hit is None:
            hit = self._compute(report)
            self._cache[digest] = hit
            while len(self._cache) > MAX_CACHED:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(digest)
        return hit

    def put(self, digest: str, figures: Figures) -> None:
        """The figures of the report stored at `digest`, made as it was built (`FigureCollector`)."""
        self._cache[digest] = figures
        while len(self._cache) > MAX_CACHED:
            self._cache.popitem(last=False)

    def collector(self, kinds: dict[str, str], mode: str) -> FigureCollector:
        """A collector of the figures of a report being built (`kinds`: each target's kind; `mode`: the plan's)."""
        return FigureCollector(self, kinds, mode)

    def _strict(self, grade: str) -> bool | None:
        if grade in self._strict_of:
            return self._strict_of[grade]
        try:
            value = self.objects.get_json(grade).get("strict_format")
        except (DamagedObject, NotFound, OSError, ValueError):        # unreadable: unassessed, never a guess
            return None
        flag = value if isinstance(value, bool) else None
        self._strict_of[grade] = flag
        while len(self._strict_of) > MAX_GRADES:
            self._strict_of.popitem(last=False)
        return flag

    def _compute(self, report: WireJSON) -> Figures:
        """One pass over the report's rows, one page and one row model at a time (`_Group`)."""
        results = report.get("results")
        kinds = {t["target_id"]: t.get("kind") for t in (report.get("summary") or {}).get("targets", [])}
        mode = str(report.get("mode"))
        groups: dict[str, tuple[_Group, dict[str, _Group]]] = {}     # target → its group, its benchmarks' groups
        failure: WireJSON | None = None
        failure_seq = 0
        for raw in iter_rows(self.objects, results) if isinstance(results, str) else ():
            r = ResultRow.model_validate(raw)
            if r.target_id not in groups:
                groups[r.target_id] = (_Group(kinds.get(r.target_id) == "mom"), {})
            target, benches = groups[r.target_id]
            if r.benchmark not in benches:
                benches[r.benchmark] = _Group(target.mom)
            flag = self._strict(r.grade) if r.grade else None
            target.add(r, flag)
            benches[r.benchmark].add(r, flag)
            if r.state == "failed" and (failure is None or r.seq < failure_seq):
                failure, failure_seq = _failure(r), r.seq
        return Figures({tid: for_mode(mode, g.metric().model_dump(mode="json")) for tid, (g, _) in groups.items()},
                       {(tid, b): for_mode(mode, g.metric().model_dump(mode="json"))
                        for tid, (_, benches) in groups.items() for b, g in benches.items()}, failure)


def merge(row: WireJSON, figures: WireJSON | None, override: Iterable[str] = ()) -> WireJSON:
    """`row` with the figures it does not carry yet (and those in `override` when it carries them as null)."""
    if figures is None:
        return dict(row)
    out = dict(row)
    for key, value in figures.items():
        if key not in out or (key in override and out[key] is None):
            out[key] = value
    return out


class FigureCollector:
    """Upstream's figures of a report as the report rule builds it (its `observe`: each target's rows in plan
    order, grades included, so no grade object is read for its strict-format flag), the same `_Group`s as
    `ReportFigures._compute`. `figures()` once every target was told (`complete`)."""

    def __init__(self, owner: ReportFigures, kinds: dict[str, str], mode: str) -> None:
        self.owner, self.kinds, self.mode = owner, kinds, mode
        self.targets: dict[str, WireJSON] = {}
        self.benches: dict[tuple[str, str], WireJSON] = {}
        self.failure: WireJSON | None = None
        self.failure_seq = 0
        self.told: set[str] = set()

    def complete(self) -> bool:
        """Whether every target was told (a build that ran here; not one another thread built)."""
        return self.told == set(self.kinds)

    def __call__(self, tid: str, built: list[CellRow]) -> None:
        self.told.add(tid)
        if not built:
            return                  # a target without a row has no figures (as `_compute` gives)
        target, benches = _Group(self.kinds.get(tid) == "mom"), {}
        # a target of one benchmark: that benchmark's group is the target's (the same rows in the same order)
        alone = built[0].row.benchmark if all(b.row.benchmark == built[0].row.benchmark for b in built) else None
        for b in built:
            r = b.row
            flag: bool | None = None
            if r.grade:
                got = b.grade.strict_format if b.grade is not None else self.owner._strict(r.grade)
                flag = got if isinstance(got, bool) else None
            target.add(r, flag)
            if alone is None:
                if r.benchmark not in benches:
                    benches[r.benchmark] = _Group(target.mom)
                benches[r.benchmark].add(r, flag)
            if r.state == "failed" and (self.failure is None or r.seq < self.failure_seq):
                self.failure, self.failure_seq = _failure(r), r.seq
        metric = target.metric()
        self.targets[tid] = for_mode(self.mode, metric.model_dump(mode="json"))
        if alone is not None:
            self.benches[(tid, alone)] = for_mode(self.mode, metric.model_dump(mode="json"))
        for bench, g in benches.items():
            self.benches[(tid, bench)] = for_mode(self.mode, g.metric().model_dump(mode="json"))

    def figures(self) -> Figures:
        return Figures(self.targets, self.benches, self.failure)
