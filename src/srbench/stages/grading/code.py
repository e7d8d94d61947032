"""Code grades: a rule from (case, the cell's call record or turns, grading options, sandbox receipt)
to a grade, computed by running the benchmark's jobs in the sandbox.

The sandbox receipt's digest is part of the key (DEP-6), so another environment regrades; the full
receipt is kept in the grade. A sandbox fault raises `SandboxFault`: nothing is cached and the
report shows the cell as a grading failure (``sandbox_error``), never as the model's wrong answer.
The sandbox used is the process's (`current_sandbox`), opened on first use and reopened after a
failure.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, JsonValue

from srbench.benchmarks import get as get_benchmark
from srbench.benchmarks.code import CodeBenchmark, GradingOptions, Verdict
from srbench.cas import ObjectStore
from srbench.errors import InvalidInput
from srbench.rules import Engine, Rule, RuleInputs, RuleParams
from srbench.sandbox import Limits, Sandbox, SandboxFault, SandboxUnavailable, open_sandbox
from srbench.schemas.conversation import ConversationRecord
from srbench.schemas.dataset import Case
from srbench.schemas.grade import CodeGradeRecord, SavedCall

_LOCK = threading.Lock()
_SANDBOX: Sandbox | None = None


def current_sandbox() -> Sandbox:
    global _SANDBOX
    with _LOCK:
        if _SANDBOX is None:
            try:
                _SANDBOX = open_sandbox()
            except SandboxUnavailable as exc:
                raise SandboxFault(f"cannot grade code: {exc.message}", code="sandbox_error") from exc
        return _SANDBOX


def remote_slots() -> int | None:
    """How many jobs the process's sandbox runs elsewhere at once (a Ray cluster), if it is open and remote."""
    with _LOCK:
        return None if _SANDBOX is None else _SANDBOX.slots


def use_sandbox(sandbox: Sandbox | None) -> None:
    """Set (or with None, forget) the process's sandbox: tests and the benchmark script pick backends."""
    global _SANDBOX
    with _LOCK:
        _SANDBOX = sandbox


def base_limits(options: GradingOptions) -> Limits:
    extra = {"output_bytes": int(options["output_bytes"])} if "output_bytes" in options else {}
    return Limits(memory_mb=int(options.get("memory_mb", 1024)), wall_s=float(options.get("grade_timeout_s", 300)),
                  job_wall_s=float(options.get("step_timeout_s", options.get("grade_timeout_s", 60))),
                  cpu_s=int(options.get("grade_timeout_s", 300)), **extra)


def code_benchmark(benchmark_id: str) -> CodeBenchmark:
    """The registered benchmark `benchmark_id`, which must be graded in the sandbox."""
    bench = get_benchmark(benchmark_id)
    if not isinstance(bench, CodeBenchmark):
        raise InvalidInput(f"benchmark {benchmark_id} is not graded in the sandbox; grade it with its own grader")
    return bench


class _Turn(BaseModel):
    """One turn of an older multi-call cell's ``turns`` record (what grading reads of it)."""

    model_config = ConfigDict(extra="ignore", frozen=True, use_attribute_docstrings=True)
    call: str | None = None
    """The turn's call record (None or empty: the turn made no call)."""


class _Turns(BaseModel):
    """An older multi-call cell's record (kind ``turns``): its turns in order."""

    model_config = ConfigDict(extra="ignore", frozen=True, use_attribute_docstrings=True)
    calls: list[_Turn]
    """The turns."""


def call_texts(store: ObjectStore, record: Mapping[str, JsonValue],
               bench: CodeBenchmark | None = None) -> tuple[list[str | None], str | None]:
    """Each call's visible text (None when it did not complete) and the last finish reason. A multi-call
    cell's conversation record is read by its benchmark (`conversation_texts`)."""
    if record.get("kind") == "conversation" and bench is not None:
        return bench.conversation_texts(ConversationRecord.model_validate(record))
    if bench is not None and getattr(bench, "multi_call", False):
        raise SandboxFault(f"a {bench.id} cell must be a conversation record (one call per step), not one call: "
                           "this build's dispatch did not drive the conversation; nothing was graded")
    calls = [store.get_json(t.call) if t.call else {} for t in _Turns.model_validate(record).calls] \
        if record.get("kind") == "turns" else [record]
    read = [SavedCall.model_validate(c) for c in calls]
    return [c.answer() for c in read], (read[-1].finish_reason if read else None)


class CodeGradeInputs(BaseModel):
    """The ``code-grade`` rule's inputs (digests)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    case: str
    """The case object."""
    call: str
    """The cell's call record (or its conversation record)."""


class CodeGradeParams(BaseModel):
    """The ``code-grade`` rule's parameters: its action key, so another grader, option or sandbox regrades."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    benchmark: str
    """The cell's benchmark."""
    grader: str
    """Its grader and version."""
    options: GradingOptions
    """The benchmark's effective grading options (its own keys: limits, timeouts …)."""
    receipt: str
    """The digest of the sandbox's receipt under those options (DEP-6)."""


def _grade(store: ObjectStore, raw_inputs: RuleInputs, params: RuleParams) -> dict[str, JsonValue]:
    p = CodeGradeParams.model_validate(params)
    inputs = CodeGradeInputs.model_validate(raw_inputs)
    case = Case.model_validate(store.get_json(inputs.case))
    bench = code_benchmark(p.benchmark)
    options = p.options
    texts, finish = call_texts(store, store.get_json(inputs.call), bench)
    planned = bench.jobs(case, texts, options)
    jobs = planned.jobs
    receipt = None
    verdicts: list[Verdict] = []
    if jobs:
        sandbox = current_sandbox()
        limits = base_limits(options)
        got = sandbox.receipt(limits)
        if got.digest() != p.receipt:
            raise SandboxFault("the grading sandbox changed while grading; rebuild the report")
        receipt = got.model_dump(mode="json", by_alias=True)
        total = sum(float(j.wall_s or limits.job_wall_s) for j in jobs) + 15
        run = limits.model_copy(update={"wall_s": total})
        reports = sandbox.run_jobs([{"module": j.module, "input": j.input,
                                     "limits": run.child(float(j.wall_s or limits.job_wall_s))} for j in jobs],
                                   run, mounts=bench.mounts(options, got))
        for i, job in enumerate(jobs):       # jobs after an outer wall-limit stop have no report
            verdicts.append(bench.verdict({**reports[i], "module": job.module}) if i < len(reports) else
                            ("time_limit", {"reason": "the sandbox's wall limit ended the execution"}))
    g = bench.judge(case, verdicts, planned)
    if finish == "length" and g.correct:
        g.correct, g.status = False, "output_limit"
    return CodeGradeRecord(grader=p.grader, correct=bool(g.correct), status=g.status, extracted=g.extracted,
                           strict_format=g.strict_format, details=g.details, sandbox=receipt).stored()


CODE_GRADE = Rule("code-grade", "1", _grade)


def grade_code_cell(engine: Engine, case_digest: str, call_digest: str, benchmark: str,
                    options: Mapping[str, JsonValue] | None) -> tuple[str, bool]:
    """(grade digest, cache hit); raises SandboxFault when the sandbox cannot grade."""
    bench = code_benchmark(benchmark)
    effective = bench.options(options)
    receipt = current_sandbox().receipt(base_limits(effective)).digest()
    p = CodeGradeParams(benchmark=benchmark, grader=bench.grader_version, options=effective, receipt=receipt)
    r = engine.build(CODE_GRADE, CodeGradeInputs(case=case_digest, call=call_digest).model_dump(), p.model_dump())
    return r.output, r.hit
