"""Grade: a rule from (grader@version, case, call record[, judge call record]) to a grade object.

For judged benchmarks the judge template digest is part of the key, so a template change regrades.
A truncated answer (finish_reason `length`) is never credited. A judge reply that is not valid
JSON with a known verdict fails the case (status `judge_error`).
"""

from __future__ import annotations

from typing import Any

from srbench.benchmarks import get as get_benchmark
from srbench.cas import ObjectStore
from srbench.errors import SrBenchError
from srbench.rules import Engine, Rule
from srbench.schemas.dataset import Case


def _grade(store: ObjectStore, inputs: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    case = Case.model_validate(store.get_json(inputs["case"]))
    call = store.get_json(inputs["call"])
    bench = get_benchmark(params["benchmark"])
    text = call.get("text") if call.get("status") == "completed" else None
    details: dict[str, Any] = {}
    if getattr(bench, "needs_judge", False):
        judge = store.get_json(inputs["judge"]) if inputs.get("judge") else None
        judge_text = judge.get("text") if judge and judge.get("status") == "completed" else None
        if judge is not None and judge_text is None:
            return {"kind": "grade", "schema": 1, "grader": params["grader"], "correct": False,
                    "status": "judge_failed", "extracted": None, "strict_format": None, "details": {}}
        try:
            g = bench.grade_judged(case, text, judge_text)
        except SrBenchError as exc:
            return {"kind": "grade", "schema": 1, "grader": params["grader"], "correct": False,
                    "status": "judge_error", "extracted": None, "strict_format": None,
                    "details": {"error": exc.message}}
        details = g.details
    else:
        g = bench.grade(case, text)
    if call.get("finish_reason") == "length" and g.correct:
        g.correct, g.status = False, "output_limit"
    return {"kind": "grade", "schema": 1, "grader": params["grader"], "correct": bool(g.correct),
            "status": g.status, "extracted": g.extracted, "strict_format": g.strict_format,
            "details": details}


GRADE = Rule("grade", "2", _grade)


def grade_cell(engine: Engine, case_digest: str, call_digest: str, benchmark: str,
               judge_digest: str | None = None, options: dict[str, Any] | None = None) -> tuple[str, bool]:
    """Returns (grade digest, cache hit). Code benchmarks are graded in the sandbox (stages/code_grade.py,
    with the plan's frozen `options`); that raises SandboxFault when the sandbox cannot grade."""
    bench = get_benchmark(benchmark)
    if getattr(bench, "needs_sandbox", False):
        from srbench.stages.code_grade import grade_code_cell

        return grade_code_cell(engine, case_digest, call_digest, benchmark, options)
    inputs = {"case": case_digest, "call": call_digest}
    params: dict[str, Any] = {"benchmark": benchmark, "grader": bench.grader_version}
    if getattr(bench, "needs_judge", False):
        inputs["judge"] = judge_digest
        params["judge_template_sha256"] = bench.judge_template_sha256
    r = engine.build(GRADE, inputs, params)
    return r.output, r.hit
