"""Rules over finished runs: compare (IT-5), regrade (IT-6) and export (IT-7).

Each is a memoised rule whose inputs are object digests (reports, plans, call records), so asking
twice is a cache hit and a changed input rebuilds only what depends on it. None calls a model.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, JsonValue

from srbench import VERSION
from srbench.benchmarks import get as get_benchmark
from srbench.cas import ObjectStore
from srbench.errors import InvalidInput
from srbench.rules import Engine, Rule, RuleInputs, RuleParams
from srbench.schemas.comparison import Comparison, Provenance
from srbench.schemas.comparison_inputs import ComparedReport
from srbench.schemas.corrections import PriceCorrection
from srbench.schemas.dataset import Case
from srbench.schemas.derived import (
    Export,
    ExportAnswer,
    ExportCase,
    OfflineRegrade,
    RegradeBenchmark,
    RegradeRow,
    RegradeTarget,
    SavedReport,
    SavedRow,
)
from srbench.schemas.grade import GradeRecord, StoredGrade, read_grade
from srbench.schemas.plan import Plan
from srbench.stages.compare.build import COMPARE_VERSION, compare_reports
from srbench.stages.compare.declared import apply_declared, resolve_margin
from srbench.stages.compare.notes import annotate
from srbench.stages.datasets.build import decode_cases
from srbench.stages.derived.facts import RunFacts
from srbench.stages.derived.reprice import apply_prices
from srbench.stages.grading.grade import grade_cell
from srbench.stages.report.published import published_figure
from srbench.stages.report.results import all_rows

OFFLINE_KINDS = ("mcq", "grid")
_FROZEN = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class CompareInputs(BaseModel):
    """The ``compare`` rule's inputs."""

    model_config = _FROZEN
    baseline: str
    """Digest of the baseline run's report."""
    candidate: str
    """Digest of the candidate run's report."""


class CompareParams(BaseModel):
    """The ``compare`` rule's params."""

    model_config = _FROZEN
    margin: int | float | None
    """A post-hoc non-inferiority margin (None: the plan's, if it declares one)."""


class ReportInput(BaseModel):
    """The ``regrade`` and ``export`` rules' input."""

    model_config = _FROZEN
    report: str
    """Digest of the run's report."""


class RegradeParams(BaseModel):
    """The ``regrade`` rule's params: the installed graders and published rules (a change regrades)."""

    model_config = _FROZEN
    graders: dict[str, str]
    """The installed grader version per benchmark."""
    published: dict[str, list[str | None]]
    """Per benchmark: its published rule and its published conversation rule (None: none)."""
EXPORT_VERSION = "sr-bench-export-v1"
REGRADE_VERSION = "sr-bench-regrade-v2"


def _report(store: ObjectStore, digest: str) -> SavedReport:
    """The stored report as the derived rules read it."""
    return SavedReport.model_validate(store.get_json(digest))


def _rows(store: ObjectStore, report: SavedReport) -> list[SavedRow]:
    return [SavedRow.model_validate(r) for r in all_rows(store, report.results)]


def priced_plan(store: ObjectStore, report: SavedReport) -> Plan:
    """The plan with the prices the report used (a price correction replaces them)."""
    plan = Plan.model_validate(store.get_json(report.provenance.plan))
    fix = report.price_correction
    return apply_prices(plan, PriceCorrection.model_validate(store.get_json(fix.digest)) if fix else None)


def _compare(store: ObjectStore, raw_inputs: RuleInputs, raw_params: RuleParams) -> dict[str, JsonValue]:
    inputs, params = CompareInputs.model_validate(raw_inputs), CompareParams.model_validate(raw_params)
    b, c = store.get_json(inputs.baseline), store.get_json(inputs.candidate)
    bview, cview = SavedReport.model_validate(b), SavedReport.model_validate(c)
    cplan = priced_plan(store, cview)
    margin, source = resolve_margin(params.margin, cplan.statistics)
    out = compare_reports(b, all_rows(store, bview.results), priced_plan(store, bview), c,
                          all_rows(store, cview.results), cplan, margin=margin)
    out = annotate(apply_declared(out, source, cplan.statistics), ComparedReport.model_validate(b),
                   ComparedReport.model_validate(c))
    out = out.model_copy(update={"provenance": Provenance(baseline_report=inputs.baseline,
                                                          candidate_report=inputs.candidate)})
    return Comparison.model_validate(out.dump()).dump()        # the stored shape is the model's, validated


COMPARE = Rule("compare", COMPARE_VERSION + "+prices+notes-v2+declared-v2+unadjusted-v1+planning-v6", _compare)
# declared-v2: primary_adjusted; unadjusted-v1 (issue 43): an adjusted claim's claims_by_rule says `intervals: unadjusted`;
# planning-v2 (issue 43, item 7): a new plan's planning (stats/power.py, singles=K) predicts the simulation;
# planning-v3: the wealth's moments at the last prefix, a jump-scaled share of the crossing term, uneven bets
# planning-v4: the K step takes the router as the common control of the K claims (stats/singles.py)
# planning-v5: a new plan's inconclusive claim is also sized per benchmark (sized_for_effect, sized_for_margin)
# planning-v6: the earlier prefixes' share ρ(J, D) of P₁ (stats/power.py); the K step's bar by Newton's steps


def compare(engine: Engine, baseline_report: str, candidate_report: str, margin: float | None,
            subject: str) -> tuple[str, bool, str]:
    r = engine.build(COMPARE, CompareInputs(baseline=baseline_report, candidate=candidate_report).model_dump(),
                     CompareParams(margin=margin).model_dump(), subject=subject)
    return r.output, r.hit, r.explanation


def regrade(engine: Engine, run: RunFacts, original_report: str) -> tuple[str, bool, str]:
    """Re-grade the saved final answers with the current graders; zero model calls (IT-6)."""
    store = engine.store
    plan = Plan.model_validate(store.get_json(_report(store, original_report).provenance.plan))
    kinds = {b: get_benchmark(b).kind for b in plan.dataset.benchmarks}
    bad = sorted(b for b, k in kinds.items() if k not in OFFLINE_KINDS)
    if bad:
        raise InvalidInput(f"regrade is offline and supports multiple-choice and grid answers only (IT-6); "
                           f"{', '.join(bad)} cannot be regraded here", code="regrade_unsupported")
    if run.status in ("queued", "running"):
        raise InvalidInput(f"run {run.id} is still {run.status}; regrade a terminated run",
                           code="run_not_finished")
    graders = {b: get_benchmark(b).grader_version for b in kinds}
    # the published rules are part of the key: a changed rule regrades (before, a cache hit kept the old figures)
    published = {b: [get_benchmark(b).published_rule, getattr(get_benchmark(b), "published_conversation_rule", None)]
                 for b in kinds}

    def fn(st: ObjectStore, raw_inputs: RuleInputs, raw_params: RuleParams) -> dict[str, JsonValue]:
        inputs, params = ReportInput.model_validate(raw_inputs), RegradeParams.model_validate(raw_params)
        report = _report(st, inputs.report)
        p = Plan.model_validate(st.get_json(report.provenance.plan))
        cases = {c.id: c for c in decode_cases(st.get_bytes(p.dataset.object))}
        out: list[RegradeRow] = []
        grades: dict[str, StoredGrade | None] = {}
        for row in _rows(st, report):
            new, grades[row.cell_id] = _regrade_row(engine, st, cases, row)
            out.append(new)
        targets, benchmarks = _regrade_totals(p, out, grades, cases)
        return OfflineRegrade(
            version=VERSION, regrade_version=REGRADE_VERSION, run_id=report.run_id,
            grader_versions=params.graders, published_rules=params.published,
            original_grader_versions=p.grader_versions, original_report=inputs.report,
            results=out, changed_count=sum(r.changed for r in out),
            published_changed_count=sum(r.published_score != r.previous_published_score for r in out),
            targets=targets, benchmarks=benchmarks,
            note="offline regrade of the saved final answers under sr-bench's rules and, beside them, each "
                 "benchmark's published rule; the original results are unchanged").model_dump(mode="json", by_alias=True)

    r = engine.build(Rule("regrade", REGRADE_VERSION, fn), ReportInput(report=original_report).model_dump(),
                     RegradeParams(graders=graders, published=published).model_dump(), subject=run.id)
    return r.output, r.hit, r.explanation


def _regrade_row(engine: Engine, st: ObjectStore, cases: dict[str, Case],
                 row: SavedRow) -> tuple[RegradeRow, StoredGrade | None]:
    """One stored result row graded again (a completed answer), and its new grade (None without one)."""
    new_correct, status, grade = False, row.grade_status or row.state, None
    if row.state == "completed" and row.call:
        case = cases[row.case_id]
        g, _ = grade_cell(engine, st.put_json(case.model_dump(mode="json"), durable=False), row.call,
                          case.benchmark, conversation=bool(row.conversation))
        grade = read_grade(st.get_json(g))
        new_correct, status = grade.correct, grade.status
    was = bool(row.correct)
    score = (grade.published if isinstance(grade, GradeRecord) else None) or {}
    return RegradeRow(cell_id=row.cell_id, case_id=row.case_id, target_id=row.target_id,
                      benchmark=row.benchmark, correct=new_correct, status=status, previous_correct=was,
                      changed=was != new_correct,
                      published_score=score.get("score") if grade else row.published_score,
                      previous_published_score=row.published_score), grade


def _regrade_totals(p: Plan, out: list[RegradeRow], grades: dict[str, StoredGrade | None],
                    cases: dict[str, Case]) -> tuple[list[RegradeTarget], list[RegradeBenchmark]]:
    """The regrade's figures per target and per target and benchmark (with the published rule's)."""
    per_target: dict[str, list[RegradeRow]] = {}
    for r in out:
        per_target.setdefault(r.target_id, []).append(r)
    targets = [RegradeTarget(target_id=tid, total=len(rs), correct=sum(r.correct for r in rs),
                             accuracy=sum(r.correct for r in rs) / len(rs) if rs else None)
               for tid, rs in per_target.items()]
    benchmarks = []
    for tid, trs in per_target.items():
        for b in p.dataset.benchmarks:
            rs = [r for r in trs if r.benchmark == b]
            k = sum(bool(r.correct) for r in rs)
            benchmarks.append(RegradeBenchmark(
                benchmark=b, target_id=tid, total=len(rs), correct=k, accuracy=k / len(rs) if rs else None,
                published=published_figure(b, p.grader_versions.get(b), [(r.case_id, r.correct) for r in rs],
                                           [grades[r.cell_id] for r in rs], cases)))
    return targets, benchmarks


def export(engine: Engine, run: RunFacts, report_digest: str) -> tuple[str, bool, str]:
    """A training matrix of an explicitly dev-labelled, complete, rectangular run (IT-7)."""
    store = engine.store
    rep = _report(store, report_digest)
    plan = Plan.model_validate(store.get_json(rep.provenance.plan))
    if run.status != "completed":
        raise InvalidInput(f"export needs a completed run; {run.id} is {run.status}", code="export_refused")
    if plan.mode != "live":
        raise InvalidInput(f"export needs measured answers; {run.id} is a {plan.mode} run", code="export_refused")
    if plan.profile == "standard" or plan.dataset.split != "dev":
        raise InvalidInput("export refuses holdout data: only explicitly dev-labelled runs are exported (IT-7)",
                           code="export_refused")
    rows = _rows(store, rep)
    cases = {c.id: c for c in decode_cases(store.get_bytes(plan.dataset.object))}
    not_dev = [cid for cid, c in cases.items() if c.metadata.split != "dev"]
    if not_dev:
        raise InvalidInput(f"export refuses {len(not_dev)} case(s) whose split is not dev (first: {not_dev[0]})",
                           code="export_refused")
    targets = [pt.target.id for pt in plan.targets]
    if len(rows) != len(cases) * len(targets):
        raise InvalidInput("export needs a rectangular run (every case × every target)", code="export_refused")

    def fn(st: ObjectStore, raw_inputs: RuleInputs, params: RuleParams) -> dict[str, JsonValue]:
        report = _report(st, ReportInput.model_validate(raw_inputs).report)
        p = Plan.model_validate(st.get_json(report.provenance.plan))
        by_target = {pt.target.id: pt for pt in p.targets}
        answers: dict[str, list[ExportAnswer]] = {}
        for row in _rows(st, report):
            call = st.get_json(row.call) if row.call else {}
            pt = by_target[row.target_id]
            answers.setdefault(row.case_id, []).append(ExportAnswer(
                id=row.target_id, model=pt.target.model, kind=pt.target.kind,
                request_params=pt.effective_params, answer=call.get("text"), correct=row.correct,
                usage=row.usage, cost_usd=row.cost_usd, subject_latency_s=row.latency_s,
                selected_model=row.selected_model, final=row.state))
        matrix = [ExportCase(case_id=case.id, benchmark=case.benchmark, stratum=case.metadata.stratum,
                             split=case.metadata.split, messages=case.messages, targets=got)
                  for case, got in ((cases[cid], got) for cid, got in answers.items())]
        return Export(version=VERSION, export_version=EXPORT_VERSION, run_id=report.run_id, profile=p.profile,
                      plan_sha256=p.plan_sha256, cases=matrix,
                      note="dev data only; this export starts no training and holds no reference answers"
                      ).model_dump(mode="json", by_alias=True)

    r = engine.build(Rule("export", EXPORT_VERSION, fn), ReportInput(report=report_digest).model_dump(), {},
                     subject=run.id)
    return r.output, r.hit, r.explanation
