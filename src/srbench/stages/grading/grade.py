"""Grade: a rule from (grader@version, case, call record[, judge call record]) to a grade object.

For judged benchmarks the judge template digest is part of the key, so a template change regrades;
the grader is the one the plan pinned (the reference judge or the benchmark's official template).
A truncated answer (finish_reason `length`) is never credited. A judge reply that is not valid
under the pinned template fails the case (status `judge_error`).

A multi-call cell (a conversation record, stages/dispatch/conversations.py) is graded by the
benchmark's ``grade_conversation`` and ``published_conversation`` (rule ``grade-conversation``).

Beside sr-bench's own verdict every grade carries ``published``: the benchmark's upstream rule
applied to the same reply (published.py; None when the benchmark has none), a diagnostic that
costs no model call. Its rule id is part of the key, so changing that rule regrades too.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, JsonValue

from srbench.benchmarks import get as get_benchmark
from srbench.benchmarks.judge import JudgedBenchmark
from srbench.benchmarks.published_grades import PublishedGrade, published_json
from srbench.cas import ObjectStore
from srbench.errors import SrBenchError
from srbench.rules import Engine, Rule, RuleInputs, RuleParams
from srbench.schemas.conversation import ConversationRecord
from srbench.schemas.dataset import Case
from srbench.schemas.grade import GradeRecord, SavedCall
from srbench.stages.grading.code import grade_code_cell

_FROZEN = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class GradeInputs(BaseModel):
    """The ``grade`` rule's inputs (digests)."""

    model_config = _FROZEN
    case: str
    """The case object."""
    call: str
    """The cell's call record."""
    judge: str | None = None
    """A judged benchmark's judge call record (set, maybe None, only for a judged benchmark: part of its key)."""

    def key(self) -> dict[str, JsonValue]:
        """The inputs as the rule engine keys them (`judge` only where set)."""
        return self.model_dump(exclude_unset=True)


class ConversationGradeInputs(BaseModel):
    """The ``grade-conversation`` rule's inputs (digests)."""

    model_config = _FROZEN
    case: str
    """The case object."""
    conversation: str
    """The cell's conversation record."""


class GradeParams(BaseModel):
    """The ``grade`` rule's parameters: part of its action key, so a change of any of them regrades."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    benchmark: str
    """The cell's benchmark."""
    grader: str
    """The grader and its version (for a judged benchmark: the pinned judge template)."""
    published: str | None = None
    """The benchmark's upstream rule applied beside it (None: none)."""
    judge_template_sha256: str | None = None
    """A judged benchmark's template digest (absent from the key of any other benchmark)."""

    def key(self) -> dict[str, JsonValue]:
        """The parameters as the rule engine keys them (an unset field is absent)."""
        return self.model_dump(exclude_unset=True)


class ConversationGradeParams(BaseModel):
    """The ``grade-conversation`` rule's parameters (its action key)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    benchmark: str
    """The cell's benchmark."""
    grader: str
    """The benchmark's grader and its version."""
    published: str | None = None
    """The benchmark's upstream rule (None: none)."""
    published_conversation: str | None = None
    """Its upstream rule for a conversation (None: none)."""


def _failed(p: GradeParams, status: str, details: dict[str, JsonValue], published: PublishedGrade | None
            ) -> dict[str, JsonValue]:
    return GradeRecord(grader=p.grader, correct=False, status=status, extracted=None, strict_format=None,
                       details=details, published=published_json(published)).stored()


_CASES: dict[str, Case] = {}       # a case object's digest -> its model (objects never change under their digest)
CASES_KEPT = 4096


def read_case(store: ObjectStore, digest: str) -> Case:
    """The case object at `digest`, decoded once per process (the cells of one case share it: a run of T targets
    grades each case T times, and a grade reads the case before the call). Graders only read it."""
    got = _CASES.get(digest)
    if got is None:
        if len(_CASES) >= CASES_KEPT:
            _CASES.clear()
        got = _CASES[digest] = Case.model_validate(store.get_json(digest))
    return got


def _grade(store: ObjectStore, raw_inputs: RuleInputs, params: RuleParams) -> dict[str, JsonValue]:
    p = GradeParams.model_validate(params)
    inputs = GradeInputs.model_validate(raw_inputs)
    case = read_case(store, inputs.case)
    call = SavedCall.model_validate(store.get_json(inputs.call))
    bench = get_benchmark(p.benchmark)
    grader = p.grader
    text = call.answer()
    details: dict[str, JsonValue] = {}
    if isinstance(bench, JudgedBenchmark):
        judge = SavedCall.model_validate(store.get_json(inputs.judge)) if inputs.judge else None
        judge_text = judge.answer() if judge else None
        if judge is not None and judge_text is None:
            return _failed(p, "judge_failed", {}, bench.published_grade(case, text, None, grader))
        try:
            g = bench.grade_judged(case, text, judge_text, grader)
        except SrBenchError as exc:
            return _failed(p, "judge_error", {"error": exc.message},
                           bench.published_grade(case, text, None, grader))
        details = g.details
    else:
        g = bench.grade(case, text)
    published = bench.published_grade(case, text, g, grader)     # before the output-limit rule below
    if call.finish_reason == "length" and g.correct:
        g.correct, g.status = False, "output_limit"
    return GradeRecord(grader=grader, correct=bool(g.correct), status=g.status, extracted=g.extracted,
                       strict_format=g.strict_format, details=details, published=published_json(published)).stored()


GRADE = Rule("grade", "3", _grade)


def _grade_conversation(store: ObjectStore, raw_inputs: RuleInputs, params: RuleParams) -> dict[str, JsonValue]:
    """A multi-call cell: the benchmark grades its stored conversation record (pure)."""
    p = ConversationGradeParams.model_validate(params)
    inputs = ConversationGradeInputs.model_validate(raw_inputs)
    case = Case.model_validate(store.get_json(inputs.case))
    conversation = ConversationRecord.model_validate(store.get_json(inputs.conversation))
    bench = get_benchmark(p.benchmark)
    g = bench.grade_conversation(case, conversation)
    published = bench.published_conversation(case, conversation, g, p.grader)
    return GradeRecord(grader=p.grader, correct=bool(g.correct), status=g.status, extracted=g.extracted,
                       strict_format=g.strict_format, details=g.details, published=published_json(published)).stored()


GRADE_CONVERSATION = Rule("grade-conversation", "1", _grade_conversation)


def grader_for(benchmark: str, pinned: str | None = None) -> str:
    """The grader version a cell of `benchmark` is graded with: for a judged benchmark the plan's
    pinned template when the benchmark accepts it, else (and for every other benchmark) the
    installed grader, so a grader bump regrades old runs too."""
    bench = get_benchmark(benchmark)
    if isinstance(bench, JudgedBenchmark):
        return bench.judge_grader(pinned)
    return bench.grader_version


def grade_cell(engine: Engine, case_digest: str, call_digest: str, benchmark: str,
               judge_digest: str | None = None, grader: str | None = None,
               options: Mapping[str, JsonValue] | None = None, conversation: bool | None = None) -> tuple[str, bool]:
    """Returns (grade digest, cache hit). `grader` is the plan's pinned grader version, if any. Code
    benchmarks are graded in the sandbox (stages/grading/code.py, with the plan's frozen `options`);
    that raises SandboxFault when the sandbox cannot grade. A multi-call cell's `call_digest` names its
    conversation record (`conversation` True; None: read the object to know), graded by the
    benchmark's `grade_conversation` (rule ``grade-conversation``) unless the benchmark grades code
    in the sandbox, whose grader then receives the conversation record."""
    bench = get_benchmark(benchmark)
    if conversation is None:
        conversation = engine.store.get_json(call_digest).get("kind") == "conversation"
    if conversation and not getattr(bench, "needs_sandbox", False):
        cp = ConversationGradeParams(benchmark=benchmark, grader=bench.grader_version, published=bench.published_rule,
                                     published_conversation=getattr(bench, "published_conversation_rule", None))
        ci = ConversationGradeInputs(case=case_digest, conversation=call_digest)
        r = engine.build(GRADE_CONVERSATION, ci.model_dump(), cp.model_dump())
        return r.output, r.hit
    if getattr(bench, "needs_sandbox", False):
        return grade_code_cell(engine, case_digest, call_digest, benchmark, options)
    inputs = GradeInputs(case=case_digest, call=call_digest)
    version = grader_for(benchmark, grader)
    if isinstance(bench, JudgedBenchmark):
        inputs = GradeInputs(case=case_digest, call=call_digest, judge=judge_digest)
        p = GradeParams(benchmark=benchmark, grader=version, published=bench.published_rule_for(version),
                        judge_template_sha256=bench.template_sha256_for(version))
    else:
        p = GradeParams(benchmark=benchmark, grader=version, published=bench.published_rule)
    r = engine.build(GRADE, inputs.key(), p.key())
    return r.output, r.hit
