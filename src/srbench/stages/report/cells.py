"""One report row per planned cell: its state, call figures, cost and grade (stages/report/build.py).

`ReportInputs` is what every row of one report build reads (the plan with its price fix, the cases,
the targets with the re-attributed routers, the usage correction); `cell_row` turns one journal cell
(``[seq, case_id, target_id, state, call, error_class, judge_call?, ...]``) into its row, grading a
completed answer through the grade rule (memoised: a cell graded once, during the run or by an
earlier build, is a cache hit). A case is stored once per build, not once per cell.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

import orjson
from pydantic import JsonValue, TypeAdapter

from srbench.benchmarks import get as get_benchmark
from srbench.benchmarks import multi_call_benchmarks
from srbench.cas import ObjectStore
from srbench.cas.digest import canonical_json
from srbench.rules import Engine
from srbench.sandbox.base import SandboxFault
from srbench.schemas.call import Usage
from srbench.schemas.cell import CellState
from srbench.schemas.conversation import ConversationRecord
from srbench.schemas.corrections import PriceCorrection, UsageCorrection
from srbench.schemas.dataset import Case
from srbench.schemas.grade import CodeGradeRecord, StoredGrade, read_grade
from srbench.schemas.plan import Plan
from srbench.schemas.report_params import ReportDigests
from srbench.schemas.results import ResultRow, TurnRouting
from srbench.schemas.target import Target
from srbench.stages.datasets.decoded import cases_by_id
from srbench.stages.derived.reconcile import corrected_usage, with_routers
from srbench.stages.derived.replay import route_blocker
from srbench.stages.derived.reprice import apply_prices
from srbench.stages.grading.grade import grade_cell
from srbench.stages.plan.identity import scrub
from srbench.stages.report.conversations import AUX_FIELDS, CallView, conversation_row
from srbench.targets.accounting import call_cost


@dataclass
class ReportInputs:
    store: ObjectStore
    plan: Plan
    price_fix: PriceCorrection | None
    correction: UsageCorrection | None
    cases: dict[str, Case]
    targets: dict[str, Target]
    aux: dict[str, Target]
    fixed: dict[str, Usage]
    judge_for: dict[str, str]
    multi: set[str]
    digests: ReportDigests
    case_digests: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, store: ObjectStore, inputs: Mapping[str, object]) -> ReportInputs:
        """What every row reads, from the rule's inputs (their digests: the cells are not read here); the cases
        are the ones the run's dispatcher decoded while it holds them (`cases_by_id`: one copy, not three)."""
        d = ReportDigests.of(inputs)
        price_fix = PriceCorrection.model_validate(store.get_json(d.prices)) if d.prices else None
        plan = apply_prices(Plan.model_validate(store.get_json(d.plan)), price_fix)
        cases = cases_by_id(store, plan.dataset.object)
        targets = {pt.target.id: pt.target for pt in plan.targets}
        aux = {tid: pt.target for tid, pt in plan.auxiliary_targets.items()}
        correction = UsageCorrection.model_validate(store.get_json(d.correction)) if d.correction else None
        fixed = corrected_usage(correction) if correction else {}
        targets = with_routers(targets, correction.routers if correction else None)   # re-attributed offline
        judge_for = {b: o.judge for b, o in plan.benchmark_options.items() if o.judge}
        multi = multi_call_benchmarks(plan) if plan.mode == "live" else set()
        return cls(store, plan, price_fix, correction, cases, targets, aux, fixed, judge_for, multi, d)

    def load_call(self, digest: str) -> dict[str, JsonValue]:
        """A stored call record as JSON (pricing reads it so: targets/accounting.py), its usage corrected when
        the report reads a usage correction."""
        rec = self.store.get_json(digest)
        return {**rec, "usage": self.fixed[digest].model_dump()} if digest in self.fixed else rec

    def load_conversation(self, digest: str) -> ConversationRecord:
        """A multi-call cell's stored conversation record, validated (its calls are read by `load_call`)."""
        return ConversationRecord.model_validate(self.store.get_json(digest))

    def case_digest(self, case: Case) -> str:
        got = self.case_digests.get(case.id)
        if got is None:            # the build syncs once at its end
            got = self.case_digests[case.id] = self.store.put_json(case.model_dump(mode="json"), durable=False)
        return got


@dataclass
class CellRow:
    row: ResultRow
    turns: list[TurnRouting] | None = None          # a conversation cell's subject turns
    grade: StoredGrade | None = None
    receipt: dict[str, JsonValue] | None = None      # a sandbox receipt of its grade
    volatile: bool = False                           # a sandbox fault left it ungraded


class JournalCell(NamedTuple):
    """One cell as the journal lists it for the report (``[seq, case_id, target_id, state, call, error_class,
    judge_call?]``; the row built from it validates each value)."""

    seq: int
    case_id: str
    target_id: str
    state: CellState
    call: str | None
    error_class: str | None
    judge_call: str | None

    @classmethod
    def of(cls, cell: Sequence[Any]) -> JournalCell:
        """The journal's list, by name."""
        return cls(cell[0], cell[1], cell[2], cell[3], cell[4], cell[5], cell[6] if len(cell) > 6 else None)


def cell_row(engine: Engine, ri: ReportInputs, cell_id: str, cell: list[Any]) -> CellRow:
    """The report row of one cell (see the module docstring)."""
    store, plan = ri.store, ri.plan
    seq, case_id, target_id, state, call_digest, error_class, judge_digest = JournalCell.of(cell)
    case, target = ri.cases[case_id], ri.targets[target_id]
    row = ResultRow(
        cell_id=cell_id, seq=seq, case_id=case_id, target_id=target_id, benchmark=case.benchmark,
        stratum=case.metadata.stratum, state=state, error_class=error_class, call=call_digest,
        has_call=call_digest is not None, correct=None, grade=None, grade_status=None, usage=None, cost_usd=None,
        cache_neutral_cost_usd=None, latency_s=None, ttft_s=None, selected_model=None, response_model=None,
        decision=None, finish_reason=None, judge_call=judge_digest, judge_cost_usd=0.0, published_score=None,
        config_hash_seen=None)
    out = CellRow(row)
    pending: dict[str, object] = {}
    if judge_digest is not None:
        jc = call_cost(ri.aux[ri.judge_for[case.benchmark]], ri.load_call(judge_digest))
        row = row.model_copy(update={"judge_cost_usd": jc.cost_usd, "judge_usage": jc.usage})
    elif state == "ambiguous" and error_class == "ambiguous_judge_dispatch":
        row = row.model_copy(update={"judge_cost_usd": None})   # the judge call was in flight: it may have been billed
    if call_digest is not None and plan.mode == "preview":
        routing = store.get_json(call_digest).get("routing") or {}
        row = row.model_copy(update={
            "routing": routing, "selected_model": routing.get("selected_model"), "decision": routing.get("decision"),
            "cost_usd": 0.0, "cache_neutral_cost_usd": 0.0, "needs_real_run": route_blocker(routing)})
    elif call_digest is not None and case.benchmark in ri.multi:
        row, out.turns = conversation_row(row, ri.load_conversation(call_digest), target, ri.aux, ri.load_call)
    elif case.benchmark in ri.multi:           # no conversation record: ambiguous, or never sent
        row = row.model_copy(update={"conversation": True, "calls": None, "tokens_by_role": {},
                                     **{f: (None if state == "ambiguous" else 0.0) for f in AUX_FIELDS}})
    elif call_digest is not None:
        pending = _single_call(ri, target, call_digest)
    out.row = row
    if call_digest is not None and plan.mode != "preview" and state == "completed":
        _grade(engine, ri, out, case, call_digest, judge_digest, pending)
    elif pending:
        out.row = row.model_copy(update=pending)
    return out


def _single_call(ri: ReportInputs, target: Target, call_digest: str) -> dict[str, object]:
    """A single call's figures, and a router's attribution of it, as the update of its row (the row is copied
    once with its grade's: a copy is ~6 us, issue 42)."""
    call = ri.load_call(call_digest)
    view = CallView.model_validate(call)              # validated once: pricing reads the same view
    cc, headers, timings = call_cost(target, view), view.headers, view.timings
    update: dict[str, object] = {
        "usage": cc.usage, "cost_usd": cc.cost_usd, "cache_neutral_cost_usd": cc.cache_neutral_cost_usd,
        "cost_basis": cc.basis, "cost_unknown_reason": cc.reason, "priced_models": cc.models,
        "outside_pool": cc.outside_pool, "latency_s": timings.latency_s if timings else None,
        "ttft_s": timings.ttft_s if timings else None, "selected_model": headers.get("x-vsr-selected-model"),
        "decision": headers.get("x-vsr-selected-decision"), "response_model": view.response_model,
        "finish_reason": view.finish_reason, "http_status": view.http_status}
    if cc.attribution is None:
        return update
    a = cc.attribution                   # MoM: what its router adapter read from the call
    return update | {
        "router": a.router, "selected_model": a.selected_model, "served_models": a.served_models(),
        "deployment": a.deployment, "inference_calls": a.inference_calls, "retries": a.retries,
        "fallbacks": a.fallbacks, "router_reported_cost_usd": a.reported_cost_usd, "config_hash_seen": a.config_hash}


def _grading(plan: Plan, benchmark: str) -> dict[str, JsonValue] | None:
    """A code benchmark's frozen sandbox grading options (None: not a code benchmark)."""
    options = plan.benchmark_options.get(benchmark)
    return None if options is None else options.grading


def _grade(engine: Engine, ri: ReportInputs, out: CellRow, case: Case, call_digest: str,
           judge_digest: str | None, pending: dict[str, object]) -> None:
    """Grade a completed answer through the grade rule, and put the grade in its row (with `pending`, the row's
    update not made yet)."""
    plan, row = ri.plan, out.row
    try:
        g_digest, _ = grade_cell(engine, ri.case_digest(case), call_digest, case.benchmark, judge_digest,
                                 grader=plan.grader_versions.get(case.benchmark),
                                 options=_grading(plan, case.benchmark),
                                 conversation=case.benchmark in ri.multi)
    except SandboxFault as exc:     # not the model's failure: the cell is not graded
        out.volatile = True
        out.row = row.model_copy(update={**pending, "state": "failed", "error_class": "sandbox_error",
                                         "grade_status": "sandbox_error", "grade_error": exc.message})
        return
    g = out.grade = _stored_grade(ri.store, g_digest)[0]
    published = get_benchmark(case.benchmark).published_stored(case, g, plan.grader_versions.get(case.benchmark))
    update = {**pending, "correct": g.correct, "grade": g_digest, "grade_status": g.status,
              "published_score": published.score if published is not None else None}
    if isinstance(g, CodeGradeRecord) and g.sandbox:
        out.receipt = g.sandbox
    if g.status in ("judge_error", "judge_failed"):
        update |= {"state": "failed", "error_class": g.status, "correct": False}
    out.row = row.model_copy(update=update)


_TURNS = TypeAdapter(list[TurnRouting])

# a memoised row: (basis, row, row without its volatile fields, grade, turns), the last three JSON or None
MemoEntry = tuple[list[Any], str, str, str | None, str | None]


class RowMemo(Protocol):
    """Rows built before the report (service/runs/report_rows.py: as each cell finished). A cache of
    `cell_row`, the report rule's input cache: an entry counts only under the same context (`rule.row_context`) and the same
    basis (the cell's state, call, error class and judge call), so a hit is the row a cold build
    computes."""

    def rows(self, run_id: str, ctx: str, target_id: str) -> dict[str, MemoEntry]: ...


def basis(cell: list[Any]) -> list[Any]:
    """What of a journal cell its row depends on beyond its fixed seq, case and target."""
    return [cell[3], cell[4], cell[5], cell[6] if len(cell) > 6 else None]


def memo_entry(cell: list[Any], built: CellRow) -> MemoEntry:
    row = built.row.dump()
    return (basis(cell), canonical_json(row).decode(), canonical_json(scrub(row)).decode(),
            None if built.grade is None else _grade_text(built.row.grade, built.grade),
            None if built.turns is None else json.dumps([t.model_dump() for t in built.turns]))


def from_memo(cell: list[Any], entry: MemoEntry) -> CellRow | None:
    """The memoised row of `cell`, or None when it does not hold (another basis). The objects it
    names are there: they were durable before it was recorded, and `gc` keeps what `report_rows`
    names (service/store/maintenance.py)."""
    got_basis, row, _, grade, turns = entry
    if got_basis != basis(cell):
        return None
    # orjson: the same values as json.loads, ~4x faster (a 40k-cell report decodes 80k of these)
    out = CellRow(ResultRow.model_validate_json(row), None if turns is None else _TURNS.validate_json(turns),
                  None if grade is None else _memo_grade(grade))
    if isinstance(out.grade, CodeGradeRecord) and out.grade.sandbox:
        out.receipt = out.grade.sandbox
    return out


_STORED: dict[str, list[Any]] = {}      # a grade object's digest -> [its model, its memo JSON or None]


def _stored_grade(store: ObjectStore, digest: str) -> list[Any]:
    """A grade object's model, read once per distinct grade object (a process grading many cells reads a
    multiple-choice benchmark's few grades again and again; the model is frozen and shared)."""
    got = _STORED.get(digest)
    if got is None:
        if len(_STORED) >= GRADES_KEPT:
            _STORED.clear()
        got = _STORED[digest] = [read_grade(store.get_json(digest)), None]
    return got


def _grade_text(digest: str | None, grade: StoredGrade) -> str:
    """A memo row's grade JSON, made once per grade object when `grade` is the model read for it."""
    got = _STORED.get(digest) if digest is not None else None
    if got is None or got[0] is not grade:
        return json.dumps(grade.stored())
    if got[1] is None:
        got[1] = json.dumps(grade.stored())
    return str(got[1])


_GRADES: dict[str, StoredGrade] = {}        # a grade's stored JSON -> its model (frozen), shared by the rows that have it
GRADES_KEPT = 4096


def _memo_grade(text: str) -> StoredGrade:
    """A memo row's grade as its model, read once per distinct grade: grades repeat across cells (a
    multiple-choice benchmark's few letters), and reading one took ~10 % of a report from memo rows."""
    got = _GRADES.get(text)
    if got is None:
        if len(_GRADES) >= GRADES_KEPT:
            _GRADES.clear()
        got = _GRADES[text] = read_grade(orjson.loads(text))
    return got
