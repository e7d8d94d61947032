"""Grade: a rule from (grader@version, case, call record) to a grade object."""

from __future__ import annotations

from typing import Any

from srbench.benchmarks import get as get_benchmark
from srbench.cas import ObjectStore
from srbench.rules import Engine, Rule
from srbench.schemas.dataset import Case


def _grade(store: ObjectStore, inputs: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    case = Case.model_validate(store.get_json(inputs["case"]))
    call = store.get_json(inputs["call"])
    bench = get_benchmark(params["benchmark"])
    text = call.get("text") if call.get("status") == "completed" else None
    g = bench.grade(case, text)
    if call.get("finish_reason") == "length" and g.correct:
        # a truncated answer is never credited: the visible text may be a fragment
        g.correct, g.status = False, "output_limit"
    return {"kind": "grade", "schema": 1, "grader": params["grader"], "correct": bool(g.correct),
            "status": g.status, "extracted": g.extracted, "strict_format": g.strict_format}


GRADE = Rule("grade", "1", _grade)


def grade_cell(engine: Engine, case_digest: str, call_digest: str, benchmark: str) -> tuple[str, bool]:
    """Returns (grade digest, cache hit)."""
    bench = get_benchmark(benchmark)
    r = engine.build(GRADE, {"case": case_digest, "call": call_digest},
                     {"benchmark": benchmark, "grader": bench.grader_version})
    return r.output, r.hit
