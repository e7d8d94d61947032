"""The contract of a benchmark graded by running code in the sandbox (LiveCodeBench, SciCode).

A code benchmark turns (case, the model's reply texts — one per call of the cell) into sandbox jobs
(`jobs`), and the verdicts of those jobs into a grade (`judge`). Grading options (timeouts, memory)
come from ``default_options`` overlaid by the store's benchmark-options.json and are frozen into the
plan, so a grade is a function of (case, calls, options, sandbox receipt). ``grade`` (the plain
text-only grader) is refused: a code answer is never graded without the sandbox.
"""

from __future__ import annotations

from typing import Any, ClassVar

from srbench.benchmarks.base import Benchmark, Grade
from srbench.errors import InvalidInput
from srbench.sandbox.verdicts import lcb_verdict, script_verdict
from srbench.schemas.dataset import Case


class CodeBenchmark(Benchmark):
    needs_sandbox: ClassVar[bool] = True
    default_options: ClassVar[dict[str, Any]] = {}

    def grade(self, case: Case, text: str | None) -> Grade:
        raise InvalidInput(f"benchmark {self.id} is graded in the sandbox, not from the text alone")

    def options(self, given: dict[str, Any] | None) -> dict[str, Any]:
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

    def jobs(self, case: Case, texts: list[str | None], options: dict[str, Any]) -> tuple[list[dict[str, Any]], Any]:
        """(sandbox jobs, context for `judge`); no jobs means nothing runnable (graded failed)."""
        raise NotImplementedError

    def judge(self, case: Case, verdicts: list[tuple[str, dict[str, Any]]], context: Any) -> Grade:
        """The grade from each job's (verdict, details)."""
        raise NotImplementedError

    def verdict(self, job_report: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return (script_verdict if job_report.get("module") == "script_child.py" else lcb_verdict)(job_report)

    def mounts(self, options: dict[str, Any], receipt: Any = None) -> dict[str, str]:
        """Host files the sandbox (whose `receipt` is given) needs read-only, {sandbox path: host path}
        (SciCode's test data); raises SandboxFault when a needed file is not there."""
        return {}

    def conversation_texts(self, record: dict[str, Any]) -> tuple[list[str | None], str | None]:
        """(each reply's text, the finish reason that matters) from a multi-call cell's conversation
        record (``kind: conversation``); only multi-call code benchmarks have one."""
        raise InvalidInput(f"benchmark {self.id} is answered in one call")
