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
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Iterable
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from srbench.cas import ObjectStore
from srbench.errors import DamagedObject, NotFound
from srbench.schemas.cell import UNSUCCESSFUL_CELL_STATES
from srbench.schemas.results import ResultRow
from srbench.schemas.wire import WireJSON
from srbench.stages.report.conversations import role_totals
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


def _diagnostics(rows: list[ResultRow], strict: dict[str, bool | None], subject_calls: int) -> OutputDiagnostics:
    checks = [strict.get(r.cell_id) for r in rows if r.grade]
    flags = [c for c in checks if isinstance(c, bool)]
    finishes = Counter(r.finish_reason for r in rows if r.has_call and r.finish_reason)
    return OutputDiagnostics(
        planned_cases=len(rows), result_cases=sum(r.state != "pending" for r in rows),
        output_limit_cases=sum(r.grade_status == "output_limit" for r in rows),
        strict_format=StrictFormat(checked_cases=len(flags), failed_cases=flags.count(False),
                                   unassessed_cases=len(rows) - len(flags)),
        subject_calls=SubjectCalls(total=subject_calls, finish_reasons=dict(sorted(finishes.items())),
                                   unknown_finish_reason=subject_calls - sum(finishes.values())))


def _continuity(rows: list[ResultRow]) -> Continuity:
    """Model switches within cells of several subject requests (a router's turns name their models)."""
    switches: dict[str, int] = {}
    unknown = multi = 0
    correct: dict[str, bool] = {}
    for r in rows:
        requests = (r.calls_by_role or {}).get("subject", 0) if r.conversation else int(r.has_call)
        if requests < 2:
            continue
        if any((t.inference_calls or 0) > 1 for t in r.turn_routing or []):
            multi += 1
            continue
        models = [m for m in (r.turn_models or []) if m]
        unknown += requests - len(models)
        switches[r.cell_id] = sum(a != b for a, b in zip(models, models[1:], strict=False))
        correct[r.cell_id] = r.state == "completed" and r.correct is True
    moved = [c for c, n in switches.items() if n]
    still = [c for c, n in switches.items() if not n]

    def acc(ids: list[str]) -> float | None:
        return sum(correct[c] for c in ids) / len(ids) if ids else None
    return Continuity(multi_request_tasks=len(switches), switched_tasks=len(moved), switched_accuracy=acc(moved),
                      unswitched_tasks=len(still), unswitched_accuracy=acc(still),
                      model_switches=sum(switches.values()),
                      mean_switches_per_task=sum(switches.values()) / len(switches) if switches else None,
                      max_switches_per_task=max(switches.values(), default=None), decision_changed_tasks=0,
                      unknown_model_requests=unknown, multi_inference_tasks=multi)


def metric(rows: list[ResultRow], strict: dict[str, bool | None], mom: bool) -> Metric:
    """Upstream's figures of `rows` (one target's planned cells, or those of one benchmark)."""
    total = len(rows)
    completed = sum(r.state == "completed" for r in rows)
    failed = sum(r.state in UNSUCCESSFUL_CELL_STATES for r in rows)
    scored = sum(r.state == "completed" and r.correct is not None for r in rows)
    roles = role_totals(rows)
    subject_calls = roles.calls_by_role.get("subject", 0)
    covered = bool(rows) and all(r.has_call for r in rows)
    costs = [r.cost_usd for r in rows]
    evaluation = _sum(_eval_cost(r) for r in rows)
    principal = _sum(costs)
    usages = [r.usage for r in rows]
    tokens = None
    if covered and all(u is not None for u in usages):
        tokens = {k: sum(getattr(u, k) for u in usages if u is not None)
                  for k in ("input", "cached_input", "cache_write", "output")}
    called = [r for r in rows if r.has_call]
    lat = [r.latency_s for r in called if r.latency_s is not None]
    ok_lat = [r.latency_s for r in rows if r.state == "completed" and r.latency_s is not None]
    ttft = [r.ttft_s for r in rows if r.state == "completed" and r.ttft_s is not None]
    served = ([m for r in called for m in (r.turn_models or [r.selected_model]) if m] if mom
              else [r.response_model for r in called if r.response_model])
    return Metric(
        failed=failed, pending=total - completed - failed, scored=scored,
        complete=completed == total and scored == total, accuracy_denominator=ACCURACY_DENOMINATOR,
        output_diagnostics=_diagnostics(rows, strict, subject_calls), cost_usd=principal,
        cache_neutral_cost_usd=_sum(r.cache_neutral_cost_usd for r in rows), cache_neutral_cost_basis=CACHE_NEUTRAL_BASIS,
        known_cost_usd=float(sum(c for c in costs if c is not None)), cost_complete=covered and principal is not None,
        evaluation_cost_usd=evaluation,
        total_spend_usd=principal + evaluation if covered and principal is not None and evaluation is not None else None,
        tokens=tokens, call_count=roles.call_count, request_count=len(called),
        selected_models=dict(sorted(Counter(served).items())),
        pending_selection_count=sum(r.state == "dispatching" and not r.selected_model for r in rows),
        decisions=dict(sorted(Counter(r.decision for r in called if r.decision).items())),
        continuity=_continuity(rows), evaluation_call_count=roles.call_count - subject_calls,
        latency_p50_s=percentile(ok_lat, 0.5), latency_p95_s=percentile(ok_lat, 0.95),
        ttft_p50_s=percentile(ttft, 0.5), request_time_sum_s=float(sum(lat)) if lat else None)


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


def first_failure(rows: list[ResultRow]) -> WireJSON | None:
    """The first cell in plan order that ended failed, as upstream's report names it."""
    failed = next((r for r in sorted(rows, key=lambda r: r.seq) if r.state == "failed"), None)
    if failed is None:
        return None
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
        results = report.get("results")
        rows = [ResultRow.model_validate(r) for r in iter_rows(self.objects, results)] if isinstance(results, str) else []
        strict = {r.cell_id: self._strict(r.grade) for r in rows if r.grade}
        kinds = {t["target_id"]: t.get("kind") for t in (report.get("summary") or {}).get("targets", [])}
        mode = str(report.get("mode"))
        by_target: dict[str, list[ResultRow]] = {}
        for r in rows:
            by_target.setdefault(r.target_id, []).append(r)
        targets: dict[str, WireJSON] = {}
        benches: dict[tuple[str, str], WireJSON] = {}
        for tid, trows in by_target.items():
            mom = kinds.get(tid) == "mom"
            targets[tid] = for_mode(mode, metric(trows, strict, mom).model_dump(mode="json"))
            per: dict[str, list[ResultRow]] = {}
            for r in trows:
                per.setdefault(r.benchmark, []).append(r)
            for bench, brows in per.items():
                benches[(tid, bench)] = for_mode(mode, metric(brows, strict, mom).model_dump(mode="json"))
        return Figures(targets, benches, first_failure(rows))


def merge(row: WireJSON, figures: WireJSON | None, override: Iterable[str] = ()) -> WireJSON:
    """`row` with the figures it does not carry yet (and those in `override` when it carries them as null)."""
    if figures is None:
        return dict(row)
    out = dict(row)
    for key, value in figures.items():
        if key not in out or (key in override and out[key] is None):
            out[key] = value
    return out
