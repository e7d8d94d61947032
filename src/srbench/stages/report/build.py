"""Report: what the report rule (stages/report/rule.py) computes from the plan, every cell's state and
call record and the grader versions.

Denominator = every planned cell: a failed, ambiguous or never-dispatched cell counts as not
correct. Unknown figures are `null`, never 0. A run that is not completed in every cell is never
called complete. Grades are rules of their own, so a grader bump regrades and nothing else reruns.
Per-cell rows are a separate object (`results`), paged by the service.

A multi-call cell's row sums its subject calls as the principal figures and reports its auxiliary
calls' costs apart per role (stages/report/conversations.py); it is graded from its conversation record.

Each benchmark row also carries the published rule's figure (published_report.py); each live MoM
target with a pinned config_hash carries `config_hash_evidence` (evidence.py), and an unconfirmed pin
is a limitation on that target's summary and every one of its benchmark rows.

The build streams (issue 11): one target's rows at a time (stages/report/cells.py builds a row),
spilled and read back in seq order into the results pages and the content digest
(stages/report/stream.py), so its memory does not grow with the run. Rows built as the run's cells
finished (a `RowMemo`: service/runs/report_rows.py) are read instead of every call and grade; the
report is the same object with or without them.

A live run with a router (mom) and a single target also gets `paired` (`in_run`): each router
against the strongest single of the same run, both claim rules shown, the declared one making the
claim. A run that stopped early by its plan's rule carries `early_stop` (when and why, the cells
never sent and the money estimated not spent) and says so in its limitations. `recipes` summarises
the run's router recipe captures (UI-7: status, projection hash, limitation).

A run without an answer in every cell says so (stages/report/partial.py, issue 27): `partial` names how
many planned cells were answered and whether the run will still finish; each target and benchmark row
carries `accuracy` over the planned denominator and `accuracy_answered` over the answered cells; and a
run that ended so (cancelled, interrupted, failed) gets the paired figure on the cases both sides
answered, labelled partial (n of N) and never a claim, instead of `compare`'s. The limitations a
report lists are built in stages/report/limits.py.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from pydantic import JsonValue

from srbench import VERSION
from srbench.benchmarks import get as get_benchmark
from srbench.cas import ObjectStore
from srbench.cas.digest import digest_json
from srbench.rules import Engine, RuleInputs, Volatile
from srbench.schemas.cell import UNSUCCESSFUL_CELL_STATES, RunStatus
from srbench.schemas.dataset import Case
from srbench.schemas.plan import Plan
from srbench.schemas.report import (
    BenchmarkRow,
    Provenance,
    Report,
    ReportSummary,
    TargetSummary,
)
from srbench.schemas.report_paired import Paired
from srbench.schemas.report_params import ReportParams
from srbench.schemas.report_sections import ConfigHashEvidence, PriceCorrectionRef, UsageCorrectionRef
from srbench.schemas.results import ResultRow, TurnRouting
from srbench.schemas.target import Target
from srbench.stages.compare.evidence import config_hash_evidence, evidence_limitation
from srbench.stages.datasets.source_labels import for_full_score
from srbench.stages.grading.grade import grader_for
from srbench.stages.report.cells import CellRow, MemoEntry, ReportInputs, RowMemo, cell_row, from_memo
from srbench.stages.report.conversations import AUX_FIELDS, role_totals, usage_total
from srbench.stages.report.full_score import full_score
from srbench.stages.report.in_run import paired_in_run
from srbench.stages.report.limits import limitations, recipe_limitations, stop_limitations
from srbench.stages.report.partial import NEVER_FINISH, needs_partial, partial_block, partial_paired
from srbench.stages.report.published import (
    AGGREGATION,
    headline,
    published_figure,
    published_limitations,
)
from srbench.stages.report.routing import routing_summary
from srbench.stages.report.stream import CellSource, RowSpill
from srbench.stages.stats.basic import percentile, wilson
from srbench.targets import routers

# a benchmark row before the report's mode adjusts it, and the keys of its benchmark's own metrics
_BenchRow = tuple[BenchmarkRow, list[str]]
REPORT_VERSION = "sr-bench-report-v1"      # the report object's layout; the rule's version is in rule.py
TERMINAL_FAIL = UNSUCCESSFUL_CELL_STATES


def _known_spend(targets: list[TargetSummary]) -> float:
    """What the run is known to have spent: each target's total, or where a cost is unknown (a call
    cancelled in flight, an unpriced model) its known principal and auxiliary costs."""
    out = 0.0
    for t in targets:
        if t.total_cost_usd is not None:
            out += t.total_cost_usd
        else:
            out += t.known_cost_usd + sum(getattr(t, f) or 0.0 for f in AUX_FIELDS)
    return float(out)


def _sum_opt(values: list[float | None]) -> float | None:
    return None if any(v is None for v in values) else float(sum(v for v in values if v is not None))


def _aux(targets: list[TargetSummary]) -> dict[str, float | None]:
    """The run's auxiliary costs per role, where a target has a conversation cell (0 for the others)."""
    return {f: _sum_opt([getattr(t, f) if f in t.model_fields_set else 0.0 for t in targets]) for f in AUX_FIELDS
            if f != "judge_cost_usd" and any(f in t.model_fields_set for t in targets)}


def _target_summary(target: Target, rows: list[ResultRow], weights: dict[str, int],
                    turns: dict[str, list[TurnRouting]], revisions: dict[str, set[str | None]],
                    evidence: ConfigHashEvidence | None) -> TargetSummary:
    total = len(rows)
    completed = sum(r.state == "completed" for r in rows)
    failed = sum(r.state in TERMINAL_FAIL for r in rows)
    graded = sum(r.correct is not None for r in rows)
    correct = sum(bool(r.correct) for r in rows)
    calls = [r for r in rows if r.has_call]
    usages = [r.usage for r in calls]
    tokens = None
    if calls and len(calls) == total and all(u is not None for u in usages):
        tokens = usage_total(u for u in usages if u is not None).model_dump()
    costs = [r.cost_usd for r in rows]
    lat = [r.latency_s for r in calls if r.latency_s is not None]
    ok_lat = [r.latency_s for r in rows if r.state == "completed" and r.latency_s is not None]
    ttft = [r.ttft_s for r in rows if r.state == "completed" and r.ttft_s is not None]
    by_bench: dict[str, list[ResultRow]] = {}
    for r in rows:
        by_bench.setdefault(r.benchmark, []).append(r)
    accs = {b: sum(bool(x.correct) for x in rs) / len(rs) for b, rs in by_bench.items()}
    wsum = sum(weights[b] for b in accs)
    macro = sum(weights[b] * a for b, a in accs.items()) / wsum if wsum else None
    # a conversation's router choices count per turn (turn_models), a single call's once
    selected = Counter(m for r in calls for m in (r.turn_models or [r.selected_model]) if m)
    roles = role_totals(rows)
    outside = sorted({m for r in calls for m in r.outside_pool or []}
                     | {m for m in selected if target.models and m not in target.models})
    mom = target.kind == "mom"
    routed = [t for r in rows for t in (turns[r.cell_id] if r.cell_id in turns else [r.own_routing()])] if mom else []
    return TargetSummary(
        target_id=target.id, kind=target.kind, model=target.model, total=total, completed=completed, failed=failed,
        pending=total - completed - failed, graded=graded, correct=correct,
        ambiguous_dispatch=sum(r.state == "ambiguous" for r in rows),
        accuracy=correct / total if total else None, accuracy_ci95=wilson(correct, total),
        accuracy_answered=correct / completed if completed else None,
        accuracy_answered_ci95=wilson(correct, completed), macro_accuracy=macro,
        **full_score(by_bench, revisions).model_dump(),
        tokens=tokens, cost_usd=_sum_opt(costs), known_cost_usd=float(sum(c for c in costs if c is not None)),
        judge_cost_usd=_sum_opt([r.judge_cost_usd for r in rows]),
        total_cost_usd=_sum_opt([*costs, *[r.judge_cost_usd for r in rows],
                                 *[getattr(roles, f) for f in AUX_FIELDS if f in roles.model_fields_set]]),
        cost_complete=all(c is not None for c in costs),
        cache_neutral_cost_usd=_sum_opt([r.cache_neutral_cost_usd for r in rows]),
        latency_p50_s=percentile(ok_lat, 0.5), latency_p95_s=percentile(ok_lat, 0.95),
        ttft_p50_s=percentile(ttft, 0.5), request_time_sum_s=float(sum(lat)) if lat else None,
        request_count=len(calls),
        grade_statuses=dict(sorted(Counter(r.grade_status for r in rows if r.grade_status).items())),
        failure_classes=dict(sorted(Counter(r.error_class for r in rows if r.error_class).items())),
        selected_models=dict(sorted(selected.items())) if mom else None,
        decisions=dict(sorted(Counter(r.decision for r in calls if r.decision).items())) if mom else None,
        routing=routing_summary(routers.for_target(target).name, routed, target.max_inference_calls) if mom else None,
        models_outside_pool=outside, config_hash_evidence=evidence, **roles.model_dump(exclude_unset=True))


@dataclass
class _Pass:
    """What the pass over every target's rows leaves behind (the rows themselves are spilled)."""

    targets: list[TargetSummary] = field(default_factory=list)
    bench: list[tuple[str, list[_BenchRow]]] = field(default_factory=list)
    states: Counter[str] = field(default_factory=Counter)
    receipts: dict[str, dict[str, JsonValue]] = field(default_factory=dict)
    volatile: bool = False


def _target_rows(engine: Engine, ri: ReportInputs, cells: list[tuple[str, list[Any]]],
                 memo_rows: dict[str, MemoEntry], spill: RowSpill) -> list[CellRow]:
    """One target's rows, read from the rule's row memo where it holds and built otherwise; spilled."""
    built: list[CellRow] = []
    fresh: list[ResultRow] = []
    raw: list[tuple[int, str, str]] = []
    for cell_id, cell in cells:
        entry = memo_rows.pop(cell_id, None)
        b = from_memo(cell, entry) if entry is not None else None
        if b is None or entry is None:
            b = cell_row(engine, ri, cell_id, cell)
            fresh.append(b.row)
        else:
            raw.append((cell[0], entry[1], entry[2]))
        built.append(b)
    spill.add(fresh)
    spill.add_raw(raw)
    return built


TargetRows = Callable[[str, list[CellRow]], None]
"""Told each target's rows as a build makes them (`build`'s `observe`: figures made from the same rows, in the
same pass, instead of reading the stored rows back)."""


def _pass(engine: Engine, ri: ReportInputs, cells_of: CellSource, params: ReportParams, spill: RowSpill,
          ctx: str, memo: RowMemo | None, observe: TargetRows | None = None) -> _Pass:
    """Every target's summary and benchmark rows, one target's rows in memory at a time."""
    plan, cases, targets = ri.plan, ri.cases, ri.targets
    revisions: dict[str, set[str | None]] = {}
    for c in cases.values():
        revisions.setdefault(c.benchmark, set()).add(c.metadata.source_revision)
    revisions = for_full_score(revisions, plan.dataset.sources)   # unchecked bytes: not the pinned source
    out = _Pass()
    for tid in targets:
        memo_rows = memo.rows(params.run_id, ctx, tid) if memo is not None else {}
        built = _target_rows(engine, ri, cells_of.target(tid), memo_rows, spill)
        del memo_rows
        if observe is not None:
            observe(tid, built)
        trows = [b.row for b in built]
        turns = {b.row.cell_id: b.turns for b in built if b.turns is not None}
        for b in built:
            out.volatile = out.volatile or b.volatile
            if b.receipt is not None:
                out.receipts.setdefault(digest_json(b.receipt), b.receipt)
            out.states[b.row.state] += 1
        evidence = config_hash_evidence(targets[tid], trows, params.config_probes.get(tid), plan.mode)
        t = _target_summary(targets[tid], trows, plan.benchmark_weights, turns, revisions, evidence)
        out.targets.append(adjust_for_mode(plan.mode, t, trows))
        out.bench.append((tid, _bench_rows(plan, cases, tid, built)))
        del built, trows, turns
    return out


def _final_rows(mode: str, per_target: list[tuple[str, list[_BenchRow]]],
                unconfirmed: dict[str, str | None]) -> list[BenchmarkRow]:
    """The benchmark rows as the report shows them in its mode, with a target's unconfirmed config pin."""
    out: list[BenchmarkRow] = []
    for tid, brows in per_target:
        for row, metrics in brows:
            if unconfirmed.get(tid):
                row = row.model_copy(update={"limitations": [unconfirmed[tid]]})
            if mode == "preview":         # routing only: no capability figures
                data = row.model_dump(exclude_unset=True) | dict.fromkeys(
                    ("correct", "accuracy", "accuracy_ci95", "accuracy_answered"))
                row = BenchmarkRow.model_validate({key: v for key, v in data.items() if key not in metrics})
            elif mode == "replay":        # an offline estimate, never a measurement
                data = row.model_dump(exclude_unset=True)
                for key in ("correct", "accuracy", "accuracy_ci95", "accuracy_answered", *metrics):
                    data["estimated_" + key] = data.pop(key)
                row = BenchmarkRow.model_validate(data)
            out.append(row)
    return out


def _provenance(ri: ReportInputs, receipts: dict[str, dict[str, JsonValue]]) -> Provenance:
    plan = ri.plan
    return Provenance.model_validate(
        {k: getattr(plan, k) for k in ("plan_sha256", "grader_versions", "adapter_versions", "profile", "seed")}
        | {"plan": ri.digests.plan, "dataset": {"id": plan.dataset.id, "sha256": plan.dataset.sha256,
                                              "object": plan.dataset.object},
           "report_version": REPORT_VERSION}
        | ({"sandbox_receipts": [receipts[k] for k in sorted(receipts)]} if receipts else {}))


def _corrections(ri: ReportInputs, params: ReportParams) -> tuple[PriceCorrectionRef | None, UsageCorrectionRef | None]:
    """The price and usage corrections the report reads, as it names them."""
    fix, cor, d = ri.price_fix, ri.correction, ri.digests
    assert (fix is None or d.prices is not None) and (cor is None or d.correction is not None)
    return (None if fix is None else PriceCorrectionRef(digest=d.prices, version=fix.version,
                                                     reason=fix.reason, targets=sorted(fix.prices)),
            None if cor is None else UsageCorrectionRef(
                digest=d.correction, at=params.correction_at, version=cor.version,
                verified_count=cor.verified_count, changed_count=cor.changed_count,
                unverifiable_count=cor.unverifiable_count, old_known_cost_usd=cor.old_known_cost_usd,
                new_known_cost_usd=cor.new_known_cost_usd, qualified=cor.qualified, routers=cor.routers))


def build(engine: Engine, store: ObjectStore, inputs: RuleInputs, params: ReportParams, spill: RowSpill,
          ctx: str, memo: RowMemo | None = None, observe: TargetRows | None = None) -> dict[str, JsonValue]:
    """The report, one target at a time: a target's rows (and its grades) are in memory while its
    summary and benchmark rows are built (and `observe` is told them), then spilled (report_stream.py) and
    dropped."""
    ri = ReportInputs.load(store, inputs)
    plan, mode, status = ri.plan, ri.plan.mode, params.status
    cells = inputs["cells"]          # the cells map as the journal holds it, or the digest of an object holding it
    if not isinstance(cells, str | dict):
        raise TypeError("the report's cells are a map of cells or the digest of an object holding one")
    source = CellSource(store, cast("dict[str, list[Any]] | str", cells), list(ri.targets))
    p = _pass(engine, ri, source, params, spill, ctx, memo, observe)
    unconfirmed = {t.target_id: evidence_limitation(t.target_id, t.config_hash_evidence) for t in p.targets}
    bench_rows = _final_rows(mode, p.bench, unconfirmed)
    summary_targets, states = p.targets, p.states
    total = sum(states.values())
    all_done = states["completed"] == total
    if plan.recovery:
        all_done = False                     # a child never completes the parent's evaluation
        summary_targets = [_with(t, {"sr_bench_score": None, "sr_bench_score_ci95": None,
                                     "score_scope": "recovery child: its selected cells only"})
                           for t in summary_targets]
    spend = [0.0 if mode == "replay" else t.total_cost_usd for t in summary_targets]
    price_correction, accounting_correction = _corrections(ri, params)
    report = Report(
        version=VERSION, report_version=REPORT_VERSION, run_id=params.run_id, status=status, mode=mode,
        name=plan.name, profile=plan.profile, cost_policy=plan.cost_policy,
        complete=bool(status == "completed" and all_done and mode == "live"),
        summary=ReportSummary(
            wall_time_s=params.wall_time_s, total_spend_usd=_sum_opt(spend),
            principal_cost_usd=_sum_opt([t.cost_usd for t in summary_targets]),
            judge_cost_usd=_sum_opt([t.judge_cost_usd for t in summary_targets]), **_aux(summary_targets),
            known_spend_usd=0.0 if mode == "replay" else _known_spend(summary_targets),
            planned_cells=total, targets=summary_targets),
        benchmarks=bench_rows, aggregation=AGGREGATION, results=None, recovery=plan.recovery,
        price_correction=price_correction, accounting_correction=accounting_correction,
        early_stop=params.early_stop, partial=partial_block(status, states), recipes=params.recipes,
        paired=_paired(plan, spill, status, params) if _pairs(plan) else None,
        limitations=limitations(plan, status, states, summary_targets) + published_limitations(bench_rows)
        + [x for x in unconfirmed.values() if x] + stop_limitations(params.early_stop)
        + recipe_limitations(params.recipes),
        provenance=_provenance(ri, p.receipts))
    # the same work in another store gives the same content digest (rows included, timings not):
    # content_digest(report | {"rows": rows}), hashed as the rows stream back in seq order
    results, digest = spill.finish(store, report.dump())
    out = report.model_copy(update={"results": results, "content_digest": digest}).dump()
    if p.volatile:        # a sandbox fault left cells ungraded: the next build grades them again
        raise Volatile(out)
    return out


def _paired(plan: Plan, spill: RowSpill, status: RunStatus, params: ReportParams) -> Paired | None:
    """The paired section: `compare` on the run itself, or the partial figure (stages/report/partial.py) of a
    run that ended without an answer in every cell."""
    if status in NEVER_FINISH:
        models = [ResultRow.model_validate(r) for r in spill.rows()]
        if needs_partial(status, models):
            return partial_paired(plan, models, status)
        del models
    return paired_in_run(plan, list(spill.rows()), status, params.run_id, params.early_stop)


def _pairs(plan: Plan) -> bool:
    """Whether paired_in_run has a section to build (it reads every row then)."""
    kinds = {pt.target.kind for pt in plan.targets}
    return plan.mode == "live" and "single" in kinds and "mom" in kinds


def _bench_rows(plan: Plan, cases: dict[str, Case], tid: str, built: list[CellRow]) -> list[_BenchRow]:
    """One target's benchmark rows (before the mode adjustments), each with its metric keys."""
    out = []
    for b in plan.dataset.benchmarks:
        sel = [x for x in built if x.row.benchmark == b]
        rs = [x.row for x in sel]
        k = sum(bool(r.correct) for r in rs)
        grades = [x.grade if x.row.grade else None for x in sel]
        metrics = get_benchmark(b).report_metrics(grades, [r.error_class for r in rs])
        done = sum(r.state == "completed" for r in rs)
        row = BenchmarkRow(benchmark=b, target_id=tid, total=len(rs), completed=done, correct=k,
                           accuracy=k / len(rs) if rs else None, accuracy_ci95=wilson(k, len(rs)),
                           accuracy_answered=k / done if done else None,
                           sr_bench_rule=grader_for(b, plan.grader_versions.get(b)), **metrics,
                           published=published_figure(b, plan.grader_versions.get(b),
                                                      [(r.case_id, r.correct) for r in rs], grades, cases))
        out.append((row.model_copy(update={"headline": headline(row)}), [*metrics, "published", "headline"]))
    return out


PREVIEW_NONE = ("accuracy", "accuracy_ci95", "accuracy_answered", "accuracy_answered_ci95", "macro_accuracy",
                "sr_bench_score", "sr_bench_score_ci95", "correct", "graded", "tokens", "cost_usd",
                "cache_neutral_cost_usd", "ttft_p50_s", "total_cost_usd", "judge_cost_usd")
ESTIMATED = ("accuracy", "accuracy_ci95", "accuracy_answered", "accuracy_answered_ci95", "macro_accuracy", "cost_usd", "cache_neutral_cost_usd",
             "latency_p50_s", "latency_p95_s", "ttft_p50_s", "tokens", "request_time_sum_s", "correct")


def _with(t: TargetSummary, update: dict[str, object]) -> TargetSummary:
    """`t` with `update` (validated: a field the summary does not declare is refused)."""
    return TargetSummary.model_validate(t.model_dump(exclude_unset=True) | update)


def adjust_for_mode(mode: str, t: TargetSummary, rows: list[ResultRow]) -> TargetSummary:
    """Preview measures no capability (IT-3); replay is an offline estimate (IT-4), never a measurement."""
    if mode == "preview":
        routing = [r.routing or {} for r in rows if r.state == "completed"]
        update: dict[str, object] = dict.fromkeys(PREVIEW_NONE)
        for name, key in (("models", "selected_model"), ("decisions", "decision"),
                          ("selection_statuses", "selection_status"), ("selection_reasons", "selection_reason")):
            update[name] = dict(sorted(Counter(str(x.get(key)) for x in routing if x.get(key) is not None).items()))
        return _with(t, update | {"known_cost_usd": 0.0})
    if mode == "replay":
        return _with(t, {"estimated_" + key: getattr(t, key) for key in ESTIMATED} | dict.fromkeys(ESTIMATED) | {
            "sr_bench_score": None, "sr_bench_score_ci95": None, "total_cost_usd": 0.0, "known_cost_usd": 0.0,
            "judge_cost_usd": 0.0,              # nothing was called: the saved judge verdicts are reused
            "estimated_tokens_by_role": t.tokens_by_role,
            "call_count": 0, "calls_by_role": {}, "tokens_by_role": {},      # no model was called (issue 27)
            "evidence_mode": "offline_estimate"})
    return t
