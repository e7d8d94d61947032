"""The contract of a benchmark graded by running code in the sandbox (LiveCodeBench, SciCode).

A code benchmark turns (case, the model's reply texts — one per call of the cell) into sandbox jobs
(`jobs`, a `CodeJobs`), and the verdicts of those jobs into a grade (`judge`). Grading options (timeouts, memory)
come from ``default_options`` overlaid by the store's benchmark-options.json and are frozen into the
plan, so a grade is a function of (case, calls, options, sandbox receipt). ``grade`` (the plain
text-only grader) is refused: a code answer is never graded without the sandbox.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from srbench.benchmarks.base import Benchmark, Grade
from srbench.errors import InvalidInput
from srbench.sandbox.verdicts import SandboxVerdict, lcb_verdict, script_verdict
from srbench.schemas.conversation import ConversationRecord
from srbench.schemas.dataset import Case
from srbench.schemas.wire import WireJSON

if TYPE_CHECKING:
    from srbench.sandbox.base import Receipt

GradingOptions: TypeAlias = dict[str, int | float | str]
"""A code benchmark's grading options (timeouts, limits, the test data's digest), frozen into the plan as JSON."""
Verdict: TypeAlias = tuple[SandboxVerdict, WireJSON]
"""One job's verdict (sandbox/verdicts.py) and its details as the sandbox child reported them."""


class SandboxJob(BaseModel):
    """One program the sandbox runs to grade a code answer."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)
    module: Literal["lcb_child.py", "script_child.py"]
    """The sandbox child (``sandbox/harness/<module>``) that runs it."""
    input: WireJSON
    """The child's job file: the program, its tests and environment (the sandbox's own payload)."""
    wall_s: float
    """The job's own wall limit in seconds."""


class LcbJobInput(BaseModel):
    """The job file ``lcb_child.py`` reads: one program and every test it must pass."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)
    mode: Literal["functional", "stdin"]
    """A method of ``class Solution`` called per test, or a program reading stdin."""
    fn_name: str | None
    """The method (functional only)."""
    code: str
    """The extracted program."""
    timeout: int
    """Seconds per test (upstream's per-test alarm)."""
    inputs: list[str]
    """Each test's input."""
    outputs: list[str]
    """Each test's expected output."""


class ScriptJobInput(BaseModel):
    """The job file ``script_child.py`` reads: a script run as ``__main__``, passed iff it exits 0."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)
    script: str
    """The script."""
    modules: dict[str, str]
    """Extra modules it imports, {dotted name: source}."""
    env: dict[str, str]
    """Environment variables set before it runs."""


class CodeJobs(BaseModel):
    """The sandbox jobs that grade one code answer, and what `CodeBenchmark.judge` needs to read their verdicts."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)
    jobs: tuple[SandboxJob, ...] = ()
    """The jobs, in order; none: nothing runnable (the grade is ``failed``)."""
    reason: str | None = Field(None, exclude_if=lambda v: v is None)
    """Why nothing runs (set only when there are no jobs)."""
    steps: tuple[str, ...] = ()
    """The step each job grades (SciCode: its step number; empty for a one-job benchmark)."""
    test_data_sha256: str | None = None
    """The SHA-256 of the test data the jobs read (SciCode's ``test_data.h5``), if any."""


class CodeBenchmark(Benchmark):
    needs_sandbox: ClassVar[bool] = True
    default_options: ClassVar[GradingOptions] = {}

    def grade(self, case: Case, text: str | None) -> Grade:
        raise InvalidInput(f"benchmark {self.id} is graded in the sandbox, not from the text alone")

    def options(self, given: Mapping[str, JsonValue] | None) -> GradingOptions:
        """The effective grading options: defaults overlaid by `given`; unknown keys refused."""
        given = dict(given or {})
        given.pop("grader_version", None)
        unknown = sorted(set(given) - set(self.default_options))
        if unknown:
            raise InvalidInput(f"benchmark-options for {self.id}: unknown keys {', '.join(unknown)}; "
                               f"known: {', '.join(sorted(self.default_options))}")
        out = dict(self.default_options)
        for key, value in given.items():
            default = self.default_options[key]
            if isinstance(default, int | float) and not isinstance(default, bool):
                if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                    raise InvalidInput(f"benchmark-options {self.id}.{key} must be a positive number")
            elif default is not None and not isinstance(value, type(default)):
                raise InvalidInput(f"benchmark-options {self.id}.{key} must be a {type(default).__name__}")
            out[key] = value
        return out

    def jobs(self, case: Case, texts: list[str | None], options: GradingOptions) -> CodeJobs:
        """The sandbox jobs for these replies; no jobs means nothing runnable (graded failed)."""
        raise NotImplementedError

    def judge(self, case: Case, verdicts: list[Verdict], planned: CodeJobs) -> Grade:
        """The grade from each job's (verdict, details), the jobs being `planned`."""
        raise NotImplementedError

    def verdict(self, job_report: WireJSON) -> Verdict:
        return (script_verdict if job_report.get("module") == "script_child.py" else lcb_verdict)(job_report)

    def mounts(self, options: GradingOptions, receipt: Receipt | None = None) -> dict[str, str]:
        """Host files the sandbox (whose `receipt` is given) needs read-only, {sandbox path: host path}
        (SciCode's test data); raises SandboxFault when a needed file is not there."""
        return {}

    def conversation_texts(self, record: ConversationRecord) -> tuple[list[str | None], str | None]:
        """(each reply's text, the finish reason that matters) from a multi-call cell's conversation
        record (``kind: conversation``); only multi-call code benchmarks have one."""
        raise InvalidInput(f"benchmark {self.id} is answered in one call")
